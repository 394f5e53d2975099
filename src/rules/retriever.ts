/**
 * Normal-priority rules on demand: a LangChain retriever over the lessons that are not pinned
 * into the prompt. It keeps its own vector store (derived from the ledger, rebuilt from it at any
 * time), brought up to date with the ledger's rules on each query, and filters every search by
 * partition: the caller's own and the shared scope, nothing else.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { ensureConfig, type RunnableConfig } from "@langchain/core/runnables";
import type { VectorStore } from "@langchain/core/vectorstores";
import { createHash } from "node:crypto";
import { LexicalEmbeddings } from "../routing/lexical-embeddings.js";
import { InMemoryVectorIndex } from "../routing/memory-vector-store.js";
import { encodeLabel } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Rule } from "../ledger/schema.js";
import { type CallerSources, partitionOf, type PartitionSpec, toResolver } from "../caller/partition.js";
import { isPinned, SHARED_SCOPE, scopeOf } from "./model.js";

/** Options of {@link LessonRetriever}. */
export interface LessonRetrieverOptions extends BaseRetrieverInput {
  /** The ledger the rules are read from. */
  ledger: Ledger;
  /**
   * Rules returned per request.
   * @default 4
   */
  k?: number;
  /**
   * Leave out rules scoring below this (cosine similarity).
   * @default 0.05
   */
  minScore?: number;
  /**
   * Embeddings of rule texts and requests. Any LangChain `Embeddings` works.
   * @default new LexicalEmbeddings({ dimension: 2048 }) (offline)
   */
  embeddings?: EmbeddingsInterface;
  /**
   * Makes the vector store; scores must be similarities (higher is better). Every document
   * carries `partition`, `tool`, `kind: "rule"` and `id` metadata.
   * @default (embeddings) => new InMemoryVectorIndex(embeddings)
   */
  vectorStore?: (embeddings: EmbeddingsInterface) => VectorStore;
  /**
   * Names the caller's partition: a resolver, or a namespace template such as
   * `"t:{tenant_id}/u:{user_id}"`. Unset, `tenant_id` / `user_id` / `agent_id` are read from the
   * run's `metadata`, `configurable` and v1 `context`, like every other piece of the package
   * (see `docs/partitions.md`).
   * @default partitionOf(config)
   */
  partition?: PartitionSpec;
}

/** The defaults of {@link LessonRetrieverOptions} (`embeddings` is made per retriever; `partition` has no resolver of its own). */
export const DEFAULT_LESSON_RETRIEVER: Readonly<
  Required<Pick<LessonRetrieverOptions, "k" | "minScore" | "vectorStore">>
> = Object.freeze({
  k: 4,
  minScore: 0.05,
  vectorStore: (embeddings: EmbeddingsInterface): VectorStore => new InMemoryVectorIndex(embeddings),
});

/** Dimension of the default embeddings: rules are short. */
const DEFAULT_DIMENSION = 2048;

/** Per-call options of {@link LessonRetriever.retrieve}. */
export interface RetrieveOptions {
  /** The caller's partition. */
  partition: string;
  /** Only this tool's rules. @default every tool */
  tool?: string;
  /** @default the retriever's k */
  k?: number;
}

/**
 * Normal-priority rules relevant to a request, as a LangChain `BaseRetriever`: `invoke(request,
 * config)` returns one `Document` per rule (`pageContent` is the rule; `metadata: { kind: "rule",
 * id, tool, priority, source, scope, score }`), best first, from the caller's partition (read from
 * the run's config) and the shared scope. Callbacks and tracing work as for any retriever.
 * Pinned (critical and high) rules are not served here: the prompt block carries them.
 */
export class LessonRetriever extends BaseRetriever {
  static override lc_name(): string {
    return "LessonRetriever";
  }

  override lc_namespace = ["tool_lessons", "rules"];

  readonly ledger: Ledger;
  readonly k: number;
  readonly minScore: number;
  readonly store: VectorStore;
  private readonly resolver: PartitionSpec | undefined;
  /** Per partition: the rule ids indexed and a hash of what each was indexed from. */
  private readonly indexed = new Map<string, Map<string, string>>();
  /** The partition of the `invoke` in progress (several may run at once). */
  private readonly caller = new AsyncLocalStorage<string>();

