/**
 * The description linter's six rules, each a pure check of one tool's description and argument
 * schema (see the table in `lint-descriptions.ts`), and {@link lintCard}, which runs those asked
 * for over one card.
 */
import type { ToolCard } from "../ledger/schema.js";
import { LINT_RULES, type LintFinding, type LintRule, type Neighbour } from "./lint-findings.js";
import { firstClause, hasKeyword, names, nameWords, type Param, paramsOf, quote, sentences } from "./lint-text.js";

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

/** What {@link lintCard} needs to know besides the tool. */
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
