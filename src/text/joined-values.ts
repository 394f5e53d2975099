import { spelledUnit } from "./detectors-spelled.js";

/**
 * Argument values found in a text however they are split or spelled: `Whitfield` written
 * `Whit-field`, `whit field`, `Whit/field` or across a line break; `Q-X-Z-T-R-B` written `QXZTRB`;
 * a card number read out with "double" and "triple"; a password in the phonetic alphabet. A value
 * is kept as its letters and digits joined (`whitfield`, `qxztrb`, `4111111111111111`), and a run of
 * adjacent text tokens matches when its tokens joined — as written, or each read as the character
 * it spells (`kilo` → `k`, `double one` → `11`) — equal one. Linear: a run is followed only while
 * it is the beginning of some value, and values are held up to {@link MAX_JOINED_CHARS} characters.
 */

/** Shortest joined value looked for (shorter ones are words and ids the phrase match already covers). */
export const MIN_JOINED_CHARS = 4;
/** Longest joined value looked for; a longer one is matched by its tokens and pieces instead. */
export const MAX_JOINED_CHARS = 64;
/** Beginnings held over all of a masker's values. */
const MAX_PREFIXES = 100_000;

/** A text token as the masker holds it: where it is and its folded form. */
export interface JoinToken {
  start: number;
  end: number;
  norm: string;
}

/** The joined forms of a masker's values, and their beginnings. */
export class JoinedValues {
  private readonly whole = new Set<string>();
  private readonly prefixes = new Set<string>();
  private budget = MAX_PREFIXES;

  /** True when no value was added. */
  get empty(): boolean {
    return this.whole.size === 0;
  }

  /** Add one value, as its folded tokens (`["whit", "field"]` or `["whitfield"]`). */
  add(tokens: readonly string[]): void {
    const joined = tokens.join("");
    if (joined.length < MIN_JOINED_CHARS || joined.length > MAX_JOINED_CHARS || this.whole.has(joined)) return;
    this.whole.add(joined);
    for (let i = 1; i < joined.length && this.budget > 0; i++, this.budget--) this.prefixes.add(joined.slice(0, i));
  }

  /**
   * How many tokens from `toks[i]` on spell one value (several tokens, or one token that joins
   * a value written in pieces), 0 when none. Tokens must be adjacent: at most `maxGap`
   * characters of anything but letters and digits between two of them.
   */
  match(toks: readonly JoinToken[], i: number, maxGap: number): number {
    let literal = "";
    let spelled = "";
    let literalOn = true;
    let spelledOn = true;
    let repeat = 1;
    let best = 0;
    for (let j = i; j < toks.length && (literalOn || spelledOn); j++) {
      if (j > i && toks[j].start - toks[j - 1].end > maxGap) break;
      const norm = toks[j].norm;
      if (literalOn) {
        literal += norm;
        if (this.whole.has(literal)) best = j - i + 1;
        literalOn = literal.length < MAX_JOINED_CHARS && this.prefixes.has(literal);
      }
      if (spelledOn) {
        const unit = spelledUnit(norm);
        if (unit?.kind === "repeat") repeat = unit.times;
        else if (unit?.kind !== "case") {
          spelled += (unit?.kind === "char" ? unit.chars : norm).repeat(repeat);
          repeat = 1;
          if (j > i && this.whole.has(spelled)) best = Math.max(best, j - i + 1);
        }
        spelledOn = spelled.length < MAX_JOINED_CHARS && (spelled === "" || this.prefixes.has(spelled));
      }
    }
    return best;
  }
}
