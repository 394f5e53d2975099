/**
 * The first stage of the gate: one normal form for every text the package stores, shows or checks,
 * and a confusables skeleton for checks only. Pure and linear in the length of the text.
 *
 * - {@link normalizeText} is what is stored and shown: lone surrogates replaced by U+FFFD, control
 *   characters (NUL included) by a space or a newline, format and invisible characters removed
 *   (zero-width characters, soft hyphen, word joiner, BOM, bidi controls, Unicode tag characters,
 *   variation selectors, Hangul fillers, every other `\p{Cf}`), then Unicode NFKC (fullwidth and
 *   mathematical letters become plain ones). A zero-width space inside a word joins the word again:
 *   `"ig\u200Bnore"` → `"ignore"`.
 * - {@link skeleton} is what checks compare: the normalized text with diacritics stripped, the
 *   common Cyrillic / Greek / Armenian / Cherokee / small-capital look-alikes of Latin letters and
 *   the look-alikes of `: < > " ' -` mapped to them (in the spirit of UTS #39's skeleton), lower
 *   case. `"Іgnоrе"` (Cyrillic І, о, е) → `"ignore"`. Never stored: it exists to be matched.
 */

/** What {@link inspectText} found while normalizing. */
export interface NormalizedText {
  /** The normalized text (see {@link normalizeText}). */
  readonly text: string;
  /**
   * The text hidden in Unicode tag characters (U+E0020–U+E007E mirror ASCII), decoded: a payload
   * some models read and people cannot see. Empty when there is none.
   */
  readonly hidden: string;
  /** Bidi overrides, embeddings and isolates removed (U+202A–U+202E, U+2066–U+2069). */
  readonly bidiControls: number;
  /** Every character removed or replaced (format, invisible, control, lone surrogate). */
  readonly removed: number;
}

const REPLACEMENT = "\uFFFD";
const PLAIN_ASCII = /^[\x20-\x7e\t\n]*$/;

/**
 * Format and other invisible characters: every `\p{Cf}` (zero-width space and joiners, soft hyphen,
 * word joiner, BOM, bidi marks and controls, tag characters, interlinear annotation ...), the
 * combining grapheme joiner, Mongolian and other variation selectors, Hangul fillers, and the
 * invisible Khmer vowels.
 */
const INVISIBLE = /[\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;

/**
 * Replace lone surrogates and control characters, and collect the tag payload and bidi controls,
 * in one pass over the UTF-16 units.
 */
function scrub(input: string): { text: string; hidden: string; bidi: number; replaced: number } {
  let out = "";
  let hidden = "";
  let bidi = 0;
  let replaced = 0;
  let run = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < input.length ? input.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        const cp = ((c - 0xd800) << 10) + (next - 0xdc00) + 0x10000;
        if (cp >= 0xe0020 && cp <= 0xe007e) hidden += String.fromCharCode(cp - 0xe0000);
        i += 1;
        continue;
      }
      out += input.slice(run, i) + REPLACEMENT;
      run = i + 1;
      replaced += 1;
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      out += input.slice(run, i) + REPLACEMENT;
      run = i + 1;
      replaced += 1;
      continue;
    }
    if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) {
      bidi += 1;
      continue;
    }
    const isControl = c < 0x20 || (c >= 0x7f && c <= 0x9f);
    const isBreak = c === 0x2028 || c === 0x2029;
    if (!isControl && !isBreak) continue;
    if (c === 0x09 || c === 0x0a) continue;
    let replacement = " ";
    if (c === 0x0d) {
      // \r\n is one line break; a lone \r is one too.
      replacement = input.charCodeAt(i + 1) === 0x0a ? "" : "\n";
    } else if (c === 0x0b || c === 0x0c || c === 0x85 || isBreak) {
      replacement = "\n";
    }
    out += input.slice(run, i) + replacement;
    run = i + 1;
    replaced += 1;
  }
  return { text: run === 0 ? input : out + input.slice(run), hidden, bidi, replaced };
}

const NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/gu;
const DECIMAL = /^\p{Nd}$/u;

/**
 * Decimal digits of every script (Arabic-Indic `٤١٥`, Devanagari `४१५`, Bengali, Thai …) as ASCII
 * digits, so the detectors and the digit mask see them. Unicode gives each script's digits as a
 * run of ten code points from zero; a digit's value is its distance from its run's start, mod 10.
 */
