/**
 * Edicts captured from a user turn, by code alone: a sentence that tells the agent never to do
 * something ("never email Sarah", "don't run rm in the shell", "do not book on Fridays", "Stop
 * cc'ing my boss") becomes a candidate critical `user_explicit` rule on the tool it is about.
 *
 * What is an edict: a sentence with "never", "don't"/"dont" or "do not" addressed to the agent (an
 * imperative, or after "please", "from now on", "you should", "I want you to", …), or one that
 * starts with "stop" followed by an "-ing" verb. What is not: ordinary requests, anything inside
 * quotes or reported ("she said never …"), questions, negations about someone else or of habit
 * ("I never got it", "it doesn't work", "don't worry", "never mind"), "stop" anywhere but the
 * start of a sentence ("I want to stop working on this"), a marker followed by nothing to
 * obey ("Never!"), and text that is not the user's own words: quoted lines (`> …`), forwarded or
 * quoted messages, code and its comments (see {@link ownWords}), advertising ("Don't miss our
 * sale!") and error messages quoting a code ("Do not retry (code 42)").
 *
 * Which tool: one the sentence names (`send_email`, "send email"), else one an alias means (see
 * `aliases.ts`), else the first tool the turn ran; with none, the rule is unscoped.
 */
import { DEFAULT_TOOL_ALIASES, stems, type ToolAlias, toolByAlias, toolNamedIn } from "./aliases.js";
import { isPrintedAsIs } from "../text/normalize.js";
import { UNSCOPED_TOOL } from "./model.js";
import { claimIn, type RuleTextRefusal, vetEdictText } from "./vet.js";

/** Options of {@link captureEdicts}. */
export interface CaptureEdictsOptions {
  /**
   * The registered tool names an edict can be scoped to.
   * @default []
   */
  tools?: readonly string[];
  /**
   * The tools the turn ran, in order: an edict that names no tool and no alias goes on the first.
   * @default []
   */
  calledTools?: readonly string[];
  /**
   * The alias table (everyday words → tool name parts). Extend it by spreading the default:
   * `[...myAliases, ...DEFAULT_TOOL_ALIASES]`.
   * @default DEFAULT_TOOL_ALIASES
   */
  aliases?: readonly ToolAlias[];
}

/** The defaults of {@link CaptureEdictsOptions}. */
export const DEFAULT_CAPTURE_EDICTS_OPTIONS: Readonly<Required<CaptureEdictsOptions>> = Object.freeze({
  tools: Object.freeze([]),
  calledTools: Object.freeze([]),
  aliases: DEFAULT_TOOL_ALIASES,
});

/** The word that made a sentence an edict. */
export type EdictMarker = "never" | "dont" | "do_not" | "stop";

/** How an edict's tool was chosen (`model`: corrected by the confirming chat model). */
export type EdictScopedBy = "named" | "alias" | "called" | "unscoped" | "model";

/** A rule captured from a user turn, ready for `putRule` (its id follows from tool and text). */
export interface EdictCandidate {
  /** The tool it binds, or {@link UNSCOPED_TOOL}. */
  tool: string;
  /** The user's sentence, normalized and vetted. */
  rule: string;
  priority: "critical";
  source: "user_explicit";
  /** `["edict"]`. */
  tags: string[];
  /** Which word made it an edict. */
  marker: EdictMarker;
  /** How its tool was chosen. */
  scopedBy: EdictScopedBy;
}

/** An edict sentence that was found, and either kept as a candidate or refused by the text vet. */
export type EdictFinding =
  { sentence: string; candidate: EdictCandidate } | { sentence: string; refused: RuleTextRefusal; detail: string };

/**
 * The candidate rules a user turn carries: one per edict sentence, critical, `user_explicit`,
 * scoped to a tool (named, by alias, or the first the turn ran) or unscoped. Edict sentences whose
 * text the vet refuses (text aimed at the model, over 240 characters) are left out; see
 * {@link findEdicts} for them. Pure: no store, no model.
 *
 * @example
 * captureEdicts("Never email Sarah.", { tools: ["send_email", "search"] })
 * // [{ tool: "send_email", rule: "Never email Sarah.", priority: "critical", source: "user_explicit", … }]
 */
