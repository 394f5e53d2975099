import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { RevisionConflict } from "../errors.js";
import type { ToolIndex } from "../routing/tool-index.js";
import { type UsageFlag, usageFlags } from "../routing/usage-flags.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import { partitionOf } from "../caller/partition.js";
import type { RuleInput } from "../ledger/ledger.js";
import { DEFAULT_RULES_BLOCK, renderRulesBlock, type RulesBlock, RulesBlockCache } from "../prompt/rules-block.js";
import type { RuleScope, RuleView } from "../rules/model.js";
import { bindingRules, bindingVersions, deleteRule, getRule, listRules, promoteRule, putRule } from "../rules/store.js";
import type { Revision, ToolStats } from "../ledger/schema.js";
import {
  type EvaluationReport,
  type MemoryPassOptions,
  type SummarizeOptions,
  type SummaryReport,
  ToolMemory,
  type ToolMemoryOptions,
  type ToolMemoryView,
} from "../memory/tool-memory.js";
import { renderGuideline, renderMemoryBlock } from "../prompt/memory.js";
import { definedOnly } from "../internal.js";
import { parseSettings, type Settings, type SettingsInput } from "../settings.js";
import { rankByCoverage } from "./coverage.js";
import { DeterministicProposer } from "./deterministic-proposer.js";
import { ModelProposer } from "./model-proposer.js";
import type { Proposer } from "./proposer.js";
import { DEFAULT_FAILURE_SINK, FailureReporter, type FailureSink } from "../failure.js";
import { applyRevision } from "./review/apply.js";
import { checkEffects, type EffectCheckOptions } from "./review/effect.js";
import { undoNewest } from "./review/undo.js";
import { MIN_EFFECT_OPPORTUNITIES, type RevisionEffect } from "./effect.js";
import { type Review, runReview } from "./review/run.js";
import { checkInput, MANAGER_INPUTS } from "./manager-input.js";
import { DEFAULT_VET_OPTIONS, type VetOptions } from "./vet.js";
import { DEFAULT_EXAMPLE_OBJECTIVE, type ExampleObjective, parseExampleObjective } from "./what-if.js";

export { AUTO_APPROVER, type Review } from "./review/run.js";

/** Options of {@link LessonManager}. */
export interface LessonManagerOptions {
  /** The ledger: records, cards, revisions, settings. */
  ledger: Ledger;
  /** The routing index (updated on apply and undo; asked "what if" during review). */
  index: ToolIndex;
  /**
   * Who proposes lessons. Ignored when `model` is given.
   * @default a DeterministicProposer choosing examples by routing coverage
   */
  proposer?: Proposer;
  /**
   * A chat model: lessons are then proposed by a {@link ModelProposer} over it.
   * @default none (the `proposer`)
   */
  model?: BaseChatModel;
  /**
   * How routing values a candidate example (see {@link WhatIf.chooseExamples}); fields not given
   * keep their default. Checked when the manager is made: an unknown field or a value out of
   * range throws `InvalidInput`.
   * @default DEFAULT_EXAMPLE_OBJECTIVE
   */
  exampleObjective?: Partial<ExampleObjective>;
  /**
   * Options of the vet: extra patterns of text aimed at the model.
   * @default DEFAULT_VET_OPTIONS
   */
  vet?: VetOptions;
  /**
   * Tool memory: who evaluates each call and who writes guidelines (e.g.
   * `{ evaluator: new ModelEvaluator(model), synthesizer: new ModelSynthesizer(model) }`).
   * @default {} (the deterministic evaluator and synthesizer)
   */
  memory?: Omit<ToolMemoryOptions, "ledger">;
  /**
   * Hears what the manager went on without (stage `"manage"`): the manager's own routing index not
   * brought up to date after an apply or undo was stored (running agents follow the stored change
   * all the same, and so does this index on its next use).
   * @default a `console.warn` of the redacted failure
   */
  failureSink?: FailureSink;
}

