/**
 * Rule operations over the ledger: put (vetted), get, list, delete, promote to the shared scope,
 * the rules that bind a caller (their partition's and the shared ones), and capture from a user
 * turn or a finished turn into stored rules. The ledger's rules collection keeps the rows
 * (`ledger/collections/rules.ts`); the decisions are here and in the pure modules beside it.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { clipForMessage, InvalidInput, NotFound } from "../errors.js";
import type { Ledger, RuleInput } from "../ledger/ledger.js";
import type { Rule, TurnRecord } from "../ledger/schema.js";
import { type CaptureEdictsOptions, type EdictCandidate, type EdictFinding, findEdicts } from "./capture.js";
import { confirmEdicts, type EdictModelRejection } from "./confirm.js";
import { compareRules, type RuleScope, type RuleView, SHARED_SCOPE, UNSCOPED_TOOL, viewOf } from "./model.js";
import { observeRepeatedFailures, type ObserveOptions } from "./observe.js";
import { vetEdictText } from "./vet.js";
import { RESERVED_SCOPE_PREFIX } from "../caller/partition.js";

/** Which rows an operation reads or writes: a partition's own, or the shared scope's. */
export interface RuleScopeOptions {
  /** The caller's partition. */
  partition: string;
  /**
   * `"shared"` to act on the shared scope instead of the partition.
   * @default "partition"
   */
  scope?: RuleScope;
}

/** The defaults of {@link RuleScopeOptions} (`partition` is required). */
export const DEFAULT_RULE_SCOPE_OPTIONS: Readonly<Required<Pick<RuleScopeOptions, "scope">>> = Object.freeze({
  scope: "partition",
});

/** The partition that holds the rows an option set names. */
function homeOf(options: RuleScopeOptions): string {
  return (options.scope ?? DEFAULT_RULE_SCOPE_OPTIONS.scope) === "shared" ? SHARED_SCOPE : options.partition;
}

/**
 * The partition a write goes to. The shared scope is written only when the call says so
 * (`scope: "shared"`, an operator's explicit call, or {@link promoteRule}): a caller's partition
 * that names a reserved scope (`~shared`, any `~` name) is refused, so no captured edict or
 * observation lands there. (No resolver gives a caller such a partition, see `caller/partition.ts`;
 * this is the second lock.)
 */
function writeHomeOf(options: RuleScopeOptions): string {
  const home = homeOf(options);
  if ((options.scope ?? DEFAULT_RULE_SCOPE_OPTIONS.scope) === "partition" && home.startsWith(RESERVED_SCOPE_PREFIX)) {
    throw new InvalidInput(
      `Refused a rule write into "${home}" named as a caller's partition: it is a scope the package reserves. ` +
        'The shared scope is written only with `scope: "shared"` (an operator\'s call) or by promoting a rule.',
      { context: { partition: home } },
    );
  }
  return home;
}

/**
 * Store a rule after vetting its text (normalized, one line, at most 240 characters, nothing
 * aimed at the model): the user's wording is kept. Returns it as stored, with its scope.
 * @throws InvalidInput for a blank tool, text the vet refuses (saying why), or a bad field.
 */
export async function putRule(ledger: Ledger, input: RuleInput, options: RuleScopeOptions): Promise<RuleView> {
  const tool = input.tool?.trim() ?? "";
  if (tool === "") {
    throw new InvalidInput(`A rule needs a tool name; got a blank one. Use "${UNSCOPED_TOOL}" for a rule of no tool.`);
  }
  const vetted = vetEdictText(input.rule ?? "");
  if (!vetted.ok) {
    throw new InvalidInput(
      `Refused the rule for "${tool}": ${vetted.detail} (${vetted.reason}). Write it as one plain sentence to the agent.`,
      { context: { tool, reason: vetted.reason } },
    );
  }
  return viewOf(await ledger.putRule(writeHomeOf(options), { ...input, tool, rule: vetted.text }));
}

/** A rule by id, in the partition (or the shared scope); `null` when there is none. */
export async function getRule(ledger: Ledger, id: string, options: RuleScopeOptions): Promise<RuleView | null> {
  const rule = await ledger.getRule(homeOf(options), id);
  return rule ? viewOf(rule) : null;
}

/** Options of {@link listRules}. */
export interface ListRulesOptions {
  /** The caller's partition. */
  partition: string;
  /** Only this tool's rules. @default every tool */
  tool?: string;
  /**
   * The partition's own rules, the shared scope's, or both: what binds the caller.
   * @default "all"
   */
  scope?: RuleScope | "all";
}

/** The defaults of {@link ListRulesOptions} (`partition` is required; `tool` has none: every tool). */
export const DEFAULT_LIST_RULES_OPTIONS: Readonly<Required<Pick<ListRulesOptions, "scope">>> = Object.freeze({
  scope: "all",
});

/** Rules by priority (critical, high, normal), then the most recently updated first, each with its scope. */
export async function listRules(ledger: Ledger, options: ListRulesOptions): Promise<RuleView[]> {
  const scope = options.scope ?? DEFAULT_LIST_RULES_OPTIONS.scope;
  const filter = options.tool === undefined ? {} : { tool: options.tool };
  const homes =
    scope === "shared"
      ? [SHARED_SCOPE]
      : scope === "partition" || options.partition === SHARED_SCOPE
        ? [options.partition]
        : [options.partition, SHARED_SCOPE];
  const rows = (await Promise.all(homes.map((p) => ledger.listRules(p, filter)))).flat();
  return rows.sort(compareRules).map(viewOf);
}

/**
 * The versions of the partition and of the shared scope, whose rules bind it too
 * (`ledger/versions.ts`), in one store read. Taken before {@link bindingRules} reads: an unchanged
 * pair means nothing that binds the partition was written since, by any process.
 */
