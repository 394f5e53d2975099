/**
 * The description linter: each tool checked against seed 002's six rules, saying which fails,
 * where, and how to fix it. Deterministic by default (code only; the near neighbours come from
 * the router's own similarity, so the neighbour named is the one routing would confuse); an
 * optional chat model adds a second opinion, checked with zod like every model reply.
 *
 * | rule                   | fails when                                                              |
 * |------------------------|-------------------------------------------------------------------------|
 * | `boundary`             | a near neighbour exists and no boundary sentence names it               |
 * | `constraints-in-prose` | a format, range, enum or prefix is stated in prose and not in the schema |
 * | `vague-parameter`      | a parameter name says nothing (`arg1`, `data`, `input`), or a bare `email` / `id` where two kinds exist |
 * | `no-return`            | nothing says what the tool returns                                      |
 * | `side-effect-late`     | it writes, sends, charges or deletes, and the first clause does not say so |
 * | `mode-switch`          | a mode or action parameter switches between jobs                        |
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InMemoryStore } from "@langchain/langgraph";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { ToolIndex, type ToolIndexOptions } from "../routing/tool-index.js";
import { clip, definedOnly, errorMessage, isRecord, oneLine } from "../internal.js";
import { registerTools } from "../learn/register.js";
import type { ToolSource } from "../ledger/cards.js";
import { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";

/** The six rules, in seed 002's order. */
export const LINT_RULES = [
  "boundary",
  "constraints-in-prose",
  "vague-parameter",
  "no-return",
  "side-effect-late",
  "mode-switch",
] as const;
/** One of {@link LINT_RULES}. */
export type LintRule = (typeof LINT_RULES)[number];

/** What each rule asks for, in one line (for help texts and the model's instructions). */
export const LINT_RULE_SUMMARIES: Readonly<Record<LintRule, string>> = Object.freeze({
  boundary: "write the boundary: when a near neighbour exists, a sentence says when to use it instead, naming it",
  "constraints-in-prose":
    "constraints go in the schema: formats, ranges, enums and prefixes as schema keywords, not prose",
  "vague-parameter":
    "name parameters after domain concepts: not arg1, data or input, not a bare email where two kinds exist",
  "no-return": "say what the tool returns",
  "side-effect-late": "state a side effect (writes, sends, charges, deletes, irreversible) in the first clause",
  "mode-switch": "one tool, one job: no mode or action parameter switching between jobs",
});

/** One failed rule on one tool. */
export interface LintFinding {
  tool: string;
  rule: LintRule;
  /** Where: `description`, `name`, `parameter <name>`, `schema`. */
  where: string;
  /** What is wrong, quoting the words that triggered it. */
  problem: string;
  /** How to fix it. */
  fix: string;
  /** `rules`: the deterministic checks; `model`: the chat model's second opinion. */
  source: "rules" | "model";
}

/** A tool's nearest other tools by routing similarity. */
export interface Neighbour {
  tool: string;
  /** Cosine similarity of the two tools' routing vectors. */
  similarity: number;
}

/** What {@link lintDescriptions} returns. */
export interface LintReport {
  /** Tools checked. */
  tools: number;
  /** Tools with at least one finding. */
  failing: number;
  /** Tools failing each rule (deterministic and model findings together). */
  counts: Record<LintRule, number>;
  /** Every finding, by tool then rule. */
  findings: LintFinding[];
  /** Each tool's near neighbours (similarity at or above `minNeighbourSimilarity`). */
  neighbours: Record<string, Neighbour[]>;
  /** Second-opinion replies that could not be used, one line each. */
  modelNotes: string[];
}

/** Options of {@link lintDescriptions}. */
export interface LintOptions {
  /**
   * Least routing similarity for another tool to count as a near neighbour (one routing would
   * confuse). On MetaTool's 199 tools about one in six has one (docs/benchmarks.md); the nearest of a
   * typical tool scores about 0.2.
   * @default 0.3
   */
  minNeighbourSimilarity?: number;
  /**
   * Most near neighbours considered per tool.
   * @default 3
   */
  maxNeighbours?: number;
  /**
   * Options of the routing index whose similarity finds neighbours, as the application routes.
   * @default {} (the index's defaults: offline lexical embeddings)
   */
  index?: Omit<ToolIndexOptions, "ledger">;
  /**
   * A chat model for a second opinion: one call per tool; its findings are marked `model`.
   * @default undefined (deterministic only)
   */
  model?: BaseChatModel;
  /**
   * Rules to check.
   * @default every rule
   */
  rules?: readonly LintRule[];
}

