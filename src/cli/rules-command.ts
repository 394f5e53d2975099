/**
 * `tool-lessons rules list|put|delete|promote`: the operator's view of tool-scoped rules. Each
 * subcommand opens the ledger, does one thing through the `LessonManager`, and closes it; the
 * listing shows which scope each rule is in.
 */
import { z } from "zod";
import { NotFound } from "../errors.js";
import { RulePrioritySchema, RuleSourceSchema } from "../ledger/schema.js";
import { type RuleView, UNSCOPED_TOOL } from "../rules/model.js";
import { flag, nonEmpty, type OptionSpec, parseCommandArgs, stringList, stringOption, UsageError } from "./args.js";
import {
  EXIT_HELP,
  JSON_OPTION,
  json,
  LEDGER_HELP,
  LEDGER_OPTIONS,
  PARTITION_HELP,
  withLedger,
} from "./ledger-session.js";
import { table } from "./format.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";

const SUBCOMMANDS = ["list", "put", "delete", "promote"] as const;
const ListScopeSchema = z.enum(["partition", "shared", "all"]);

const HELP = `Usage: tool-lessons rules list [--tool NAME] [--scope partition|shared|all] [--json]
       tool-lessons rules put --tool NAME|--unscoped --text TEXT [--priority P] [--tag T ...] [--shared] [--json]
       tool-lessons rules delete ID [--shared] [--json]
       tool-lessons rules promote ID --by NAME [--json]

Tool-scoped rules: critical and high ones are pinned into the agent's system prompt, normal ones
served on demand (the lesson retriever and the recall_tool_rules tool). A rule binds its
partition, or every partition when it is in the shared scope.

  list      the rules that bind the partition: its own and the shared ones, by priority, then the
            most recently updated; the scope column says which is which
  put       store a rule (its text is vetted: one line, at most 240 characters, nothing aimed at the
            model); the same tool and text update one rule, keeping when it was created
  delete    delete a rule of the partition (or, with --shared, of the shared scope)
  promote   move a rule of the partition into the shared scope (every partition's prompt carries it)

Options:
  --tool NAME             the tool (list: only its rules; put: the tool the rule binds)
  --unscoped              put: a rule of no tool (stored as "${UNSCOPED_TOOL}", kept out of the prompt)
  --text TEXT             put: the rule, in words, e.g. "Never email Sarah."
  --priority P            put: critical, high or normal (default normal)
  --source S              put: programmatic, user_explicit or post_turn (default programmatic)
  --tag T                 put: a label (repeatable)
  --id ID                 put: the rule's id (default: derived from tool and text)
  --scope S               list: partition, shared or all (default all)
  --shared                put/delete: the shared scope instead of the partition
  --by NAME               promote: who promotes it (required; kept on the rule)
  --json                  print the rule(s) as JSON
${PARTITION_HELP}
${LEDGER_HELP}

A SQLite ledger file that does not exist yet is created by put.

${EXIT_HELP}

Examples:
  tool-lessons rules put --tool send_email --text "Never email Sarah." --priority critical --partition u:alice
  tool-lessons rules list --partition u:alice
  tool-lessons rules promote rule-bkdmqrst... --by alice --partition u:alice
`;

const OPTIONS: OptionSpec = {
  ...LEDGER_OPTIONS,
  ...JSON_OPTION,
  tool: { type: "string" },
  unscoped: { type: "boolean" },
  text: { type: "string" },
  priority: { type: "string" },
  source: { type: "string" },
  tag: { type: "string", multiple: true },
  id: { type: "string" },
  scope: { type: "string" },
  shared: { type: "boolean" },
  by: { type: "string" },
};

/** The options each subcommand takes, besides the ledger, partition and --json. */
const ALLOWED: Readonly<Record<(typeof SUBCOMMANDS)[number], readonly string[]>> = {
  list: ["tool", "scope"],
  put: ["tool", "unscoped", "text", "priority", "source", "tag", "id", "shared"],
  delete: ["shared"],
  promote: ["by"],
};

/** An option's value through a zod enum. @throws UsageError naming the choices. */
function choice<T extends string>(schema: z.ZodType<T>, raw: string | undefined, option: string): T | undefined {
  if (raw === undefined) return undefined;
  const parsed = schema.safeParse(raw.trim());
  if (parsed.success) return parsed.data;
  const options = (schema as unknown as { options?: readonly string[] }).options ?? [];
  throw new UsageError(`--${option} must be one of ${options.join(", ")}; got ${JSON.stringify(raw)}.`);
}

function renderRules(partition: string, rules: readonly RuleView[]): string[] {
  if (rules.length === 0) return [`no rules bind partition "${partition}"`];
  const rows = rules.map((r) => [
    r.scope,
    r.priority,
    r.tool === UNSCOPED_TOOL ? "(unscoped)" : r.tool,
    r.id,
    r.source,
    r.rule,
  ]);
  return [
    `rules binding partition "${partition}" (${rules.length}):`,
    ...table(["scope", "priority", "tool", "id", "source", "rule"], rows).map((l) => `  ${l}`),
  ];
}