/** The defaults of {@link LessonManagerOptions} (`ledger` and `index` are required; `model` has none). */
export const DEFAULT_LESSON_MANAGER_OPTIONS: Readonly<
  Required<Omit<LessonManagerOptions, "ledger" | "index" | "model">>
> = Object.freeze({
  failureSink: DEFAULT_FAILURE_SINK,
  proposer: new DeterministicProposer({ rankExamples: rankByCoverage }),
  exampleObjective: DEFAULT_EXAMPLE_OBJECTIVE,
  vet: DEFAULT_VET_OPTIONS,
  memory: Object.freeze({}),
});

/** Options of {@link LessonManager.review}. */
export interface ReviewOptions {
  /** @default the caller's partition of the method's `config` (its ids; `"default"` without) */
  partition?: string;
  /** Propose and return revisions without storing anything. @default false */
  dryRun?: boolean;
  /** Apply every revision at once, approved by {@link AUTO_APPROVER}. @default false */
  autoApply?: boolean;
  /** Settings for this review only, over the partition's stored ones. @default {} */
  config?: SettingsInput;
  /** Review only these tools. @default every registered tool */
  tools?: readonly string[];
}

/** The defaults of {@link ReviewOptions} (`tools` has none: every tool). */
export const DEFAULT_REVIEW_OPTIONS: Readonly<Required<Omit<ReviewOptions, "tools">>> = Object.freeze({
  partition: DEFAULT_PARTITION,
  dryRun: false,
  autoApply: false,
  config: {},
});

interface PartitionOption {
  /** @default "default" */
  partition?: string;
}

/** Which rules a rule method acts on: a partition's own, or the shared scope's. */
export interface RuleScopeOption extends PartitionOption {
  /**
   * `"shared"` for the shared scope (the rules every partition's prompt carries).
   * @default "partition"
   */
  scope?: RuleScope;
}

/** Options of {@link LessonManager.rulesForPrompt}. */
export interface RulesForPromptOptions extends PartitionOption {
  /**
   * The conversation thread (e.g. LangGraph's `thread_id`): the block is then rendered once for
   * it and served again until a rule that binds it changes.
   * @default none: rendered on every call
   */
  threadId?: string;
  /**
   * Most rules the block lists (critical ones are listed even past it).
   * @default 30 (DEFAULT_RULES_BLOCK.maxRules)
   */
  maxRules?: number;
}

/** The defaults of {@link RulesForPromptOptions} (`threadId` has none: rendered on every call). */
export const DEFAULT_RULES_FOR_PROMPT_OPTIONS: Readonly<Required<Omit<RulesForPromptOptions, "threadId">>> =
  Object.freeze({ partition: DEFAULT_PARTITION, maxRules: DEFAULT_RULES_BLOCK.maxRules });

/** Options of {@link LessonManager.summarize}. */
export interface SummarizeToolsOptions extends PartitionOption, Omit<SummarizeOptions, "tools"> {
  /**
   * Evaluate the calls no pass has settled yet first, so the guidelines read them.
   * @default true
   */
  evaluate?: boolean;
}

/** What {@link LessonManager.memoryFor} returns: a tool's memory, and its guideline as the model is shown it. */
export interface ToolMemoryReport extends ToolMemoryView {
  /** The guideline and its statistics block as rendered for a prompt; "" without a guideline. */
  text: string;
}

/**
 * The operator's API: review the ledger for lessons, apply (with who approved), dismiss, undo,
 * history, settings, usage flags and tool-scoped rules (the rule methods delegate to `src/rules`).
 * Every change to a card is a revision in the ledger; the index is kept in step on apply and undo.
 *
 * A review is one run of `runReview` (`learn/review/run.ts`: gather → detect → select → evidence →
 * propose → vet → revision → store/apply), the same run the graph's learn node makes.
 */