/** The defaults of {@link LintOptions} (`model` has none: without one the linter is deterministic). */
export const DEFAULT_LINT_OPTIONS: Readonly<Required<Omit<LintOptions, "model">>> = Object.freeze({
  minNeighbourSimilarity: 0.3,
  maxNeighbours: 3,
  index: Object.freeze({}),
  rules: LINT_RULES,
});

// ------------------------------------------------------------------ text helpers

/** A parameter of the tool's JSON schema, flattened one level. */
interface Param {
  name: string;
  schema: Record<string, unknown>;
  description: string;
}

/** Sentences of a text: split after . ! ? and at line breaks, " -- " and ";" kept inside. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=["'(\[A-Z0-9])|\n+/)
    .map((s) => oneLine(s))
    .filter((s) => s !== "");
}

/** The first clause of a description: its first sentence ("IRREVERSIBLE BILLING CHANGE: moves …" is one). */
export function firstClause(text: string): string {
  return sentences(text)[0] ?? "";
}

/** Words of a tool name: `send_email`, `sendEmail`, `send-email` → send, email. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w !== "");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `text` names `tool` (its exact name, case-insensitive, not inside a longer word). */
function names(text: string, tool: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(tool)}($|[^A-Za-z0-9_])`, "i").test(text);
}

function paramsOf(schema: Record<string, unknown> | null): Param[] {
  const properties = schema?.properties;
  if (!isRecord(properties) || Array.isArray(properties)) return [];
  return Object.entries(properties).map(([name, value]) => {
    const s = isRecord(value) ? value : {};
    return { name, schema: s, description: typeof s.description === "string" ? s.description : "" };
  });
}

/** Whether a schema (or any schema nested in it) has one of `keys`. */
function hasKeyword(schema: unknown, keys: readonly string[]): boolean {
  if (!isRecord(schema)) return false;
  if (Array.isArray(schema)) return schema.some((s) => hasKeyword(s, keys));
  for (const [key, value] of Object.entries(schema)) {
    if (keys.includes(key) && key !== "properties") return true;
    if (isRecord(value) && hasKeyword(value, keys)) return true;
  }
  return false;
}

const quote = (text: string): string => `"${clip(oneLine(text), 80)}"`;

// ------------------------------------------------------------------ rule 1: boundary

const BOUNDARY =
  /\b(not for|do not use|don't use|never use|not to be used|instead|rather than|only for|use (?:this|it) (?:only )?(?:when|for|if)|use \S+ (?:for|when|instead)|for (?:that|those|these|this),? use|prefer)\b/i;

function checkBoundary(tool: string, description: string, neighbours: readonly Neighbour[]): LintFinding[] {
  if (neighbours.length === 0) return [];
  const boundaries = sentences(description).filter((s) => BOUNDARY.test(s));
  const unnamed = neighbours.filter((n) => !boundaries.some((s) => names(s, n.tool)));
  if (unnamed.length === 0) return [];
  const list = unnamed.map((n) => `${n.tool} (${n.similarity.toFixed(2)})`).join(", ");
  const nearest = unnamed[0].tool;
  return [
    {
      tool,
      rule: "boundary",
      where: "description",
      problem: `routing finds it close to ${list}, and no sentence says when to use ${unnamed.length > 1 ? "those" : "that one"} instead.`,
      fix: `add a boundary naming the sibling, e.g. "Use this for …. Do not use it for …; use ${nearest} for that." (and the mirror sentence on ${nearest}).`,
      source: "rules",
    },
  ];
}

// ------------------------------------------------------------------ rule 2: constraints in prose

interface ConstraintKind {
  kind: string;
  pattern: RegExp;
  /** Schema keywords any of which states it. */
  keywords: readonly string[];
  /** How to say it in the schema. */
  fix: string;
  /** Skip sentences about what the tool returns (a cap on results is not an argument constraint). */
  skipReturns?: boolean;
}

const CONSTRAINTS: readonly ConstraintKind[] = [
  {
    kind: "a format",
    pattern:
      /\b(ISO[- ]?8601|ISO date|YYYY[-/]MM[-/]DD|MM\/DD\/YYYY|DD\/MM\/YYYY|RFC ?3339|E\.164|date format|in the format|formatted as|in \w+ format|must be (?:a |an )?(?:valid )?(?:email|e-mail|url|uri|uuid|date|datetime|timestamp)s?)\b/i,
    keywords: ["format", "pattern"],
    fix: 'put it in the schema: "format": "date" (or "date-time", "email", "uri") or a "pattern".',
  },
  {
    kind: "a prefix or pattern",
    pattern:
      /\b((?:must|should|has to|have to) (?:start|begin) with|starts? with ['"`]|prefixed (?:with|by)|must match|must look like)\b/i,
    keywords: ["pattern"],
    fix: 'put it in the schema as a "pattern", e.g. "^cus_[A-Za-z0-9]+$".',
  },
  {
    kind: "a set of allowed values",
    pattern:
      /\b(one of|must be either|allowed values|valid values|possible values|accepted values|can be either|either ['"`][^'"`]+['"`] or|(?:must|should) be ['"`][^'"`]+['"`],? or ['"`])/i,
    keywords: ["enum", "const", "oneOf", "anyOf"],
    fix: 'put it in the schema as an "enum" of the allowed values: an invented value becomes impossible, not unlikely.',
  },
  {
    kind: "a range or length limit",
    pattern:
      /\b(between -?\d[\d,.]* and -?\d[\d,.]*|at (?:most|least) \d[\d,.]*|no (?:more|less|fewer) than \d[\d,.]*|(?:maximum|minimum|max|min)(?: of| is)? \d[\d,.]*|up to \d[\d,.]*|must not exceed|cannot exceed|\d+ characters|positive (?:integer|number)|non-negative|greater than \d[\d,.]*|less than \d[\d,.]*)/i,
    keywords: [
      "minimum",
      "maximum",
      "exclusiveMinimum",
      "exclusiveMaximum",
      "minLength",
      "maxLength",
      "minItems",
      "maxItems",
    ],
    fix: 'put it in the schema: "minimum" / "maximum" (numbers), "minLength" / "maxLength" (text) or "maxItems" (lists).',
    skipReturns: true,
  },
];

const ABOUT_RETURNS = /\b(returns?|returned|returning|results?|responds?|outputs?)\b/i;

function checkConstraints(
  tool: string,
  description: string,
  params: readonly Param[],
  schema: Record<string, unknown> | null,
): LintFinding[] {
  const out: LintFinding[] = [];
  const places: { where: string; text: string; scope: unknown }[] = [
    { where: "description", text: description, scope: schema },
    ...params.map((p) => ({ where: `parameter ${p.name}`, text: p.description, scope: p.schema })),
  ];
  for (const place of places) {
    for (const c of CONSTRAINTS) {
      const hit = sentences(place.text).find((s) => c.pattern.test(s) && !(c.skipReturns && ABOUT_RETURNS.test(s)));
      if (!hit) continue;
      if (hasKeyword(place.scope, c.keywords)) continue;
      const phrase = c.pattern.exec(hit)?.[0] ?? hit;
      const noSchema = params.length === 0 ? " (the tool has no argument schema)" : "";
      const prefix =
        c.keywords[0] === "pattern" ? /(?:start|begin)s? with ['"`]?([A-Za-z0-9]+[_-])/i.exec(hit)?.[1] : undefined;
      out.push({
        tool,
        rule: "constraints-in-prose",
        where: place.where,
        problem: `states ${c.kind} in prose ("${phrase}" in ${quote(hit)}) that the schema does not${noSchema}.`,
        fix: prefix ? c.fix.replace("^cus_[A-Za-z0-9]+$", `^${prefix}[A-Za-z0-9]+$`) : c.fix,
        source: "rules",
      });
    }
  }
  return out;
}

