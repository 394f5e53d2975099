/** The shapes every detector shares (langchain v1's `PIIDetector`), and the helpers that make spans. */

/** One span of private data, as langchain v1's `PIIMatch`. */
export interface PIIMatch {
  /** The matched text, `content.slice(start, end)`. */
  text: string;
  start: number;
  /** Exclusive. */
  end: number;
}

/** A detector, as langchain v1's `PIIDetector`: every span of one kind of private data. */
export type PIIDetector = (content: string) => PIIMatch[];

/** A detector with the name and the placeholder the gate masks its spans with. */
export interface NamedDetector {
  /** Stable name (`email`, `api_key` ...), reported in `masked` lists. */
  readonly name: string;
  /** What a span is replaced with when masked (`<email>`, `<key>` ...). */
  readonly placeholder: string;
  readonly detect: PIIDetector;
}

/** One span of `content`. */
export function span(content: string, start: number, end: number): PIIMatch {
  return { text: content.slice(start, end), start, end };
}

/** Every match of a global regex as spans; `group` picks a capture group (needs the `d` flag). */
export function regexSpans(
  content: string,
  pattern: RegExp,
  accept?: (text: string) => boolean,
  group?: number,
): PIIMatch[] {
  const out: PIIMatch[] = [];
  for (const m of content.matchAll(pattern)) {
    let start = m.index;
    let end = start + m[0].length;
    if (group !== undefined) {
      const at = m.indices?.[group];
      if (!at) continue;
      [start, end] = at;
    }
    const text = content.slice(start, end);
    if (accept === undefined || accept(text)) out.push({ text, start, end });
  }
  return out;
}