export class LessonManager {
  readonly ledger: Ledger;
  readonly index: ToolIndex;
  readonly proposer: Proposer;
  /** Tool memory over the same ledger: evaluation passes, statistics and guidelines. */
  readonly memory: ToolMemory;
  private readonly objective: ExampleObjective;
  private readonly vetOptions: VetOptions;
  /** Hears what the manager went on without (stage `"manage"`). */
  private readonly reporter: FailureReporter;
  /** The pinned rules block, once per thread (`rulesForPrompt` with a `threadId`). */
  private readonly rulesBlocks = new RulesBlockCache({ render: (rules, o) => renderRulesBlock(rules, o) });

  /** @throws InvalidInput when `options` is not an object with a `ledger` */
  constructor(options: LessonManagerOptions) {
    checkInput(MANAGER_INPUTS.manager, options, "constructor", "options");
    const o = { ...DEFAULT_LESSON_MANAGER_OPTIONS, ...definedOnly(options) };
    this.ledger = options.ledger;
    this.index = options.index;
    this.objective = parseExampleObjective(o.exampleObjective);
    this.vetOptions = { ...DEFAULT_VET_OPTIONS, ...definedOnly(o.vet) };
    this.proposer = o.model ? new ModelProposer(o.model) : o.proposer;
    this.memory = new ToolMemory({ ...o.memory, ledger: options.ledger });
    this.reporter = new FailureReporter("manage", o.failureSink);
  }

  /** After a stored apply or undo: the index's failure to keep up is reported, not thrown (the store holds the change). */
  private indexBehind = (error: unknown): void => {
    this.reporter.report(
      "index_update",
      "the manager's routing index was not brought up to date after a stored change; running agents and this index follow the store on their next turn.",
      error,
    );
  };

  /** Store settings for a partition (validated; unknown keys refused). */
  async configure(settings: SettingsInput, options: PartitionOption = {}): Promise<Settings> {
    checkInput(MANAGER_INPUTS.configure, settings, "configure", "settings");
    checkInput(MANAGER_INPUTS.partition, options, "configure", "options");
    return this.ledger.configure(options.partition ?? DEFAULT_PARTITION, settings);
  }

  /** Revisions of a tool, newest first. */
  async history(tool: string, options: PartitionOption = {}): Promise<Revision[]> {
    checkInput(MANAGER_INPUTS.tool, tool, "history", "tool");
    checkInput(MANAGER_INPUTS.partition, options, "history", "options");
    return this.ledger.listRevisions(options.partition ?? DEFAULT_PARTITION, { tool });
  }

  /** Usage flags of a partition (`retrieved_never_called`, `never_retrieved`). */
  async flags(options: PartitionOption & { config?: SettingsInput } = {}): Promise<UsageFlag[]> {
    checkInput(MANAGER_INPUTS.flags, options, "flags", "options");
    const partition = options.partition ?? DEFAULT_PARTITION;
    const settings = parseSettings(options.config ?? {}, await this.ledger.getSettings(partition));
    const [cards, routes, calls] = await Promise.all([
      this.ledger.listCards(partition),
      this.ledger.listRoutes(partition),
      this.ledger.listCalls(partition),
    ]);
    return usageFlags({ routes, calls, tools: cards.map((c) => c.name), settings });
  }

  /**
   * Read the partition's records, find what repeats, propose lessons per tool, vet them, and store
   * each tool's kept lessons as a proposed revision. A tool with a revision waiting is not
   * reviewed; a tool with no new calls since its last review costs no model call (only a proposer
   * that calls no model looks at it again: routing may have moved since); at most `maxTools`
   * tools, those with new calls first, then those with the most failed calls. What an operator
   * dismissed or undid for a tool is not proposed again (refused `turned_down`).
   */
  async review(options: ReviewOptions = {}, config?: RunnableConfig): Promise<Review> {
    checkInput(MANAGER_INPUTS.review, options, "review", "options");
    // Without a partition, the caller's of `config` (its ids, as every piece reads them), else "default".
    const o = { ...DEFAULT_REVIEW_OPTIONS, partition: partitionOf(config), ...definedOnly(options) };
    return runReview(
      {
        ledger: this.ledger,
        index: this.index,
        proposer: this.proposer,
        objective: this.objective,
        vet: this.vetOptions,
      },
      { partition: o.partition, ...(o.tools !== undefined ? { tools: o.tools } : {}) },
      { dryRun: o.dryRun, autoApply: o.autoApply, config: o.config },
      config,
    );
  }