  constructor(options: LessonRetrieverOptions) {
    super(options);
    this.ledger = options.ledger;
    this.k = options.k ?? DEFAULT_LESSON_RETRIEVER.k;
    this.minScore = options.minScore ?? DEFAULT_LESSON_RETRIEVER.minScore;
    toResolver(options.partition); // a malformed template is refused here, not at the first request
    this.resolver = options.partition;
    const embeddings = options.embeddings ?? new LexicalEmbeddings({ dimension: DEFAULT_DIMENSION });
    this.store = (options.vectorStore ?? DEFAULT_LESSON_RETRIEVER.vectorStore)(embeddings);
  }

  /** The rules relevant to `request` in the caller's partition (from `config`) and the shared scope. */
  override async invoke(input: string, options?: RunnableConfig & CallerSources): Promise<DocumentInterface[]> {
    const partition = partitionOf(
      { ...ensureConfig(options), ...(options?.context ? { context: options.context } : {}) },
      this.resolver,
    );
    return this.caller.run(partition, () => super.invoke(input, options));
  }

  override async _getRelevantDocuments(
    query: string,
    _runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document[]> {
    const partition = this.caller.getStore() ?? partitionOf({}, this.resolver);
    return this.retrieve(query, { partition });
  }

  /**
   * The normal-priority rules relevant to `request`, best first, from `partition` and the shared
   * scope, brought up to date with the ledger first.
   */
  async retrieve(request: string, options: RetrieveOptions): Promise<Document[]> {
    const k = options.k ?? this.k;
    if (k <= 0) return [];
    const homes = options.partition === SHARED_SCOPE ? [SHARED_SCOPE] : [options.partition, SHARED_SCOPE];
    await Promise.all(homes.map((p) => this.sync(p)));
    const hits = (
      await Promise.all(
        homes.map((partition) =>
          this.store.similaritySearchWithScore(request, k, {
            partition,
            kind: "rule",
            ...(options.tool !== undefined ? { tool: options.tool } : {}),
          }),
        ),
      )
    ).flat();
    return hits
      .filter(([, score]) => score >= this.minScore)
      .sort((a, b) => b[1] - a[1] || String(a[0].metadata.id).localeCompare(String(b[0].metadata.id)))
      .slice(0, k)
      .map(([doc, score]) => new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata, score } }));
  }

  /** Bring a partition's indexed rules in line with the ledger: add what is new or changed, drop what is gone. */
  async sync(partition: string): Promise<void> {
    const rules = (await this.ledger.listRules(partition)).filter((r) => !isPinned(r));
    const before = this.indexed.get(partition) ?? new Map<string, string>();
    const now = new Map(rules.map((r) => [r.id, hashRule(r)]));
    const gone = [...before.keys()].filter((id) => !now.has(id));
    const changed = rules.filter((r) => before.get(r.id) !== now.get(r.id));
    if (gone.length > 0) await this.store.delete({ ids: gone.map((id) => docId(partition, id)) });
    if (changed.length > 0) {
      await this.store.addDocuments(
        changed.map(
          (r) =>
            new Document({
              pageContent: r.rule,
              metadata: {
                partition,
                kind: "rule",
                id: r.id,
                tool: r.tool,
                priority: r.priority,
                source: r.source,
                scope: scopeOf(r),
              },
            }),
        ),
        { ids: changed.map((r) => docId(partition, r.id)) },
      );
    }
    this.indexed.set(partition, now);
  }
}

/** The caller's partition of a run, as every piece reads it (src/caller/partition.ts; kept here for old imports). */
export { partitionOf };

function hashRule(rule: Rule): string {
  return createHash("sha1").update(rule.tool).update("\u0000").update(rule.rule).update(rule.priority).digest("hex");
}

function docId(partition: string, id: string): string {
  return `${encodeLabel(partition)}/${id}`;
}