function asciiDigits(text: string): string {
  if (!NON_ASCII_DIGIT.test(text)) return text;
  NON_ASCII_DIGIT.lastIndex = 0;
  return text.replace(NON_ASCII_DIGIT, (digit) => {
    const cp = digit.codePointAt(0) as number;
    let start = cp;
    while (start - cp < 60 && DECIMAL.test(String.fromCodePoint(start - 1))) start -= 1;
    return String((cp - start) % 10);
  });
}

/** {@link normalizeText} with what it removed: the tag payload, bidi controls, a count. */
export function inspectText(input: string): NormalizedText {
  // Printable ASCII, tabs and newlines: nothing to remove, and NFKC leaves it as it is.
  if (PLAIN_ASCII.test(input)) return { text: input, hidden: "", bidiControls: 0, removed: 0 };
  const scrubbed = scrub(input);
  let removed = scrubbed.replaced;
  const countRemoved = (): string => {
    removed += 1;
    return "";
  };
  // Invisible characters go before NFKC (so a mark split from its letter composes again) and after
  // (NFKC turns some fillers into others).
  const text = asciiDigits(
    scrubbed.text.replace(INVISIBLE, countRemoved).normalize("NFKC").replace(INVISIBLE, countRemoved),
  );
  return { text, hidden: scrubbed.hidden, bidiControls: scrubbed.bidi, removed };
}

/**
 * The normal form of a text, as it is stored and shown: lone surrogates → U+FFFD, control
 * characters → a space (line breaks of every kind → `\n`), format and invisible characters removed,
 * then NFKC. Idempotent: `normalizeText(normalizeText(t)) === normalizeText(t)`.
 *
 * @example normalizeText("ig\u200Bno\u00ADre\u0000") // "ignore "
 */
export function normalizeText(input: string): string {
  return inspectText(input).text;
}

// ---------------------------------------------------------------- confusables

/**
 * Look-alikes of Latin letters and of a few ASCII signs, by the character they imitate. Case
 * matters: uppercase Greek Η looks like H, lowercase η like n. Fullwidth and mathematical letters
 * are not here: NFKC has already mapped them.
 */
