/**
 * What serving keeps per ledger across turns: the routing index and router over it, the rule
 * retriever, and which partitions have the agent's tools registered. Made once per adapter
 * instance; nothing here is process-wide.
 */
import type { BaseStore } from "@langchain/langgraph";
import type { FailureReporter } from "../failure.js";
import type { ToolSource } from "../ledger/cards.js";
import { Ledger } from "../ledger/ledger.js";
import { unwrapStore } from "../ledger/on-store.js";
import { registerTools } from "../learn/register.js";
import { ToolRouter } from "../routing/router.js";
import { ToolIndex } from "../routing/tool-index.js";
import { LessonRetriever } from "../rules/retriever.js";
import { DEFAULT_SERVE, type ServeOptions } from "./options.js";

/** Normal-priority rules retrieved per request. */
const RETRIEVED_RULES = 3;

/** Partitions whose registration is remembered per ledger; the oldest is forgotten past it. */
const KEPT_PARTITIONS = 10_000;

/** The per-ledger caches of serving. */
export class ServeBackends {
  private readonly indexes = new WeakMap<Ledger, ToolIndex>();
  private readonly routers = new WeakMap<ToolIndex, ToolRouter>();
  private readonly retrievers = new WeakMap<Ledger, LessonRetriever>();
  private readonly registered = new WeakMap<Ledger, Map<string, string>>();
  private readonly storeLedgers = new WeakMap<BaseStore, Ledger>();

  constructor(
    private readonly options: ServeOptions,
    private readonly reporter: FailureReporter,
    private readonly ledgerFor?: (store: BaseStore | undefined) => Ledger | undefined,
  ) {}

  /** The ledger of a run: the app's choice when an app owns this server, else the options', else one per run's store. */
  ledger(store: BaseStore | undefined): Ledger | undefined {
    if (this.ledgerFor) return this.ledgerFor(store);
    if (this.options.ledger || !store) return this.options.ledger;
    const unwrapped = unwrapStore(store);
    let ledger = this.storeLedgers.get(unwrapped);
    if (!ledger) {
      ledger = new Ledger(unwrapped, { failureSink: this.options.failureSink });
      this.storeLedgers.set(unwrapped, ledger);
    }
    return ledger;
  }

  index(ledger: Ledger): ToolIndex {
    const given = this.options.index;
    if (given && given.ledger.store === ledger.store) return given;
    let index = this.indexes.get(ledger);
    if (!index) {
      index = new ToolIndex({ ledger });
      this.indexes.set(ledger, index);
    }
    return index;
  }

  /** The router of a run: the options', else one per ledger. */
  router(ledger: Ledger | undefined): ToolRouter | undefined {
    if (this.options.router) return this.options.router;
    if (!ledger) return undefined;
    const index = this.index(ledger);
    let router = this.routers.get(index);
    if (!router) {
      router = new ToolRouter({
        index,
        maxTools: this.options.maxTools ?? DEFAULT_SERVE.maxTools,
        alwaysInclude: this.options.alwaysInclude ?? DEFAULT_SERVE.alwaysInclude,
        // A skipped turn is reported by serving itself; routing another partition's tools is the router's to say.
        failureSink: (failure) => {
          if (failure.kind !== "routing_skipped")
            this.reporter.report(failure.kind, failure.message, failure.error, failure.context);
        },
      });
      this.routers.set(index, router);
    }
    return router;
  }

  retriever(ledger: Ledger): LessonRetriever {
    let retriever = this.retrievers.get(ledger);
    if (!retriever) {
      retriever = new LessonRetriever({ ledger, k: RETRIEVED_RULES });
      this.retrievers.set(ledger, retriever);
    }
    return retriever;
  }

  /** True when the tools need registering in the partition (never seen, or the tool set changed). */
  needsRegistering(ledger: Ledger, partition: string, tools: readonly ToolSource[]): boolean {
    if (!(this.options.register ?? DEFAULT_SERVE.register) || tools.length === 0) return false;
    return this.registered.get(ledger)?.get(partition) !== signatureOf(tools);
  }

  /**
   * Register the tools in the partition (cards that exist and did not change are kept as they
   * are) and bring the router's index up to date with the changed ones.
   */
  async register(ledger: Ledger, router: ToolRouter | undefined, partition: string, tools: readonly ToolSource[]) {
    const result = await registerTools(ledger, [...tools], { partition });
    const changed = [...result.registered, ...result.updated];
    if (changed.length > 0 && router) {
      try {
        await router.index.upsertCards(partition, await ledger.getCards(partition, changed));
      } catch {
        // The index reads the partition whole on its next route; if that fails too, routing says so.
      }
    }
    const seen = this.registered.get(ledger) ?? new Map<string, string>();
    this.registered.set(ledger, seen);
    seen.delete(partition);
    seen.set(partition, signatureOf(tools));
    // Forgetting a partition only costs a re-registration that writes nothing.
    if (seen.size > KEPT_PARTITIONS) seen.delete(seen.keys().next().value as string);
  }
}

function signatureOf(tools: readonly ToolSource[]): string {
  return tools
    .map((t) => t.name)
    .sort()
    .join("\u0000");
}