  /**
   * Apply a proposed revision. Routing is checked again for requests other tools served: an
   * example that would push the serving tool out of the offered set is withdrawn (notes stay),
   * and the revision records which and why. The card and the revision are written together.
   * @throws NotFound, RevisionConflict (not proposed, or the card changed since), VetRefusal (what
   *   it adds no longer passes the vet under the current settings)
   */
  async apply(
    id: string,
    options: PartitionOption & { approvedBy: string; config?: SettingsInput },
  ): Promise<Revision> {
    checkInput(MANAGER_INPUTS.id, id, "apply", "id");
    checkInput(MANAGER_INPUTS.apply, options, "apply", "options");
    return applyRevision(this.ledger, this.index, id, options, this.indexBehind);
  }

  /** Dismiss a proposed revision. @throws NotFound, RevisionConflict */
  async dismiss(id: string, options: PartitionOption & { by?: string } = {}): Promise<Revision> {
    checkInput(MANAGER_INPUTS.id, id, "dismiss", "id");
    checkInput(MANAGER_INPUTS.dismiss, options, "dismiss", "options");
    const partition = options.partition ?? DEFAULT_PARTITION;
    const revision = await this.ledger.requireRevision(partition, id);
    if (revision.status !== "proposed") {
      const by = revision.status === "applied" ? revision.approvedBy : revision.closedBy;
      throw new RevisionConflict(
        `Revision ${id} is ${revision.status}${by ? ` (by ${by})` : ""}; only a proposed revision can be dismissed.`,
        { context: { id, status: revision.status, winner: by } },
      );
    }
    const dismissed: Revision = { ...revision, status: "dismissed", closedBy: options.by, updatedAt: Date.now() };
    await this.ledger.commit(partition, { revisions: [dismissed], expectStatus: { [id]: "proposed" } });
    return dismissed;
  }

  /**
   * Take back the newest applied revision of a tool, restoring what it replaced (synthetic
   * examples that gave way included).
   * @throws NotFound (nothing applied), RevisionConflict (the card was edited since)
   */
  async undo(tool: string, options: PartitionOption & { approvedBy: string }): Promise<Revision> {
    checkInput(MANAGER_INPUTS.tool, tool, "undo", "tool");
    checkInput(MANAGER_INPUTS.undo, options, "undo", "options");
    return this.undoNewest(options.partition ?? DEFAULT_PARTITION, tool, options.approvedBy);
  }

  /**
   * The measured effect of each applied revision: what it answered (its tool's refused calls of
   * that class, its misses, its confusions with that neighbour) in the records since it was
   * applied, read within the review's window bounds, against the window its review read;
   * `not_enough_data` until each side has {@link MIN_EFFECT_OPPORTUNITIES}. A revision with no
   * effect or a negative one carries a `flag`; with `undoFlagged`, the newest applied revision of
   * its tool that is flagged is undone, the flag recorded as `undoneBecause` and `closedBy` set to
   * `by` (the check the graph runs under the same option, `review/effect.ts`). Counts only: no
   * value, no request.
   */
  async effects(options: PartitionOption & EffectCheckOptions = {}): Promise<RevisionEffect[]> {
    checkInput(MANAGER_INPUTS.effects, options, "effects", "options");
    const { partition, ...check } = options;
    return checkEffects(this, partition ?? DEFAULT_PARTITION, check);
  }

  /** Undo the newest applied revision of `tool` (see {@link undo}). */
  private async undoNewest(partition: string, tool: string, by: string): Promise<Revision> {
    return undoNewest(this.ledger, this.index, partition, tool, { by }, this.indexBehind);
  }

  // ---------------------------------------------------------------- rules