const CONFUSABLES: Readonly<Record<string, string>> = {
  // Cyrillic, uppercase and lowercase.
  А: "A",
  В: "B",
  Е: "E",
  К: "K",
  М: "M",
  Н: "H",
  О: "O",
  Р: "P",
  С: "C",
  Т: "T",
  Х: "X",
  У: "Y",
  Ѕ: "S",
  І: "I",
  Ј: "J",
  Ԁ: "d",
  Ү: "Y",
  Ԛ: "Q",
  Ԝ: "W",
  Һ: "h",
  Ӏ: "l",
  Ь: "b",
  Ꙇ: "I",
  а: "a",
  в: "b",
  е: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  х: "x",
  у: "y",
  ѕ: "s",
  і: "i",
  ј: "j",
  ԁ: "d",
  ү: "y",
  ԛ: "q",
  ԝ: "w",
  һ: "h",
  ӏ: "l",
  ь: "b",
  г: "r",
  п: "n",
  ѡ: "w",
  ꙇ: "i",
  ԍ: "g",
  ɡ: "g",
  // Greek.
  Α: "A",
  Β: "B",
  Ε: "E",
  Ζ: "Z",
  Η: "H",
  Ι: "I",
  Κ: "K",
  Μ: "M",
  Ν: "N",
  Ο: "O",
  Ρ: "P",
  Τ: "T",
  Υ: "Y",
  Χ: "X",
  Ϲ: "C",
  Ϳ: "J",
  α: "a",
  β: "b",
  γ: "y",
  ε: "e",
  η: "n",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  ω: "w",
  μ: "u",
  ϲ: "c",
  ϳ: "j",
  ϵ: "e",
  ϱ: "p",
  // Armenian.
  օ: "o",
  ս: "u",
  ց: "g",
  հ: "h",
  ո: "n",
  ք: "p",
  Օ: "O",
  Ս: "U",
  // Cherokee capitals that look like Latin ones.
  Ꭺ: "A",
  Ᏼ: "B",
  Ꮯ: "C",
  Ꭼ: "E",
  Ꮐ: "G",
  Ꮋ: "H",
  Ꭻ: "J",
  Ꮶ: "K",
  Ꮮ: "L",
  Ꮇ: "M",
  Ꮲ: "P",
  Ꮪ: "S",
  Ꭲ: "T",
  Ꮩ: "V",
  Ꮃ: "W",
  Ꮓ: "Z",
  Ꭰ: "D",
  // Latin letters that pass for others, and small capitals.
  ı: "i",
  ȷ: "j",
  ɑ: "a",
  ɩ: "i",
  ɪ: "i",
  ʀ: "r",
  ʏ: "y",
  ᴀ: "a",
  ʙ: "b",
  ᴄ: "c",
  ᴅ: "d",
  ᴇ: "e",
  ꜰ: "f",
  ɢ: "g",
  ʜ: "h",
  ᴊ: "j",
  ᴋ: "k",
  ʟ: "l",
  ᴍ: "m",
  ɴ: "n",
  ᴏ: "o",
  ᴘ: "p",
  ꞯ: "q",
  ꜱ: "s",
  ᴛ: "t",
  ᴜ: "u",
  ᴠ: "v",
  ᴡ: "w",
  ᴢ: "z",
  ß: "ss",
  ø: "o",
  Ø: "O",
  đ: "d",
  Đ: "D",
  ħ: "h",
  ł: "l",
  Ł: "L",
  ŧ: "t",
  ƚ: "l",
  ɫ: "l",
  ɵ: "o",
  ꝋ: "o",
  // Signs that matter to the checks: colons, angle brackets, quotes, dashes.
  "\u02D0": ":",
  "\u02F8": ":",
  "\u0589": ":",
  "\u05C3": ":",
  "\u2236": ":",
  "\uA789": ":",
  "\u1361": ":",
  "\u2039": "<",
  "\u02C2": "<",
  "\u1438": "<",
  "\u3008": "<",
  "\u27E8": "<",
  "\u203A": ">",
  "\u02C3": ">",
  "\u1433": ">",
  "\u3009": ">",
  "\u27E9": ">",
  "\u201C": '"',
  "\u201D": '"',
  "\u201E": '"',
  "\u201F": '"',
  "\u2033": '"',
  "\u00AB": '"',
  "\u00BB": '"',
  "\u2018": "'",
  "\u2019": "'",
  "\u201A": "'",
  "\u201B": "'",
  "\u2032": "'",
  "\u02BC": "'",
  "\u2010": "-",
  "\u2011": "-",
  "\u2012": "-",
  "\u2013": "-",
  "\u2014": "-",
  "\u2015": "-",
  "\u2212": "-",
};

const COMBINING_MARK = /\p{M}/gu;
/** Only code points outside ASCII can be confusables: ASCII text skips the table. */
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The confusables skeleton of a text, for checks only: normalized (see {@link normalizeText}),
 * diacritics stripped, look-alikes mapped to the Latin letter or ASCII sign they imitate, lower
 * case. Digits are left alone, so a skeleton of an id or an amount is the id or the amount.
 *
 * @example skeleton("Іgnоrе ALL prior dirеctivеs") // "ignore all prior directives"
 */
export function skeleton(input: string): string {
  return skeletonOfNormalized(normalizeText(input));
}

/** {@link skeleton} of a text that is already normalized (skips the normalization). */
export function skeletonOfNormalized(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  const stripped = text.normalize("NFD").replace(COMBINING_MARK, "");
  let out = "";
  for (const ch of stripped) out += CONFUSABLES[ch] ?? ch;
  return out.toLowerCase().normalize("NFC");
}

/** A control character (C0, DEL, C1) or a lone UTF-16 surrogate: what no store can key a row by. */
const UNSTORABLE =
  /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when `text` can name a row as it is (a tool name, a partition id): no control character and
 * no lone surrogate. Such names are refused, never rewritten, so two different names never meet.
 */
export function isStorableName(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/**
 * A name as a person reads it, for telling look-alike tool names apart: invisible, bidi and tag
 * characters removed, NFKC (full-width letters become plain), confusables folded to Latin, lower
 * case. `send_email`, `send_еmail` (Cyrillic е), `ｓｅｎｄ_ｅｍａｉｌ` and `send\u200B_email` share
 * one skeleton.
 */
export function nameSkeleton(name: string): string {
  return skeletonOfNormalized(normalizeText(name)).toLowerCase();
}

/** Whether a name is printed as it is: no invisible, bidi, tag or control character, already NFKC. */
export function isPrintedAsIs(name: string): boolean {
  const inspected = inspectText(name);
  return inspected.text === name && inspected.hidden === "" && inspected.bidiControls === 0;
}