// ------------------------------------------------------------------ rule 3: vague parameter names

const VAGUE =
  /^(arg|args|argument|param|params|parameter|parameters|input|inputs|data|value|val|values|obj|object|payload|body|info|item|thing|stuff|var|field|foo|bar|baz|tmp|temp|str|string|num|number|x|y|z|a|b|s|n)\d*$/i;

/** Names that need a qualifier when the tool deals with two kinds of them. */
const BARE = new Set(["email", "id", "name", "phone", "address", "url", "date", "number", "account", "user"]);

/** Roles whose mention makes a bare name ambiguous ("the customer's email or the agent's?"). */
const ROLES =
  /\b(customers?|users?|agents?|support|senders?|recipients?|admins?|administrators?|owners?|authors?|buyers?|sellers?|employees?|managers?|contacts?|members?|guests?|hosts?|vendors?|suppliers?|patients?|doctors?|students?|teachers?)\b/gi;

function roleCount(text: string): number {
  const found = new Set<string>();
  for (const m of text.matchAll(ROLES)) found.add(m[1].toLowerCase().replace(/s$/, ""));
  return found.size;
}

function checkParameterNames(tool: string, description: string, params: readonly Param[]): LintFinding[] {
  const out: LintFinding[] = [];
  const roles = roleCount(`${description} ${params.map((p) => p.description).join(" ")}`);
  for (const p of params) {
    const bare = p.name.toLowerCase();
    if (VAGUE.test(p.name)) {
      out.push({
        tool,
        rule: "vague-parameter",
        where: `parameter ${p.name}`,
        problem: `the name "${p.name}" says nothing about what goes in it; the model has no type checker, the name is the type.`,
        fix: `rename it after the domain concept it holds (e.g. customer_email, order_id, sql_query).`,
        source: "rules",
      });
      continue;
    }
    if (!BARE.has(bare)) continue;
    const sibling = params.find(
      (q) =>
        q !== p &&
        new RegExp(`(^|[_-])${bare}$|^${bare}[_-]|[a-z]${bare[0].toUpperCase()}${bare.slice(1)}$`, "i").test(q.name),
    );
    if (!sibling && roles < 2) continue;
    const why = sibling
      ? `next to parameter "${sibling.name}"`
      : `in a tool that mentions ${roles} kinds of people or accounts`;
    out.push({
      tool,
      rule: "vague-parameter",
      where: `parameter ${p.name}`,
      problem: `a bare "${p.name}" ${why}: the model cannot tell whose ${p.name} it is.`,
      fix: `qualify it (e.g. customer_${bare}, support_agent_${bare}).`,
      source: "rules",
    });
  }
  return out;
}

