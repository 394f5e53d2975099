/**
 * The shapes of `LessonManager`'s inputs, checked at the boundary (an operator's script, the CLI,
 * a web handler may pass anything): a malformed one is refused with `InvalidInput` naming the
 * method and the field, before any store is read (not a `RangeError` from a store or a
 * `TypeError` from a missing method).
 */
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { MAX_ID_LENGTH, MAX_PARTITION_KEY_LENGTH } from "../caller/partition.js";
import { RulePrioritySchema, RuleSourceSchema } from "../ledger/schema.js";

/** A control character or a lone UTF-16 surrogate: no id, name or partition holds one. */
const UNSTORABLE =
  /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A name or id of at most `max` characters, non-blank, with no control character or lone
 * surrogate. Its messages say what is wrong, never the value (a megabyte id is not repeated).
 */
function named(max: number, what = "a non-blank string") {
  return z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim() !== "", `must be ${what}`)
    .refine((s) => !UNSTORABLE.test(s), "must hold no control character or lone surrogate");
}

const name = named(MAX_ID_LENGTH);
const who = named(MAX_ID_LENGTH, "a non-blank string naming who");
const settings = z.record(z.string(), z.unknown());
const partition = z.object({ partition: named(MAX_PARTITION_KEY_LENGTH).optional() });
const ruleScope = z.enum(["partition", "shared"]);
const tools = z.array(name);

/** What the manager needs of its ledger: an object with the ledger's methods (a `Ledger`). */
const ledgerLike = z.custom<object>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    typeof (value as { listCards?: unknown }).listCards === "function" &&
    typeof (value as { commit?: unknown }).commit === "function",
  "must be a Ledger (openLedger() or new Ledger(store))",
);

/** The schemas of the manager's inputs, by method (positional arguments, then the options). */
export const MANAGER_INPUTS = {
  manager: z.object({ ledger: ledgerLike }),
  review: partition.extend({
    dryRun: z.boolean().optional(),
    autoApply: z.boolean().optional(),
    config: settings.optional(),
    tools: tools.optional(),
  }),
  id: name,
  tool: name,
  tools,
  partition,
  configure: z.record(z.string(), z.unknown()),
  flags: partition.extend({ config: settings.optional() }),
  apply: partition.extend({ approvedBy: who, config: settings.optional() }),
  dismiss: partition.extend({ by: z.string().optional() }),
  undo: partition.extend({ approvedBy: who }),
  effects: partition.extend({
    tools: tools.optional(),
    config: settings.optional(),
    undoFlagged: z.boolean().optional(),
    by: who.optional(),
  }),
  ruleScope: partition.extend({ scope: ruleScope.optional() }),
  listRules: partition.extend({
    tool: name.optional(),
    scope: z.enum(["partition", "shared", "all"]).optional(),
  }),
  rulesForPrompt: partition.extend({
    threadId: named(MAX_ID_LENGTH).optional(),
    maxRules: z.number().int().min(1).optional(),
  }),
  promoteRule: partition.extend({ by: who }),
  rule: z.object({
    id: name.optional(),
    tool: name,
    rule: z.string(),
    priority: RulePrioritySchema,
    source: RuleSourceSchema,
    tags: z.array(z.string()).optional(),
    promotedBy: z.string().optional(),
  }),
  memoryPass: partition.extend({ tools: tools.optional(), config: settings.optional() }),
  summarize: partition.extend({
    tools: tools.optional(),
    config: settings.optional(),
    force: z.boolean().optional(),
    evaluate: z.boolean().optional(),
  }),
  memoryOf: partition.extend({ config: settings.optional() }),
} as const;

/**
 * Check one input of a manager method against its schema.
 * @param method the method, e.g. `"apply"`; `field` the argument's name (`"options"`, `"id"`)
 * @throws InvalidInput naming the method and the first field that does not fit (never its value)
 */
export function checkInput(schema: z.ZodType, value: unknown, method: string, field: string): void {
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const at = [field, ...issue.path.map(String)].join(".");
  throw new InvalidInput(`LessonManager.${method}(): ${at} ${issue.message}.`, {
    context: { method, field: at },
  });
}
