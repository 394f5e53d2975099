/**
 * Several embeddings as one: each part's vector is L2-normalised, scaled by the square root of
 * its weight share and concatenated, so the cosine of two blended vectors is the weighted sum of
 * the parts' cosines. Used to add word-vector semantics to lexical routing.
 */
import { Embeddings, type EmbeddingsInterface } from "@langchain/core/embeddings";
import { InvalidInput } from "../errors.js";
import { norm } from "../internal.js";
import { addToMean, centered } from "./card-vectors.js";
import { LexicalEmbeddings } from "./lexical-embeddings.js";
import { denseOf, isSparse, type SparseVector } from "./sparse-vector.js";
import { embedsAs, ownLexical } from "./tool-index-ids.js";

/** One part of a blend. */
export interface BlendPart {
  /** The embeddings of this part. */
  embeddings: EmbeddingsInterface;
  /** Its weight (any positive number; weights are divided by their sum). */
  weight: number;
}

/** Options of {@link BlendedEmbeddings}. */
export interface BlendedEmbeddingsOptions {
  /** The parts, in the order their vectors are concatenated. At least one. */
  parts: readonly BlendPart[];
  /**
   * When the routing index fits the blend on a partition's routing texts, take the mean of each
   * other (not lexical) part's vectors over those texts off that part's vectors. Averaged word
   * vectors and many sentence encoders put every text in one narrow cone (two unrelated MetaTool
   * requests have a GloVe cosine of about 0.69, two of one tool about 0.79); centred, unrelated
   * texts score near 0, so a tool's many kept wordings no longer lift it over others by their
   * number alone.
   * @default false
   */
  center?: boolean;
}

/**
 * Embeddings with a part the routing index fits on each partition's routing texts, as it fits its
 * own lexical embeddings: {@link BlendedEmbeddings} with an unfitted {@link LexicalEmbeddings} part.
 */
export interface PartitionFittedEmbeddings extends EmbeddingsInterface {
  /** Embeddings fitted on these texts (a partition's routing texts); the instance itself is unchanged. */
  fittedOn(texts: readonly string[]): EmbeddingsInterface;
  /** True when {@link PartitionFittedEmbeddings.fittedOn} fits anything (else the instance is used as it is). */
  readonly fitsPerPartition: boolean;
}

/** True for embeddings the index should fit per partition (see {@link PartitionFittedEmbeddings}). */
export function fitsPerPartition(embeddings: EmbeddingsInterface): embeddings is PartitionFittedEmbeddings {
  const e = embeddings as Partial<PartitionFittedEmbeddings>;
  return typeof e.fittedOn === "function" && e.fitsPerPartition === true;
}

/**
 * The weights measured best on MetaTool for lexical + GloVe word vectors (see
 * `bench/embeddings.ts`): 0.7 lexical, 0.3 semantic.
 */
export const DEFAULT_BLEND_WEIGHTS: Readonly<{ lexical: number; semantic: number }> = Object.freeze({
  lexical: 0.7,
  semantic: 0.3,
});

/**
 * A part's embeddings with the mean of its (normalised) vectors over a partition's texts taken
 * off every vector; the mean is computed at the first embedding, once (again after a failure).
 */
class CenteredEmbeddings extends Embeddings {
  private mean: Promise<number[]> | undefined;

  constructor(
    private readonly inner: EmbeddingsInterface,
    private readonly texts: readonly string[],
  ) {
    super({});
  }

  private centre(): Promise<number[]> {
    this.mean ??= this.inner
      .embedDocuments([...this.texts])
      .then((vectors) => addToMean(undefined, vectors, vectors.length) ?? []);
    this.mean.catch(() => {
      this.mean = undefined;
    });
    return this.mean;
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    const [mean, vectors] = await Promise.all([this.centre(), this.inner.embedDocuments(documents)]);
    return vectors.map((v) => minusMean(v, mean));
  }

  async embedQuery(document: string): Promise<number[]> {
    const [mean, vector] = await Promise.all([this.centre(), this.inner.embedQuery(document)]);
    return minusMean(vector, mean);
  }
}

/** `unit(v) - mean`, the way the index centres examples (`card-vectors.ts`); an all-zero vector stays zero. */
function minusMean(v: number[], mean: readonly number[]): number[] {
  return mean.length !== v.length || norm(v) === 0 ? v : centered(v, mean, 1);
}

/**
 * The parts' vectors (sparse or dense), each at unit length times its scale (an all-zero part
 * stays zero), concatenated, by their nonzero entries. The one arithmetic of a blend: the dense
 * vectors are these entries widened.
 */
function blendSparse(parts: readonly (readonly [SparseVector | readonly number[], number])[]): SparseVector {
  const index: number[] = [];
  const value: number[] = [];
  let offset = 0;
  for (const [v, scale] of parts) {
    // Indexed loops: a for-of over a dense part (thousands of entries, most zero) allocated an
    // iterator result per entry, most of what a route allocated with the sentence encoder.
    const at = isSparse(v) ? v.index : undefined;
    const values = isSparse(v) ? v.value : v;
    let s = 0;
    for (let j = 0; j < values.length; j++) s += values[j] * values[j];
    const k = s > 0 ? scale / Math.sqrt(s) : 0;
    for (let j = 0; j < values.length; j++) {
      const x = values[j] * k;
      if (x === 0) continue;
      index.push(offset + (at === undefined ? j : at[j]));
      value.push(x);
    }
    offset += isSparse(v) ? v.dimension : v.length;
  }
  return { dimension: offset, index: Int32Array.from(index), value: Float64Array.from(value) };
}