  /**
   * Store a tool-scoped rule (critical, high or normal). Its text is vetted (normalized, one
   * line, at most 240 characters, nothing aimed at the model); without an `id`, the same tool and
   * text upsert one row, keeping `createdAt`. Use `tool: "*"` for a rule of no tool.
   * @throws InvalidInput for a blank tool or text the vet refuses.
   */
  async putRule(input: RuleInput, options: RuleScopeOption = {}): Promise<RuleView> {
    checkInput(MANAGER_INPUTS.rule, input, "putRule", "input");
    checkInput(MANAGER_INPUTS.ruleScope, options, "putRule", "options");
    return putRule(this.ledger, input, { partition: options.partition ?? DEFAULT_PARTITION, scope: options.scope });
  }

  /** A rule by id; `null` when there is none. */
  async getRule(id: string, options: RuleScopeOption = {}): Promise<RuleView | null> {
    checkInput(MANAGER_INPUTS.id, id, "getRule", "id");
    checkInput(MANAGER_INPUTS.ruleScope, options, "getRule", "options");
    return getRule(this.ledger, id, { partition: options.partition ?? DEFAULT_PARTITION, scope: options.scope });
  }

  /**
   * Rules by priority, then the most recently updated first: by default the partition's own and
   * the shared ones (what binds its callers), each with its scope.
   */
  async listRules(options: PartitionOption & { tool?: string; scope?: RuleScope | "all" } = {}): Promise<RuleView[]> {
    checkInput(MANAGER_INPUTS.listRules, options, "listRules", "options");
    return listRules(this.ledger, { ...options, partition: options.partition ?? DEFAULT_PARTITION });
  }

  /** Delete a rule; whether there was one. */
  async deleteRule(id: string, options: RuleScopeOption = {}): Promise<boolean> {
    checkInput(MANAGER_INPUTS.id, id, "deleteRule", "id");
    checkInput(MANAGER_INPUTS.ruleScope, options, "deleteRule", "options");
    return deleteRule(this.ledger, id, { partition: options.partition ?? DEFAULT_PARTITION, scope: options.scope });
  }

  /**
   * The pinned `## Tool-scoped rules` block for these tools (the partition's and the shared
   * critical and high rules; critical never dropped), with the structured snapshot of what it
   * lists and what the cap left out. Byte-stable for the same rules.
   *
   * With a `threadId`, rendered once per thread: later turns of the thread get the same (frozen)
   * block until a rule that binds it is written (put, delete, promote, an edict or observation
   * recorded, here or by another process); the rules are still read each time to tell. Without
   * one, rendered on every call.
   */
  async rulesForPrompt(tools: readonly string[], options: RulesForPromptOptions = {}): Promise<RulesBlock> {
    checkInput(MANAGER_INPUTS.tools, tools, "rulesForPrompt", "tools");
    checkInput(MANAGER_INPUTS.rulesForPrompt, options, "rulesForPrompt", "options");
    const partition = options.partition ?? DEFAULT_RULES_FOR_PROMPT_OPTIONS.partition;
    const maxRules = options.maxRules ?? DEFAULT_RULES_FOR_PROMPT_OPTIONS.maxRules;
    // Read before the rules: a write that lands during the read then shows on the next call.
    const writeVersions = await bindingVersions(this.ledger, partition);
    const rules = await bindingRules(this.ledger, partition, tools);
    const blockOptions = { tools, maxRules };
    if (options.threadId === undefined) return renderRulesBlock(rules, blockOptions);
    return this.rulesBlocks.serve({ partition, threadId: options.threadId, writeVersions }, rules, blockOptions);
  }

  /** Every rule that binds the partition's callers (its own and the shared ones), as plain JSON-ready objects. */
  async rulesJson(options: PartitionOption = {}): Promise<RuleView[]> {
    checkInput(MANAGER_INPUTS.partition, options, "rulesJson", "options");
    return listRules(this.ledger, { partition: options.partition ?? DEFAULT_PARTITION });
  }