// ------------------------------------------------------------------ rule 4: returns

const RETURNS =
  /\b(returns?|returning|returned|yields?|outputs?|responds? with|replies with|gives back|you get|produces|results? (?:is|are|include|contains?)|answers? with|provides (?:a|an|the)? ?(?:list|summary|link|url|table|json|report|number|count|score|result|results|excerpt|answer)s?)\b/i;

function checkReturns(tool: string, description: string): LintFinding[] {
  if (RETURNS.test(description)) return [];
  return [
    {
      tool,
      rule: "no-return",
      where: "description",
      problem: "nothing says what it returns, so the model cannot plan on the result.",
      fix: `add one clause on what comes back and in what shape, e.g. "Returns up to 10 results with title, url and a 200-character excerpt".`,
      source: "rules",
    },
  ];
}

// ------------------------------------------------------------------ rule 5: side effects

type SideEffect = "writes" | "sends" | "charges" | "deletes" | "is irreversible";

/**
 * Verbs of each side effect. They count only where they are used as verbs ("Deletes the file",
 * "you can book", ", create reminders"), so "a book", "your store" or "data sets" are not writes.
 */
const SIDE_EFFECT_VERBS: Readonly<Record<Exclude<SideEffect, "is irreversible">, string>> = {
  writes:
    "creates?|creating|updates?|updating|modif(?:y|ies|ying)|edits?|editing|saves?|saving|writes?|writing|inserts?|uploads?|overwrites?|renames?|books?|booking|reserves?|schedules?|registers?|subscribes?|adds?|adding|appends?|changes?|moves?|sets? up",
  sends:
    "sends?|sending|notif(?:y|ies)|publish(?:es)?|posts? (?:to|on)|invites?|forwards?|broadcasts?|e-?mails? (?:the|a|your|them|it)|shares? (?:it|them|the|a|your|with)",
  charges:
    "charges?|charging|bills?|billing|pays?|paying|purchases?|buys?|buying|refunds?|prorates?|debits?|transfers? (?:money|funds)",
  deletes:
    "deletes?|deleting|removes?|removing|erases?|destroys?|drops?|purges?|cancels?|cancell?ing|revokes?|wipes?|unsubscribes?",
};

