/**
 * How a tool's example requests enter its vector in the routing index's `tool` mode: their weight
 * against the tool part, centering, and whether they are embedded together or one by one.
 */

/** How a tool's example requests enter its vector in `tool` mode (see {@link ToolIndexOptions.examples}). */
export interface ToolIndexExamplesOptions {
  /**
   * Most the examples weigh against the tool part, reached with many examples.
   * @default 2
   */
  max?: number;
  /**
   * Number of examples at which they weigh half of `max`.
   * @default 4
   */
  half?: number;
  /**
   * Share of the partition's mean example vector taken from each tool's example vector, in [0, 1].
   * @default 0 (off)
   */
  center?: number;
  /**
   * `joined`: a tool's examples embedded as one text (right for lexical embeddings, which count
   * words); `each`: each embedded on its own and their unit vectors averaged (a sentence encoder).
   * @default "joined"
   */
  embed?: "joined" | "each";
}

/** The defaults applied to every {@link ToolIndexExamplesOptions} field left unset. */
export const DEFAULT_TOOL_INDEX_EXAMPLES: Readonly<Required<ToolIndexExamplesOptions>> = Object.freeze({
  max: 2,
  half: 4,
  center: 0,
  embed: "joined",
});

/** Weight of `n` example requests against the tool part (see {@link ToolIndexOptions.examples}). */
export function examplesWeight(n: number, o: { max: number; half: number } = DEFAULT_TOOL_INDEX_EXAMPLES): number {
  return n <= 0 ? 0 : (o.max * n) / (n + o.half);
}
