/**
 * The shapes of `LessonManager`'s inputs, checked at the boundary (an operator's script, the CLI,
 * a web handler may pass anything): a malformed one is refused with `InvalidInput` naming the
 * method and the field, before any store is read (not a `RangeError` from a store or a
 * `TypeError` from a missing method).
 */
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { RulePrioritySchema, RuleSourceSchema } from "../ledger/schema.js";

const name = z.string().refine((s) => s.trim() !== "", "must be a non-blank string");
const who = z.string().refine((s) => s.trim() !== "", "must be a non-blank string naming who");
const settings = z.record(z.string(), z.unknown());
const partition = z.object({ partition: name.optional() });
const ruleScope = z.enum(["partition", "shared"]);
const tools = z.array(name);

/** The schemas of the manager's inputs, by method (positional arguments, then the options). */
export const MANAGER_INPUTS = {
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
    tool: z.string().optional(),
    scope: z.enum(["partition", "shared", "all"]).optional(),
  }),
  rulesForPrompt: partition.extend({
    threadId: z.string().optional(),
    maxRules: z.number().int().min(1).optional(),
  }),
  promoteRule: partition.extend({ by: who }),
  rule: z.object({
    id: z.string().optional(),
    tool: z.string(),
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