/** Nouns that state a side effect in a first clause ("IRREVERSIBLE BILLING CHANGE"), though not evidence of one elsewhere. */
const SIDE_EFFECT_NOUNS: Readonly<Record<Exclude<SideEffect, "is irreversible">, string>> = {
  writes: "change|update|write|edit|reservation|booking|registration",
  sends: "email|e-mail|message|notification|sms|post",
  charges: "billing|payment|charge|invoice|proration|purchase|credit",
  deletes: "deletion|removal|cancellation",
};

/** Where a word is used as a verb: a clause's start, or after "to", "and", "can", "it", "lets you" … */
const VERB_POSITION = String.raw`(?:^|[,;:(]\s*|\b(?:to|and|or|can|will|then|also|it|that|which|you|for|lets you|allows you to|helps you|tool)\s+)`;

type Effect = Exclude<SideEffect, "is irreversible">;
const kindsOf = <T>(make: (kind: Effect) => T): Record<Effect, T> =>
  Object.fromEntries((Object.keys(SIDE_EFFECT_VERBS) as Effect[]).map((k) => [k, make(k)])) as Record<Effect, T>;

/** Evidence in a sentence: the verbs, used as verbs. */
const SIDE_EFFECTS = kindsOf((k) => new RegExp(`${VERB_POSITION}(${SIDE_EFFECT_VERBS[k]})\\b`, "i"));
/** A first clause states a side effect with its verb or noun anywhere. */
const STATED = kindsOf((k) => new RegExp(`\\b(${SIDE_EFFECT_VERBS[k]}|${SIDE_EFFECT_NOUNS[k]})s?\\b`, "i"));
/**
 * Single words of names that are side effects (a tool name's first word, a parameter's words).
 * Words that are as often nouns (email, message, credit, book, order …) are left out: "EmailByNylas"
 * need not send anything.
 */
const SIDE_EFFECT_WORDS = kindsOf(
  (k) =>
    new RegExp(
      `^(?:${
        {
          writes:
            "create|update|modify|edit|save|write|insert|upload|overwrite|rename|reserve|register|subscribe|add|append|move",
          sends: "send|notify|publish|invite|forward|broadcast",
          charges: "charge|pay|purchase|buy|refund|prorate|proration|debit",
          deletes: "delete|remove|erase|destroy|drop|purge|cancel|revoke|wipe|unsubscribe",
        }[k]
      })$`,
      "i",
    ),
);

/** Sentences that say the tool does NOT do something ("Writes are rejected", "read-only"). */
const NEGATED = /\b(not|never|no|cannot|can't|won't|without|read-only|rejected|refuses?|refused|only reads?)\b/i;

/** Name words that are reads, so "get_email" does not send nor "list_payments" charge. */
const READ_VERBS = new Set([
  "get",
  "fetch",
  "list",
  "search",
  "find",
  "read",
  "lookup",
  "look",
  "query",
  "show",
  "view",
  "check",
  "count",
  "describe",
  "retrieve",
  "track",
  "status",
]);