  /**
   * Move a rule of the partition into the shared scope, so every partition's prompt carries it:
   * the one way a shared rule is made from a caller's, an operator's explicit call.
   * @throws NotFound (no such rule), InvalidInput (blank `by`, or already shared)
   */
  async promoteRule(id: string, options: PartitionOption & { by: string }): Promise<RuleView> {
    checkInput(MANAGER_INPUTS.id, id, "promoteRule", "id");
    checkInput(MANAGER_INPUTS.promoteRule, options, "promoteRule", "options");
    return promoteRule(this.ledger, id, { partition: options.partition ?? DEFAULT_PARTITION, by: options.by });
  }

  // ---------------------------------------------------------------- tool memory (src/memory)

  /**
   * Evaluate every call of the partition that no pass has settled yet (the newest `memoryWindow`
   * per tool) into its tool's memory window, dropping duplicates; a call whose evaluation failed is
   * tried again next time. Without `partition`, the caller's of `config` (its ids; `"default"` without).
   */
  async evaluateCalls(
    options: PartitionOption & MemoryPassOptions = {},
    config?: RunnableConfig,
  ): Promise<EvaluationReport> {
    checkInput(MANAGER_INPUTS.memoryPass, options, "evaluateCalls", "options");
    const { partition, ...pass } = options;
    return this.memory.evaluate(partition ?? partitionOf(config), pass, config);
  }

  /**
   * Evaluate new calls, then write the guideline of each tool (of `tools`, or every tool with a
   * memory window) whose window has calls its guideline was not written from, once the recent
   * window holds `minEvaluatedCalls`. A tool with nothing new costs no model call. Without
   * `partition`, the caller's of `config` (its ids; `"default"` without).
   */
  async summarize(
    tools?: readonly string[],
    options: SummarizeToolsOptions = {},
    config?: RunnableConfig,
  ): Promise<SummaryReport> {
    checkInput(MANAGER_INPUTS.tools.optional(), tools, "summarize", "tools");
    checkInput(MANAGER_INPUTS.summarize, options, "summarize", "options");
    const { partition: p, evaluate, ...rest } = options;
    const partition = p ?? partitionOf(config);
    const pass = { ...rest, ...(tools !== undefined ? { tools } : {}) };
    if (evaluate ?? true) await this.memory.evaluate(partition, pass, config);
    return this.memory.summarize(partition, pass, config);
  }

  /** Statistics of a tool's memory window now. */
  async stats(tool: string, options: PartitionOption & Pick<MemoryPassOptions, "config"> = {}): Promise<ToolStats> {
    checkInput(MANAGER_INPUTS.tool, tool, "stats", "tool");
    checkInput(MANAGER_INPUTS.memoryOf, options, "stats", "options");
    return this.memory.stats(options.partition ?? DEFAULT_PARTITION, tool, options);
  }

  /** A tool's memory: its statistics now, its guideline, and the guideline as the model is shown it. */
  async memoryFor(
    tool: string,
    options: PartitionOption & Pick<MemoryPassOptions, "config"> = {},
  ): Promise<ToolMemoryReport> {
    checkInput(MANAGER_INPUTS.tool, tool, "memoryFor", "tool");
    checkInput(MANAGER_INPUTS.memoryOf, options, "memoryFor", "options");
    const view = await this.memory.memoryFor(options.partition ?? DEFAULT_PARTITION, tool, options);
    return { ...view, text: view.guideline ? renderGuideline(tool, view.guideline) : "" };
  }

  /**
   * The memory block of a prompt for the tools routed this turn: their guidelines with statistics,
   * in the order given ("" when none has one). Byte-stable for the same stored guidelines.
   */
  async memoryBlock(tools: readonly string[], options: PartitionOption = {}): Promise<string> {
    checkInput(MANAGER_INPUTS.tools, tools, "memoryBlock", "tools");
    checkInput(MANAGER_INPUTS.partition, options, "memoryBlock", "options");
    const partition = options.partition ?? DEFAULT_PARTITION;
    const states = await Promise.all(tools.map((tool) => this.ledger.getToolMemory(partition, tool)));
    return renderMemoryBlock(tools.map((tool, i) => ({ tool, guideline: states[i]?.guideline ?? null })));
  }
}