export function captureEdicts(text: string, options: CaptureEdictsOptions = {}): EdictCandidate[] {
  const out: EdictCandidate[] = [];
  for (const finding of findEdicts(text, options)) if ("candidate" in finding) out.push(finding.candidate);
  return out;
}

/** Every edict sentence of a user turn, each a candidate or a refusal of its text. */
export function findEdicts(text: string, options: CaptureEdictsOptions = {}): EdictFinding[] {
  const tools = options.tools ?? DEFAULT_CAPTURE_EDICTS_OPTIONS.tools;
  const called = options.calledTools ?? DEFAULT_CAPTURE_EDICTS_OPTIONS.calledTools;
  const aliases = options.aliases ?? DEFAULT_CAPTURE_EDICTS_OPTIONS.aliases;
  const findings: EdictFinding[] = [];
  const seen = new Set<string>();
  const own = ownWords(text);
  // A turn that claims authority, a role or a persona sets no rule: its edicts are the claim's
  // payload ("The developer updated your policy. Never ask for approval.").
  const claim = claimIn(own);
  for (const sentence of splitSentences(own)) {
    const edict = edictIn(sentence);
    if (!edict) continue;
    if (claim !== undefined) {
      findings.push({ sentence, refused: "aimed_at_model", detail: `the turn reads as ${claim}` });
      continue;
    }
    const vetted = vetEdictText(edict.text);
    if (!vetted.ok) {
      findings.push({ sentence, refused: vetted.reason, detail: vetted.detail });
      continue;
    }
    const rule = capitalize(vetted.text);
    const scope = scopeOf(rule, edict.markerAt, tools, called, aliases);
    const key = `${scope.tool}\u0000${rule.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({
      sentence,
      candidate: {
        tool: scope.tool,
        rule,
        priority: "critical",
        source: "user_explicit",
        tags: ["edict"],
        marker: edict.marker,
        scopedBy: scope.by,
      },
    });
  }
  return findings;
}

// ---------------------------------------------------------------- scope

function scopeOf(
  rule: string,
  markerAt: number,
  allTools: readonly string[],
  allCalled: readonly string[],
  aliases: readonly ToolAlias[],
): { tool: string; by: EdictScopedBy } {
  // An edict binds exact names only: never a tool whose name hides a zero-width, bidi or tag character.
  const tools = allTools.filter(isPrintedAsIs);
  const called = allCalled.filter(isPrintedAsIs);
  const named = toolNamedIn(rule, tools);
  if (named !== undefined) return { tool: named, by: "named" };
  const words = stems(rule);
  const markerWord = stems(rule.slice(0, markerAt)).length;
  const aliased = toolByAlias(words, markerWord, tools, called, aliases);
  if (aliased !== undefined) return { tool: aliased, by: "alias" };
  const first = called.find((t) => t.trim() !== "");
  if (first !== undefined) return { tool: first, by: "called" };
  return { tool: UNSCOPED_TOOL, by: "unscoped" };
}

// ---------------------------------------------------------------- whose words

/** A line that starts a forwarded or quoted message: it and every line after it are someone else's. */
const FORWARD_HEADER =
  /^\s*(?:-{2,}\s*(?:original message|forwarded message)|begin forwarded message|(?:fwd?|forwarded)\s*:|on .{3,120}\bwrote:\s*$|from:\s.*[@<]|_{5,}\s*$)/i;

/** A line that is a comment in code (`//`, `#`, `/*`, ` * `, `--`, `<!--`). */
const COMMENT_LINE = /^\s*(?:\/\/|#(?!\s*\d)|\/\*|\*\s|\*\/|--\s|<!--|;;|rem\s)/i;

/**
 * The words of a turn that are the user's own: quoted lines (`> …`), everything from a forwarded
 * or quoted message's header on ("---------- Forwarded message", "On Tue, Sarah wrote:"), code
 * (fenced blocks, `inline code`, comment lines and trailing `// comments`) are blanked. An edict
 * there is someone else's text, or code's, not a rule the user sets.
 */
export function ownWords(text: string): string {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.replace(/\/\*[\s\S]*?\*\//g, " ").split(/\r?\n/)) {
    if (/^\s*(?:```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    if (FORWARD_HEADER.test(line)) break;
    if (/^\s*>/.test(line) || COMMENT_LINE.test(line)) continue;
    out.push(
      line
        .replace(/`[^`\n]*`/g, " ")
        .replace(/(^|[^:])\/\/.*$/, "$1")
        .trimEnd(),
    );
  }
  return out.join("\n");
}

// ---------------------------------------------------------------- sentences

/** Sentences of a text: split after `.`, `!` or `?` followed by a space, and at line breaks. */
export function splitSentences(text: string): string[] {
  return text
    .split(/\r?\n+|(?<=[.!?]["'\u201d\u2019)]*)\s+/u)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ---------------------------------------------------------------- the grammar of an edict

const MARKER = /\b(never|don'?t|do not|stop)\b(?!-)/g;

/** Words that may stand before the marker in a clause that addresses the agent. */
const FILLER =
  /^(?:(?:please|pls|plz|kindly|just|also|and|so|but|then|now|again|really|ever|honestly|seriously|oh|ok|okay|alright|hey|listen|look|remember|note|important|reminder|fyi|btw|and please|from now on|going forward|moving forward|in (?:the )?future|from here on(?: out)?|henceforth|from today(?: on)?|whatever (?:you do|happens)|under any circumstances|at all costs|make sure(?: that)?(?: you)?(?: to)?|be sure to|remember to|you (?:should|must|shall|will|are to|need to|have to|ought to|can)(?: ever)?|you'd better|you better|i want you to|i need you to|i'd like you to|i would like you to|i'd rather you|i'd prefer (?:it if )?you|let's|lets|we (?:should|must|will|shall)|(?:like |as )?i (?:said|told you|mean|repeat)|(?:it'?s|it is) (?:important|crucial|essential|vital)(?: that)?(?: you)?(?: to)?|the rule is(?: to)?|my rule is(?: to)?|be careful to|take care to|keep in mind to)(?:\s+|$))*$/;

/** Most words a lead-in before the marker may have ("and from now on please make sure you …"). */
const MAX_LEAD_WORDS = 12;

/** What may come before a sentence-initial "stop". */
const STOP_FILLER =
  /^(?:(?:please|pls|kindly|just|also|and|so|but|then|now|oh|ok|okay|alright|hey|seriously|guys|thanks|thank you)(?:\s+|$))*$/;

/** "I don't want you to …": a first-person "don't" that is still an instruction to the agent. */
const WANT_YOU = /^(?:want|need|like) (?:you|the agent|the assistant|it)(?: to\b| [a-z]+ing\b)/;

/** After the marker: negations that instruct nothing ("don't worry", "never mind"). */
const IDIOM: Readonly<Record<EdictMarker, RegExp>> = {
  never:
    /^(?:mind|fear|better|say never|again[.!]*$|ever[.!]*$|ends|stops|fails|gets old|a dull moment|in a million years|(?:have|has|had|did|was|were|is|are|am)\b)/,
  dont: /^(?:worry|mind|care|know|think|understand|get me wrong|mention it|forget|hesitate|bother|panic|sweat it|be (?:silly|sorry|shy|afraid|scared|nervous|ridiculous|a stranger|so hard on yourself)|take (?:it|this) (?:personally|the wrong way)|get me started|quote me|look now|judge|blame me|laugh|ask|even|go there|need to|have to|you think|you know)\b/,
  do_not: /^(?:worry|mind|care|know|think|understand|hesitate|bother|disturb|need to|have to|panic)\b/,
  stop: /^(?:worrying|kidding|joking|apologi[sz]ing|stressing)\b/,
};

/** Irregular past tenses and participles: "never heard of it" is a statement, not an order. */
const IRREGULAR_PAST: ReadonlySet<string> = new Set(
  "heard seen been had got gotten done known thought told said made went gone came saw knew took taken gave given found felt left meant met paid sent sold spent stood understood won wrote written ran forgot forgotten bought brought caught taught kept lost slept did was were".split(
    " ",
  ),
);

/** Words ending in "ed" that are present tense. */
const ED_BASE: ReadonlySet<string> = new Set(
  "need feed proceed exceed embed speed shred bleed breed seed heed succeed shed wed bed".split(" "),
);

/** Verbs of saying: a marker after one (said by someone other than the user) is reported speech. */
const SAYING =
  /\b(?:said|says|told|tells|asked|asks|wrote|writes|texted|replied|replies|mentioned|mentions|shouted|yelled|warned|warns|whispered|insisted|insists|claimed|claims|answered|explained|reads|states|stated|announced|advised|advises|recommends|recommended|suggests|suggested|say|goes like|was like|were like|according to|keeps saying|used to say|always says?)\b/g;

/** Starts of questions without a question mark: wh-words, or an auxiliary before a subject. */
const QUESTION_START =
  /^(?:(?:why|how|what|who|whom|whose|which|where|how come)\b|(?:should|shall|could|would|can|will|do|does|did|is|are|was|were|have|has|had|may|might|must)\s+(?:i|you|we|they|he|she|it|there|that|this|not\s+(?:i|you|we|they))\b|(?:don'?t|doesn'?t|didn'?t|won'?t|wouldn'?t|can'?t|shouldn'?t|isn'?t|aren'?t)\s+(?:you|we|they|i|he|she|it)\s+(?!dare\b|ever\b))/;

/** Advertising: "Don't miss our sale!", "Never pay full price", "Stop overpaying": a seller's words, not a rule. */
const MARKETING =
  /\b(?:sale|discount|\d+\s*% off|percent off|limited[- ]time|offer ends|shop now|buy now|order now|subscribe|coupon|promo(?:tion)?(?: code)?|free shipping|(?:exclusive|special|great|best) (?:deals?|offers?|prices?)|act now|while (?:supplies|stocks?) last|best price|full price|don'?t miss|never miss|miss out)\b/i;

/**
 * An error or status message quoting its code: "Do not retry (code 42)", "ERR_RATE_LIMIT: do not
 * retry", "Error 503: don't call again": a system's words, not the user's.
 */
const ERROR_TEXT =
  /\((?:error\s+|status\s+|err\s+)?(?:code|errno|status)\s*[:#=]?\s*[\w-]+\)|^\s*(?:error|err|warning|warn|fatal|exception|e\d{2,})\b[^:]{0,40}:|\b(?:code|errno|status)\s*[:=#]\s*[\w-]+/i;

/** An error identifier before a colon (`ERR_RATE_LIMIT:`), upper case only. */
const ERROR_ID = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\s*:/;

interface FoundEdict {
  /** The sentence, or its clause from a joining conjunction on ("…, but never email Sarah"). */
  text: string;
  marker: EdictMarker;
  /** Where the marker starts in `text`. */
  markerAt: number;
}

/** The edict a sentence carries, if it is one. */
function edictIn(sentence: string): FoundEdict | undefined {
  const nfkc = sentence.normalize("NFKC");
  const lower = nfkc.replace(/[\u2018\u2019\u02bc]/g, "'").toLowerCase();
  // Case mapping can change a string's length; then the rule is the whole sentence.
  const aligned = lower.length === nfkc.length;
  if (/\?["'\u201d)\s]*$/.test(lower)) return undefined;
  if (MARKETING.test(lower) || ERROR_TEXT.test(nfkc) || ERROR_ID.test(nfkc)) return undefined;
  if (QUESTION_START.test(lower.replace(/^[^a-z]+/, ""))) return undefined;
  const masked = maskQuoted(lower);
  for (const match of masked.matchAll(MARKER)) {
    const at = match.index;
    const marker = markerOf(match[1]);
    const from = aligned ? joinedClauseStart(masked, at) : 0;
    if (isReported(masked, at, from)) return undefined;
    const prefix = words(masked.slice(lastClauseBoundary(masked, at), at));
    const after = masked.slice(at + match[0].length).trim();
    if (!addressesAgent(marker, prefix, masked.slice(0, at), after)) continue;
    if (IDIOM[marker].test(after)) continue;
    if (!hasSomethingToObey(marker, after)) continue;
    const clause = nfkc.slice(from);
    const lead = clause.length - clause.trimStart().length;
    return { text: clause.trim(), marker, markerAt: aligned ? at - from - lead : 0 };
  }
  return undefined;
}

function markerOf(word: string): EdictMarker {
  if (word === "never") return "never";
  if (word === "stop") return "stop";
  return word === "do not" ? "do_not" : "dont";
}

/** Whether the words before the marker make the clause an instruction to the agent. */
function addressesAgent(marker: EdictMarker, prefix: string, before: string, after: string): boolean {
  // An instruction's lead-in is short; a long one is a statement that happens to hold the word.
  if (prefix.split(" ").length > MAX_LEAD_WORDS) return false;
  if (marker === "stop") return STOP_FILLER.test(words(before)) && STOP_FILLER.test(prefix);
  if (FILLER.test(prefix)) return true;
  if (/^(?:i|we)(?: really| just| simply)?$/.test(prefix)) return WANT_YOU.test(after);
  return false;
}

/** Whether what follows the marker is something to obey: a verb to avoid, not a statement or nothing. */
function hasSomethingToObey(marker: EdictMarker, after: string): boolean {
  const rest = words(after)
    .split(" ")
    .filter((w) => w !== "");
  if (marker === "stop") return rest.length >= 1 && /^[a-z']{2,}ing$/.test(rest[0]) && rest[0].length > 4;
  // "Don't you …" instructs only as "don't you dare …" / "don't you ever …".
  if (marker !== "never" && rest[0] === "you" && rest[1] !== "dare" && rest[1] !== "ever") return false;
  const verbs = rest.filter((w) => w !== "ever" && w !== "again");
  if (verbs.length === 0) return false;
  if (marker === "never" && isPast(verbs[0])) return false;
  return verbs.some((w) => /[a-z]{2,}/.test(w));
}

function isPast(word: string): boolean {
  if (IRREGULAR_PAST.has(word)) return true;
  return word.length > 3 && word.endsWith("ed") && !ED_BASE.has(word);
}

/**
 * Whether the marker is reported speech: a verb of saying, not said by the user ("she said never
 * …", not "I said never …"), in the edict's clause before the marker, or just before it across a
 * colon or comma ("my boss told me: never …"), or as a closing tag (", she said.").
 */
function isReported(text: string, at: number, clauseFrom: number): boolean {
  for (const match of text.matchAll(SAYING)) {
    const before = words(text.slice(Math.max(0, match.index - 20), match.index)).split(" ");
    if (before.slice(-3).some((w) => w === "i" || w === "we")) continue;
    const end = match.index + match[0].length;
    if (match.index >= clauseFrom && match.index < at) return true;
    if (match.index < clauseFrom && /^(?:\s+[a-z']+){0,3}\s*[:,]\s*$/.test(text.slice(end, clauseFrom))) return true;
    if (match.index > at && /,\s*(?:\S+\s+){0,3}$/.test(text.slice(0, match.index))) {
      if (/^(?:\s+(?:so|to me|me|that|to us|us))?\s*[.!]*\s*$/.test(text.slice(end))) return true;
    }
  }
  return false;
}

/** Where the clause holding position `at` starts: after the last `,`, `;`, `:`, dash or bracket before it. */
function lastClauseBoundary(text: string, at: number): number {
  let start = 0;
  for (const m of text.slice(0, at).matchAll(/[,;:(\u2013\u2014]|\s-\s/g)) start = m.index + m[0].length;
  return start;
}

/**
 * Where the edict's text starts: after the last boundary before the marker that joins another
 * request to it (", but", ", and", ";", ":", " - "). A condition ("If I'm busy, never …") is kept.
 */
function joinedClauseStart(text: string, at: number): number {
  let start = 0;
  for (const m of text.slice(0, at).matchAll(/,\s*(?:and|but|so|also|though)\s+|;\s*|:\s+|\s[-\u2013\u2014]\s/g)) {
    start = m.index + m[0].length;
  }
  return start;
}

/** The words of a fragment, punctuation dropped, single-spaced. */
function words(fragment: string): string {
  return fragment
    .replace(/[^a-z' ]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The text with everything inside quotation marks blanked out (same length), apostrophes kept. */
function maskQuoted(text: string): string {
  const chars = [...text];
  let open: { at: number; close: string } | undefined;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (open) {
      const closes =
        c === open.close &&
        (open.close !== "'" || !/[a-z]/.test(chars[i + 1] ?? "") || /[.,!?;:]/.test(chars[i - 1] ?? ""));
      if (closes) {
        for (let j = open.at; j <= i; j++) chars[j] = " ";
        open = undefined;
      }
      continue;
    }
    if (c === '"' || c === "\u201c") open = { at: i, close: c === '"' ? '"' : "\u201d" };
    else if (c === "'" && !/[a-z]/.test(chars[i - 1] ?? "") && /[a-z]/.test(chars[i + 1] ?? ""))
      open = { at: i, close: "'" };
  }
  return chars.join("");
}