/**
 * Concatenated, weighted, normalised embeddings: `cos(blend(a), blend(b)) = Σ wᵢ · cosᵢ(a, b)`
 * with `wᵢ` the weight shares (exactly, when no part gives an all-zero vector).
 *
 * @example
 * const routing = new BlendedEmbeddings({
 *   parts: [
 *     { embeddings: lexical, weight: DEFAULT_BLEND_WEIGHTS.lexical },
 *     { embeddings: new SemanticWordEmbeddings(), weight: DEFAULT_BLEND_WEIGHTS.semantic },
 *   ],
 * });
 */
export class BlendedEmbeddings extends Embeddings implements PartitionFittedEmbeddings {
  /** The parts with their weight shares (summing to 1). */
  readonly parts: ReadonlyArray<Readonly<BlendPart>>;
  /** Whether {@link BlendedEmbeddings.fittedOn} centres the other parts ({@link BlendedEmbeddingsOptions.center}). */
  readonly center: boolean;

  constructor(options: BlendedEmbeddingsOptions) {
    super({});
    if (options.parts.length === 0) throw new InvalidInput("BlendedEmbeddings needs at least one part.");
    if (options.parts.some((p) => !(p.weight > 0) || !Number.isFinite(p.weight))) {
      throw new InvalidInput("BlendedEmbeddings: every weight must be a positive number.", {
        context: { weights: options.parts.map((p) => p.weight) },
      });
    }
    const total = options.parts.reduce((s, p) => s + p.weight, 0);
    this.parts = options.parts.map((p) => Object.freeze({ embeddings: p.embeddings, weight: p.weight / total }));
    this.center = options.center ?? false;
  }

  /**
   * True when a part is an unfitted {@link LexicalEmbeddings}, or the other parts are centred: the
   * routing index fits the blend per partition.
   */
  get fitsPerPartition(): boolean {
    return this.center || this.parts.some((p) => p.embeddings instanceof LexicalEmbeddings && !p.embeddings.isFitted);
  }

  /**
   * The same blend with each unfitted {@link LexicalEmbeddings} part replaced by one with its
   * options fitted on `texts`, and with `center`, each other part centred on `texts`; the other
   * parts' models (a loaded model) are shared.
   */
  fittedOn(texts: readonly string[]): BlendedEmbeddings {
    return new BlendedEmbeddings({
      parts: this.parts.map((p) => ({
        weight: p.weight,
        embeddings:
          p.embeddings instanceof LexicalEmbeddings
            ? p.embeddings.isFitted
              ? p.embeddings
              : new LexicalEmbeddings(p.embeddings.options).fit(texts)
            : this.center && texts.length > 0
              ? new CenteredEmbeddings(p.embeddings, texts)
              : p.embeddings,
      })),
    });
  }

  private blend(vectors: ReadonlyArray<SparseVector | readonly number[]>): SparseVector {
    return blendSparse(vectors.map((v, i) => [v, Math.sqrt(this.parts[i].weight)] as const));
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    const perPart = await Promise.all(this.parts.map((p) => p.embeddings.embedDocuments(documents)));
    return documents.map((_, j) => denseOf(this.blend(perPart.map((vs) => vs[j]))));
  }

  async embedQuery(document: string): Promise<number[]> {
    return denseOf(this.blend(await Promise.all(this.parts.map((p) => p.embeddings.embedQuery(document)))));
  }

  /**
   * The blend's vectors by their nonzero entries, those of the vector {@link embedDocuments} (or,
   * with `query`, {@link embedQuery}) gives: the package's
   * own lexical parts give theirs without a dense array (a few hundred of thousands of
   * dimensions), the other parts their dense vectors. What the routing index holds and searches
   * with when its store is the package's in-memory index.
   */
  async embedSparse(texts: string[], query = false): Promise<SparseVector[]> {
    const perPart = await Promise.all(
      this.parts.map(async ({ embeddings }): Promise<readonly (SparseVector | readonly number[])[]> => {
        if (ownLexical(embeddings)) return texts.map((t) => embeddings.embedSparse(t));
        return query ? Promise.all(texts.map((t) => embeddings.embedQuery(t))) : embeddings.embedDocuments(texts);
      }),
    );
    return texts.map((_, j) => this.blend(perPart.map((vs) => vs[j])));
  }

  /** Passes texts soon to be embedded to the parts that can encode ahead (`SentenceEncoderEmbeddings.prefetch`). */
  prefetch(texts: readonly string[]): void {
    for (const { embeddings } of this.parts) (embeddings as Partial<Prefetching>).prefetch?.(texts);
  }
}

/**
 * True for a {@link BlendedEmbeddings} as it is (a subclass overriding how it embeds gets its own
 * methods called, densely): its vectors can be taken by their nonzero entries (`embedSparse`).
 */
export function ownBlend(embeddings: EmbeddingsInterface): embeddings is BlendedEmbeddings {
  return embedsAs(embeddings, BlendedEmbeddings);
}

/** Embeddings that can be told what they will be asked next, to encode it ahead. */
export interface Prefetching {
  prefetch(texts: readonly string[]): void;
}
