/**
 * The wordings side of the routing index (`tool-index.ts`): storing a partition's wordings, one
 * record each, and the re-check that holds back those that would push another tool's served
 * requests out of the offered set (`wordings-guard.ts`).
 */
import { Document } from "@langchain/core/documents";
import type { VectorStore } from "@langchain/core/vectorstores";
import type { RoutingVector } from "./card-vectors.js";
import { wordingId, wordingPartition } from "./tool-index-ids.js";
import { type Wording, wordingKey } from "./wordings.js";
import { guardSample, type GuardCase, type HeldWording, heldBackWordings } from "./wordings-guard.js";

/** What the index lends these functions: its store and its own embedding, writing and search. */
export interface WordingsHost {
  store: VectorStore;
  bump(): void;
  embed(texts: string[]): Promise<RoutingVector[]>;
  write(vectors: RoutingVector[], docs: Document[], ids: string[]): Promise<void>;
  /** Hits for a vector under a filter: tool, cosine similarity, the record's text. */
  search(vector: RoutingVector, k: number, filter: Record<string, string>): Promise<[string, number, string][]>;
}

/** The part of a partition's index state the wordings read and write. */
export interface WordingsState {
  textHash: Map<string, string>;
  parts: Map<string, number>;
  wordings: Map<string, Map<string, string>>;
  wordingCount: number;
}

/**
 * Wording hits read per routed request: a tool's wording term is the sum of its best wordings
 * among them. Fixed, so that one request gets the same terms whatever the `k` asked.
 */
export const WORDING_HITS = 400;

/** Records embedded and written to the store at a time. */
const WRITE_BATCH = 500;

/** Stores the wordings `wanted` in place of the partition's, changing only what differs. */
export async function writeWordings(
  host: WordingsHost,
  partition: string,
  state: WordingsState,
  wanted: ReadonlyMap<string, readonly Wording[]>,
): Promise<void> {
  const gone: { tool: string; key: string }[] = [];
  for (const [tool, kept] of state.wordings) {
    const keys = new Set((wanted.get(tool) ?? []).map((w) => w.key));
    for (const key of kept.keys()) if (!keys.has(key)) gone.push({ tool, key });
  }
  const added: { tool: string; wording: Wording }[] = [];
  for (const [tool, list] of wanted) {
    if (!state.textHash.has(tool)) continue;
    const kept = state.wordings.get(tool);
    for (const wording of list) if (!kept?.has(wording.key)) added.push({ tool, wording });
  }
  if (gone.length === 0 && added.length === 0) return;
  host.bump();
  if (gone.length > 0) {
    await host.store.delete({ ids: gone.map((g) => wordingId(partition, g.tool, g.key)) });
    for (const { tool, key } of gone) {
      state.wordings.get(tool)?.delete(key);
      state.wordingCount -= 1;
    }
  }
  const filter = wordingPartition(partition);
  for (let start = 0; start < added.length; start += WRITE_BATCH) {
    const batch = added.slice(start, start + WRITE_BATCH);
    const docs = batch.map(
      ({ tool, wording }) =>
        new Document({ pageContent: wording.text, metadata: { partition: filter, tool, kind: "wording" } }),
    );
    const vectors = await host.embed(batch.map((b) => b.wording.text));
    await host.write(
      vectors,
      docs,
      batch.map((b) => wordingId(partition, b.tool, b.wording.key)),
    );
    for (const { tool, wording } of batch) {
      let kept = state.wordings.get(tool);
      if (!kept) state.wordings.set(tool, (kept = new Map()));
      kept.set(wording.key, wording.text);
      state.wordingCount += 1;
    }
  }
  host.bump();
}

/**
 * Stores `wanted`, then holds back what the re-check finds (see `wordings-guard.ts`): up to
 * `check` stored wordings are routed as requests, each without itself; the wordings that push a
 * request's own tool out of the first `k` its card gave it are removed again. Returns them.
 */
export async function writeGuardedWordings(
  host: WordingsHost,
  partition: string,
  state: WordingsState,
  wanted: ReadonlyMap<string, readonly Wording[]>,
  options: { k: number; best: number; check: number },
): Promise<HeldWording[]> {
  await writeWordings(host, partition, state, wanted);
  if (options.check <= 0 || state.wordingCount === 0) return [];
  const sample = guardSample(state.wordings, options.check);
  const vectors = await host.embed(sample.map((s) => s.text));
  const parts = [...state.parts.values()].reduce((a, b) => a + b, 0);
  const cases: GuardCase[] = [];
  for (let i = 0; i < sample.length; i++) {
    const cards = new Map<string, number>();
    for (const [tool, score] of await host.search(vectors[i], parts, { partition }))
      if (!(cards.get(tool)! >= score)) cards.set(tool, score);
    const hits = await host.search(vectors[i], Math.min(state.wordingCount, WORDING_HITS), {
      partition: wordingPartition(partition),
    });
    cases.push({
      owner: sample[i].tool,
      key: sample[i].key,
      cards,
      hits: hits.map(([tool, score, text]) => ({ tool, key: wordingKey(text), score })),
    });
  }
  const held = heldBackWordings(cases, options);
  if (held.length === 0) return [];
  const out = new Set(held.map((h) => `${h.tool}\u0000${h.key}`));
  const kept = new Map<string, Wording[]>();
  for (const [tool, list] of wanted)
    kept.set(
      tool,
      list.filter((w) => !out.has(`${tool}\u0000${w.key}`)),
    );
  await writeWordings(host, partition, state, kept);
  return held;
}