function describe(rule: RuleView): string {
  const tool = rule.tool === UNSCOPED_TOOL ? "no tool (unscoped)" : rule.tool;
  return `${rule.id}  [${rule.priority}] ${tool}, ${rule.scope === "shared" ? "shared scope" : `partition "${rule.partition}"`}: ${rule.rule}`;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS, {
    min: 1,
    max: 2,
    name: `a subcommand (${SUBCOMMANDS.join(", ")})`,
  });
  const sub = SUBCOMMANDS.find((s) => s === positionals[0]);
  if (!sub) {
    throw new UsageError(`unknown subcommand ${JSON.stringify(positionals[0])}; use ${SUBCOMMANDS.join(", ")}.`);
  }
  const given = Object.keys(values).filter((k) => values[k] !== undefined && !(k in LEDGER_OPTIONS) && k !== "json");
  const stray = given.filter((k) => !ALLOWED[sub].includes(k));
  if (stray.length > 0) throw new UsageError(`rules ${sub} takes no --${stray[0]}.`);
  const takesId = sub === "delete" || sub === "promote";
  if (takesId && positionals.length < 2) throw new UsageError(`missing the rule ID (see \`tool-lessons rules list\`).`);
  if (!takesId && positionals.length > 1)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[1])}.`);
  const id = takesId ? nonEmpty(positionals[1], "the rule ID")! : undefined;
  const asJson = flag(values, "json");
  const shared = flag(values, "shared");

  if (sub === "list") {
    const scope = choice(ListScopeSchema, stringOption(values, "scope"), "scope");
    const tool = nonEmpty(stringOption(values, "tool"), "--tool");
    return withLedger(values, io, async ({ manager, partition }) => {
      const rules = await manager.listRules({ partition, ...(tool ? { tool } : {}), ...(scope ? { scope } : {}) });
      if (asJson) json(io, rules);
      else println(io.stdout, renderRules(partition, rules));
      return EXIT.ok;
    });
  }

  if (sub === "put") {
    const tool = nonEmpty(stringOption(values, "tool"), "--tool");
    const unscoped = flag(values, "unscoped");
    if (tool !== undefined && unscoped) throw new UsageError("give --tool NAME or --unscoped, not both.");
    if (tool === undefined && !unscoped)
      throw new UsageError("missing --tool NAME (or --unscoped for a rule of no tool).");
    const text = nonEmpty(stringOption(values, "text"), "--text");
    if (text === undefined) throw new UsageError('missing --text TEXT: the rule, e.g. --text "Never email Sarah."');
    const priority = choice(RulePrioritySchema, stringOption(values, "priority"), "priority") ?? "normal";
    const source = choice(RuleSourceSchema, stringOption(values, "source"), "source") ?? "programmatic";
    const tags = stringList(values, "tag").map((t) => nonEmpty(t, "--tag")!);
    const ruleId = nonEmpty(stringOption(values, "id"), "--id");
    return withLedger(
      values,
      io,
      async ({ manager, partition }) => {
        const rule = await manager.putRule(
          {
            tool: tool ?? UNSCOPED_TOOL,
            rule: text,
            priority,
            source,
            ...(tags.length > 0 ? { tags } : {}),
            ...(ruleId ? { id: ruleId } : {}),
          },
          { partition, scope: shared ? "shared" : "partition" },
        );
        if (asJson) json(io, rule);
        else println(io.stdout, `stored ${describe(rule)}`);
        return EXIT.ok;
      },
      { create: true },
    );
  }

  if (sub === "delete") {
    return withLedger(values, io, async ({ manager, partition }) => {
      const scope = shared ? "shared" : "partition";
      const rule = await manager.getRule(id!, { partition, scope });
      const deleted = await manager.deleteRule(id!, { partition, scope });
      if (!deleted) {
        const where = shared ? "the shared scope" : `partition "${partition}"`;
        const hint = shared ? "" : " (a shared rule is deleted with --shared)";
        throw new NotFound(`${where} has no rule ${id}${hint}; \`tool-lessons rules list\` shows them.`);
      }
      if (asJson) json(io, { deleted: id, scope, rule });
      else println(io.stdout, `deleted rule ${id} from ${shared ? "the shared scope" : `partition "${partition}"`}`);
      return EXIT.ok;
    });
  }

  const by = nonEmpty(stringOption(values, "by"), "--by");
  if (by === undefined) throw new UsageError("missing --by NAME: who promotes the rule (kept on it).");
  return withLedger(values, io, async ({ manager, partition }) => {
    const rule = await manager.promoteRule(id!, { partition, by });
    if (asJson) json(io, rule);
    else println(io.stdout, `promoted to the shared scope (by ${by}): ${describe(rule)}`);
    return EXIT.ok;
  });
}

/** `tool-lessons rules`. */
export const rulesCommand: Command = {
  name: "rules",
  summary: "tool-scoped rules: list, put, delete, promote to the shared scope",
  help: HELP,
  run,
};