export async function bindingVersions(ledger: Ledger, partition: string): Promise<[number, number]> {
  const [own, shared] = await ledger.readVersions([partition, SHARED_SCOPE]);
  return [own.seq, shared.seq];
}

/** The rules that bind a caller: their partition's and the shared scope's, optionally of some tools only. */
export async function bindingRules(ledger: Ledger, partition: string, tools?: readonly string[]): Promise<Rule[]> {
  const all = await listRules(ledger, { partition });
  if (tools === undefined) return all;
  const wanted = new Set(tools);
  return all.filter((r) => wanted.has(r.tool));
}

/** Delete a rule of the partition (or of the shared scope). Whether there was one. */
export async function deleteRule(ledger: Ledger, id: string, options: RuleScopeOptions): Promise<boolean> {
  return ledger.deleteRule(homeOf(options), id);
}

/** Options of {@link promoteRule}. */
export interface PromoteRuleOptions {
  /** The partition the rule is in now. */
  partition: string;
  /** Who promoted it (kept on the rule). */
  by: string;
}

/**
 * Move a rule from a partition into the shared scope (an operator's explicit call): from then on
 * every partition's prompt carries it. Same id; its text is vetted again; `promotedBy` records
 * who. A shared rule with that id already there is updated.
 * @throws InvalidInput for a blank `by`, or a rule already in the shared scope.
 * @throws NotFound when the partition has no rule with this id.
 */
export async function promoteRule(ledger: Ledger, id: string, options: PromoteRuleOptions): Promise<RuleView> {
  const by = options.by?.trim() ?? "";
  if (by === "") throw new InvalidInput("promoteRule needs `by`: who promotes the rule to the shared scope.");
  if (options.partition === SHARED_SCOPE) throw new InvalidInput(`Rule ${id} is in the shared scope already.`);
  const rule = await ledger.getRule(options.partition, id);
  if (!rule) {
    throw new NotFound(
      `Partition "${clipForMessage(options.partition, 256)}" has no rule ${clipForMessage(id)}; \`tool-lessons rules list\` shows its rules.`,
      { context: { id: clipForMessage(id) } },
    );
  }
  const vetted = vetEdictText(rule.rule);
  if (!vetted.ok) throw new InvalidInput(`Rule ${id} cannot be shared: ${vetted.detail} (${vetted.reason}).`);
  const moved = await ledger.moveRule(options.partition, id, SHARED_SCOPE, { promotedBy: by });
  if (!moved)
    throw new NotFound(`Rule ${clipForMessage(id)} was deleted while it was being promoted.`, {
      context: { id: clipForMessage(id) },
    });
  return viewOf(moved);
}

/**
 * Options of {@link recordEdicts}: those of `captureEdicts` (registered tools, the tools the turn
 * ran, the alias table; defaults in `DEFAULT_CAPTURE_EDICTS_OPTIONS`), plus where and what.
 */
export interface RecordEdictsOptions extends CaptureEdictsOptions {
  /** The caller's partition: an edict binds it only. */
  partition: string;
  /** The user turn. */
  text: string;
  /**
   * A chat model that confirms each candidate before it is stored (structured output, checked).
   * Its failure leaves the code's decision standing.
   * @default none: the capture rules decide
   */
  model?: BaseChatModel;
}

/** What {@link recordEdicts} did. */
export interface RecordedEdicts {
  /** The rules stored (a repeat of a stored edict updates it, keeping its `createdAt`). */
  stored: RuleView[];
  /** Edict sentences whose text the vet refused. */
  refused: Extract<EdictFinding, { refused: unknown }>[];
  /** Candidates the model said are no edicts. */
  dropped: EdictCandidate[];
  /** Why the model's answer was not used, when it was asked and failed. */
  modelRejected?: EdictModelRejection;
}

/**
 * Capture the edicts of a user turn ({@link findEdicts}), confirm them with the model when one is
 * given, and store each as a critical `user_explicit` rule of the caller's partition.
 */
export async function recordEdicts(
  ledger: Ledger,
  options: RecordEdictsOptions,
  config?: RunnableConfig,
): Promise<RecordedEdicts> {
  const findings = findEdicts(options.text, options);
  const refused = findings.filter((f): f is Extract<EdictFinding, { refused: unknown }> => "refused" in f);
  let candidates = findings.flatMap((f) => ("candidate" in f ? [f.candidate] : []));
  let dropped: EdictCandidate[] = [];
  let modelRejected: EdictModelRejection | undefined;
  if (options.model && candidates.length > 0) {
    const confirmed = await confirmEdicts(options.model, options.text, candidates, { tools: options.tools }, config);
    candidates = confirmed.kept;
    dropped = confirmed.dropped;
    modelRejected = confirmed.rejected;
  }
  const stored: RuleView[] = [];
  for (const c of candidates) {
    stored.push(
      await putRule(
        ledger,
        { tool: c.tool, rule: c.rule, priority: c.priority, source: c.source, tags: c.tags },
        { partition: options.partition },
      ),
    );
  }
  return { stored, refused, dropped, ...(modelRejected ? { modelRejected } : {}) };
}

/**
 * Store the observations of a finished turn ({@link observeRepeatedFailures}): a normal
 * `post_turn` rule for each tool that failed at least `minFailures` times in it.
 */
export async function recordObservations(
  ledger: Ledger,
  turn: Pick<TurnRecord, "partition" | "calls">,
  options: ObserveOptions = {},
): Promise<RuleView[]> {
  const out: RuleView[] = [];
  for (const o of observeRepeatedFailures(turn, options))
    out.push(await putRule(ledger, o, { partition: turn.partition }));
  return out;
}