/** Said of a change that cannot be taken back; read in negated sentences too ("cannot be undone"). */
const IRREVERSIBLE = /\b(irreversibl[ey]|permanent(?:ly)?|cannot be undone|can't be undone|not reversible|no undo)\b/i;

function effectsIn(text: string): Set<SideEffect> {
  const out = new Set<SideEffect>();
  for (const [kind, pattern] of Object.entries(SIDE_EFFECTS) as [SideEffect, RegExp][])
    if (pattern.test(text)) out.add(kind);
  if (IRREVERSIBLE.test(text)) out.add("is irreversible");
  return out;
}

/** Side effects named by single words (a tool name's first word, a parameter name's words). */
function effectsOfWords(words: readonly string[]): Set<SideEffect> {
  const out = new Set<SideEffect>();
  for (const [kind, pattern] of Object.entries(SIDE_EFFECT_WORDS) as [SideEffect, RegExp][]) {
    if (words.some((w) => pattern.test(w))) out.add(kind);
  }
  return out;
}

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

function checkSideEffects(tool: string, description: string, params: readonly Param[]): LintFinding[] {
  const words = nameWords(tool);
  const readTool = words.length < 2 || READ_VERBS.has(words[0]);
  const evident = new Map<SideEffect, string>();
  const note = (kinds: Set<SideEffect>, from: string): void => {
    for (const k of kinds) if (!evident.has(k)) evident.set(k, from);
  };
  if (!readTool) note(effectsOfWords(words.slice(0, 1)), `the name ${tool}`);
  for (const s of sentences(description)) {
    if (IRREVERSIBLE.test(s)) note(new Set<SideEffect>(["is irreversible"]), quote(s));
    // A boundary sentence is about what the tool is not for ("for sending …, use send_email").
    if (!NEGATED.test(s) && !BOUNDARY.test(s)) note(effectsIn(s), quote(s));
  }
  for (const p of params) note(effectsOfWords(nameWords(p.name)), `parameter ${p.name}`);
  const clause = firstClause(description);
  const stated = new Set<SideEffect>((Object.keys(STATED) as Effect[]).filter((k) => STATED[k].test(clause)));
  if (IRREVERSIBLE.test(clause)) stated.add("is irreversible");
  // Any stated side effect covers a plain write: "Book a flight" says it changes something.
  const missing = [...evident.entries()].filter(
    ([kind]) => !stated.has(kind) && !(kind === "writes" && stated.size > 0),
  );
  if (missing.length === 0) return [];
  const kinds = missing.map(([k]) => k).join(" and ");
  const from = missing.map(([k, where]) => `${k} (from ${where})`).join("; ");
  const grave = missing.some(([k]) => k === "charges" || k === "deletes" || k === "is irreversible");
  return [
    {
      tool,
      rule: "side-effect-late",
      where: "description",
      problem: `it ${kinds}, but the first clause (${quote(clause || "(empty)")}) does not say so: ${from}.`,
      fix: `open with the side effect (e.g. "${[
        grave ? "IRREVERSIBLE:" : "",
        capitalised(
          missing
            .map(([k]) => k)
            .filter((k) => k !== "is irreversible")
            .join(", "),
        ),
        "…",
      ]
        .filter((p) => p !== "")
        .join(" ")}"), then what it is for${grave ? "; say what cannot be undone" : ""}.`,
      source: "rules",
    },
  ];
}

// ------------------------------------------------------------------ rule 6: mode switch

const MODE_NAMES =
  /^(mode|action|actions|operation|op|command|cmd|verb|task|intent|do|what_to_do|operation_type|action_type)$/i;
const MAYBE_MODE_NAMES = /^(type|kind|method|function|func|request_type)$/i;
const JOB_VERBS =
  /^(create|read|get|list|search|find|update|edit|delete|remove|add|send|set|start|stop|run|cancel|book|fetch|upload|download|move|copy|rename|query|insert|post|put|patch|open|close|save|load|sync|check|lookup|subscribe|unsubscribe)/i;
const MODE_PROSE =
  /\b((?:depending on|based on|according to) the (?:mode|action|operation|command)|(?:modes|actions|operations) (?:are|include)|(?:mode|action|operation)s?:\s)/i;

function checkModeSwitch(tool: string, description: string, params: readonly Param[]): LintFinding[] {
  const out: LintFinding[] = [];
  for (const p of params) {
    const values = Array.isArray(p.schema.enum) ? p.schema.enum.map(String) : [];
    const jobLike = values.filter((v) => JOB_VERBS.test(v));
    const isMode = MODE_NAMES.test(p.name) || (MAYBE_MODE_NAMES.test(p.name) && jobLike.length >= 2);
    if (!isMode) continue;
    if (values.length === 1) continue;
    const jobs = values.length > 0 ? `${values.length} jobs (${values.slice(0, 5).join(", ")})` : "jobs";
    out.push({
      tool,
      rule: "mode-switch",
      where: `parameter ${p.name}`,
      problem: `"${p.name}" switches the tool between ${jobs}: several tools wearing one coat, and the model picks the wrong mode.`,
      fix: `split it into one tool per job${
        values.length > 0
          ? ` (e.g. ${values
              .slice(0, 3)
              .map((v) => `${tool}_${v}`.replace(/[^A-Za-z0-9_]+/g, "_"))
              .join(", ")})`
          : ""
      }, each with its own description.`,
      source: "rules",
    });
  }
  if (out.length === 0) {
    const hit = sentences(description).find((s) => MODE_PROSE.test(s));
    if (hit) {
      out.push({
        tool,
        rule: "mode-switch",
        where: "description",
        problem: `the description switches between jobs by a mode (${quote(hit)}).`,
        fix: "split it into one tool per job, each with its own description.",
        source: "rules",
      });
    }
  }
  return out;
}

// ------------------------------------------------------------------ one tool, pure

/** What {@link lintTool} needs to know besides the tool. */
export interface LintContext {
  /** The tool's near neighbours by routing similarity (none: rule `boundary` passes). */
  neighbours: readonly Neighbour[];
  /** Rules to check. @default every rule */
  rules?: readonly LintRule[];
}

/**
 * The deterministic findings for one card (pure): the author's description and JSON schema only,
 * never what was learned.
 */
export function lintCard(card: Pick<ToolCard, "name" | "author">, context: LintContext): LintFinding[] {
  const rules = new Set(context.rules ?? LINT_RULES);
  const description = card.author.description;
  const schema = card.author.schema;
  const params = paramsOf(schema);
  const out: LintFinding[] = [];
  if (rules.has("boundary")) out.push(...checkBoundary(card.name, description, context.neighbours));
  if (rules.has("constraints-in-prose")) out.push(...checkConstraints(card.name, description, params, schema));
  if (rules.has("vague-parameter")) out.push(...checkParameterNames(card.name, description, params));
  if (rules.has("no-return")) out.push(...checkReturns(card.name, description));
  if (rules.has("side-effect-late")) out.push(...checkSideEffects(card.name, description, params));
  if (rules.has("mode-switch")) out.push(...checkModeSwitch(card.name, description, params));
  return out;
}

// ------------------------------------------------------------------ the model's second opinion

const OpinionSchema = z.object({
  findings: z
    .array(
      z.object({
        rule: z.enum(LINT_RULES),
        where: z.string().default("description"),
        problem: z.string().min(1),
        fix: z.string().min(1),
      }),
    )
    .max(12),
});

const OPINION_INSTRUCTIONS = `You review the description of one tool an AI agent can call, against six rules:
${LINT_RULES.map((r) => `- ${r}: ${LINT_RULE_SUMMARIES[r]}`).join("\n")}
Return only a JSON object: {"findings": [{"rule", "where", "problem", "fix"}]}, with "rule" one of the six names above, an empty list when every rule holds. One short line each.`;

/** Ask the model about one tool; a reply that does not fit is a note, never a finding. */
async function secondOpinion(
  model: BaseChatModel,
  card: Pick<ToolCard, "name" | "author">,
  neighbours: readonly Neighbour[],
  config?: RunnableConfig,
): Promise<{ findings: LintFinding[]; note?: string }> {
  const payload = {
    name: card.name,
    description: clip(card.author.description, 2000),
    schema: card.author.schema,
    nearNeighbours: neighbours.map((n) => n.tool),
  };
  let text: string;
  try {
    const reply = await model.invoke(
      [new SystemMessage(OPINION_INSTRUCTIONS), new HumanMessage(JSON.stringify(payload))],
      config,
    );
    text = reply.text;
  } catch (error) {
    if (config?.signal?.aborted) throw error;
    return { findings: [], note: `${card.name}: the model call failed: ${clip(oneLine(errorMessage(error)), 200)}` };
  }
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1")
    .trim();
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { findings: [], note: `${card.name}: the model's reply is not a JSON object; ignored.` };
  }
  const parsed = OpinionSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      findings: [],
      note: `${card.name}: the model's reply does not fit (${issue.path.join(".") || "(root)"}: ${issue.message}); ignored.`,
    };
  }
  return {
    findings: parsed.data.findings.map((f) => ({
      tool: card.name,
      rule: f.rule,
      where: clip(oneLine(f.where), 60),
      problem: clip(oneLine(f.problem), 300),
      fix: clip(oneLine(f.fix), 300),
      source: "model" as const,
    })),
  };
}

// ------------------------------------------------------------------ every tool

const PARTITION = "lint";

/**
 * Each tool's near neighbours: its own routing vector routed like a request, in an index of the
 * tools built as the application routes ({@link ToolIndex}), keeping those at or above
 * `minSimilarity`.
 */
export async function nearNeighbours(
  tools: readonly ToolSource[],
  options: Pick<LintOptions, "index" | "minNeighbourSimilarity" | "maxNeighbours"> = {},
): Promise<{ cards: ToolCard[]; neighbours: Map<string, Neighbour[]> }> {
  const min = options.minNeighbourSimilarity ?? DEFAULT_LINT_OPTIONS.minNeighbourSimilarity;
  const max = options.maxNeighbours ?? DEFAULT_LINT_OPTIONS.maxNeighbours;
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, tools, { partition: PARTITION });
  const index = new ToolIndex({ ...(options.index ?? DEFAULT_LINT_OPTIONS.index), ledger });
  await index.reindex(PARTITION);
  const cards = await ledger.listCards(PARTITION);
  const byName = new Map(cards.map((c) => [c.name, c]));
  const neighbours = new Map<string, Neighbour[]>();
  for (const tool of tools) {
    const card = byName.get(tool.name)!;
    const [vector] = await index.cardVectors(PARTITION, card);
    const offers = await index.routeVector(PARTITION, vector, { k: max, exclude: new Set([card.name]) });
    neighbours.set(
      card.name,
      offers
        .filter((o) => o.score >= min)
        .map((o) => ({ tool: o.tool, similarity: Math.round(o.score * 1000) / 1000 })),
    );
  }
  return { cards: tools.map((t) => byName.get(t.name)!), neighbours };
}

/**
 * Lint every tool: the six rules of seed 002 (deterministic), then, with `model`, its second
 * opinion per tool. Only what the author wrote is judged (description and argument schema).
 * @throws InvalidInput for no tools, two tools of one name, or an unknown rule.
 */
export async function lintDescriptions(
  tools: readonly ToolSource[],
  options: LintOptions = {},
  config?: RunnableConfig,
): Promise<LintReport> {
  const o = { ...DEFAULT_LINT_OPTIONS, ...definedOnly(options) };
  if (tools.length === 0) throw new InvalidInput("lintDescriptions: there are no tools to lint.");
  const unknownRule = o.rules.find((r) => !(LINT_RULES as readonly string[]).includes(r));
  if (unknownRule !== undefined)
    throw new InvalidInput(`Unknown lint rule "${unknownRule}"; the rules are ${LINT_RULES.join(", ")}.`);
  const { cards, neighbours } = await nearNeighbours(tools, o);
  const findings: LintFinding[] = [];
  const modelNotes: string[] = [];
  for (const card of cards) {
    const near = neighbours.get(card.name) ?? [];
    findings.push(...lintCard(card, { neighbours: near, rules: o.rules }));
    if (options.model) {
      const opinion = await secondOpinion(options.model, card, near, config);
      findings.push(...opinion.findings.filter((f) => o.rules.includes(f.rule)));
      if (opinion.note) modelNotes.push(opinion.note);
    }
  }
  const order = new Map(cards.map((c, i) => [c.name, i]));
  findings.sort(
    (a, b) =>
      order.get(a.tool)! - order.get(b.tool)! ||
      LINT_RULES.indexOf(a.rule) - LINT_RULES.indexOf(b.rule) ||
      (a.source < b.source ? -1 : a.source > b.source ? 1 : 0),
  );
  const counts = Object.fromEntries(
    LINT_RULES.map((r) => [r, new Set(findings.filter((f) => f.rule === r).map((f) => f.tool)).size]),
  ) as Record<LintRule, number>;
  return {
    tools: cards.length,
    failing: new Set(findings.map((f) => f.tool)).size,
    counts,
    findings,
    neighbours: Object.fromEntries(cards.map((c) => [c.name, neighbours.get(c.name) ?? []])),
    modelNotes,
  };
}

/** One line per finding: `tool  rule  where: problem Fix: fix` (the `model` ones marked). */
export function findingLine(f: LintFinding): string {
  return `${f.tool}: ${f.rule}${f.source === "model" ? " (model)" : ""}: ${f.where}: ${f.problem} Fix: ${f.fix}`;
}
