/**
 * Tool memory over a ledger: evaluate each new call of a tool (per partition), keep a sliding
 * window of evaluated calls, compute the tool's statistics, and synthesize its guideline from the
 * recent window when the window has calls the guideline was not written from.
 *
 * A pass reads and writes only the ledger; the decisions are the pure functions of `window.ts`,
 * `stats.ts`, `synthesis.ts` and `vet-guideline.ts`, and the evaluator and synthesizer behind
 * their interfaces (a model's, or the deterministic ones by default).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { definedOnly } from "../internal.js";
import { cardWords } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CallRecord, EvaluatedCall, Guideline, ToolCard, ToolMemoryState, ToolStats } from "../ledger/schema.js";
import { parseSettings, type Settings, type SettingsInput } from "../settings.js";
import { gateText } from "../text/gate.js";
import { containsFingerprint } from "../text/mask.js";
import { allowedWords } from "../text/vocabulary.js";
import { DeterministicEvaluator } from "./deterministic-evaluator.js";
import { mapLimit } from "./limit.js";
import { toolStats } from "./stats.js";
import { DeterministicSynthesizer } from "./synthesis.js";
import type {
  CallEvaluator,
  EvaluationInput,
  EvaluationOutcome,
  GuidelineSynthesizer,
  UnevaluatedReason,
} from "./types.js";
import { isUnanimous, vetGuideline, windowValueCheck } from "./vet-guideline.js";
import {
  descriptionOf,
  evaluatedRow,
  evaluationInput,
  latencyNorm,
  planEvaluation,
  requiredArgs,
  settledThrough,
} from "./window.js";

/** Options of {@link ToolMemory}. */
export interface ToolMemoryOptions {
  /** Where call records are read and the memory is kept. */
  ledger: Ledger;
  /**
   * Who evaluates each call.
   * @default a DeterministicEvaluator
   */
  evaluator?: CallEvaluator;
  /**
   * Who writes guidelines.
   * @default a DeterministicSynthesizer
   */
  synthesizer?: GuidelineSynthesizer;
  /**
   * Clock for the `evaluatedAt` and `at` stamps.
   * @default Date.now
   */
  now?: () => number;
}

/** The defaults of {@link ToolMemoryOptions} (`ledger` is required). */
export const DEFAULT_TOOL_MEMORY_OPTIONS: Readonly<Required<Omit<ToolMemoryOptions, "ledger">>> = Object.freeze({
  evaluator: new DeterministicEvaluator(),
  synthesizer: new DeterministicSynthesizer(),
  now: Date.now,
});

/** Tools whose guidelines are written at once (model calls in flight, with a model synthesizer). */
const SUMMARY_CONCURRENCY = 4;

/** Options of one evaluation or summary pass. */
export interface MemoryPassOptions {
  /**
   * Only these tools.
   * @default every tool with call records (evaluate), every tool with a memory window (summarize)
   */
  tools?: readonly string[];
  /**
   * Settings for this pass only, over the partition's stored ones.
   * @default {} (the stored settings)
   */
  config?: SettingsInput;
}

/** Options of {@link ToolMemory.summarize}. */
export interface SummarizeOptions extends MemoryPassOptions {
  /**
   * Write the guideline again even when the window has no call it was not written from.
   * @default false
   */
  force?: boolean;
}

/** What one evaluation pass did for one tool. */
export interface ToolEvaluationReport {
  tool: string;
  /** Calls evaluated and put in the window. */
  evaluated: number;
  /** Calls dropped as duplicates (same masked input and output as a call in the window). */
  duplicates: number;
  /** Calls left unevaluated this time, and why: the next pass tries them again. */
  unevaluated: { callId: string; reason: UnevaluatedReason; detail: string }[];
  /** Evaluated calls in the window after the pass. */
  window: number;
}

/** What one evaluation pass did. */
export interface EvaluationReport {
  partition: string;
  /** The evaluator's name. */
  evaluator: string;
  tools: ToolEvaluationReport[];
}

/**
 * What a summary did for one tool: a guideline written (`summarized`), none needed because the
 * window has no call the guideline was not written from (`unchanged`: no model call), too few
 * recent evaluated calls (`not_enough_data`), no evaluated call at all (`no_calls`), or the
 * synthesizer gave no draft (`failed`: the next summary tries again).
 */
export type SummaryStatus = "summarized" | "unchanged" | "not_enough_data" | "no_calls" | "failed";

/** What one summary did for one tool. */
export interface ToolSummaryReport {
  tool: string;
  status: SummaryStatus;
  /** The tool's guideline after the summary (the one it had, unless `summarized`). */
  guideline: Guideline | null;
  /** Why, for `not_enough_data` and `failed`. */
  detail?: string;
}

/** What one summary pass did. */
export interface SummaryReport {
  partition: string;
  /** The synthesizer's name. */
  synthesizer: string;
  tools: ToolSummaryReport[];
}

/** What a tool's memory holds, for a prompt, the manager or the CLI. */
export interface ToolMemoryView {
  partition: string;
  tool: string;
  /** Statistics of the window now. */
  stats: ToolStats;
  /** The tool's guideline, or `null` when none was written yet. */
  guideline: Guideline | null;
  /** True when the window has evaluated calls the guideline was not written from. */
  stale: boolean;
  /** Evaluated calls a guideline needs in the recent window (the `minEvaluatedCalls` setting). */
  minEvaluatedCalls: number;
}

/** What an evaluation pass read for one tool. */
interface ToolPlan {
  tool: string;
  state: ToolMemoryState | null;
  windowSize: number;
  calls: CallRecord[];
  pending: CallRecord[];
  duplicates: number;
  inputs: EvaluationInput[];
}

/**
 * A partition's tool memory: evaluation passes, summaries, statistics and what a tool's memory
 * holds. Every method takes the partition; nothing is read across partitions.
 */
export class ToolMemory {
  readonly ledger: Ledger;
  readonly evaluator: CallEvaluator;
  readonly synthesizer: GuidelineSynthesizer;
  private readonly options: Required<Omit<ToolMemoryOptions, "ledger">>;

  constructor(options: ToolMemoryOptions) {
    this.ledger = options.ledger;
    this.options = { ...DEFAULT_TOOL_MEMORY_OPTIONS, ...definedOnly(options) };
    this.evaluator = this.options.evaluator;
    this.synthesizer = this.options.synthesizer;
  }

  /**
   * Evaluate every call of the tools that no pass settled yet: the newest `memoryWindow` of them;
   * duplicates of the window are dropped, the rest evaluated (all tools' calls in one batch, so a
   * model evaluator's concurrency limit holds across tools), put in the window, and the window
   * slid to `memoryWindow`. A call left unevaluated stays for the next pass.
   * @throws InvalidInput when `config` holds an unknown or bad setting.
   */
  async evaluate(
    partition: string,
    options: MemoryPassOptions = {},
    config?: RunnableConfig,
  ): Promise<EvaluationReport> {
    const settings = await this.settings(partition, options.config);
    const tools = options.tools ?? (await this.ledger.listCalledTools(partition));
    const cards = new Map((await this.ledger.getCards(partition, tools)).map((c) => [c.name, c]));
    const plans = await Promise.all(tools.map((tool) => this.plan(partition, tool, cards.get(tool), settings)));
    const inputs = plans.flatMap((p) => p.inputs);
    const outcomes = inputs.length > 0 ? await this.evaluator.evaluate(inputs, config) : [];
    const key = this.evaluator.callsModel && inputs.length > 0 ? await this.ledger.fingerprintKey(partition) : "";

    const report: EvaluationReport = { partition, evaluator: this.evaluator.name, tools: [] };
    let at = 0;
    for (const plan of plans) {
      const rows: EvaluatedCall[] = [];
      const unevaluated: ToolEvaluationReport["unevaluated"] = [];
      for (const call of plan.pending) {
        const outcome = this.checked(call, outcomes[at++], key);
        if (outcome.ok) rows.push(evaluatedRow(call, outcome.evaluation, this.evaluator.name, this.options.now()));
        else unevaluated.push({ callId: call.id, reason: outcome.reason, detail: outcome.detail });
      }
      await this.ledger.putEvaluatedCalls(rows);
      if (rows.length > 0) await this.ledger.slideMemoryWindow(partition, plan.tool, settings.memoryWindow);
      const through = settledThrough(
        plan.calls,
        new Set(unevaluated.map((u) => u.callId)),
        plan.state?.evaluatedThrough,
      );
      if (through !== plan.state?.evaluatedThrough) {
        const latest = await this.ledger.getToolMemory(partition, plan.tool);
        await this.ledger.putToolMemory(
          {
            partition,
            tool: plan.tool,
            ...(through !== undefined ? { evaluatedThrough: through } : {}),
            guideline: latest?.guideline ?? null,
          },
          { guidelineChanged: false },
        );
      }
      report.tools.push({
        tool: plan.tool,
        evaluated: rows.length,
        duplicates: plan.duplicates,
        unevaluated,
        window: Math.min(settings.memoryWindow, plan.windowSize + rows.length),
      });
    }
    return report;
  }

  /**
   * Write the guideline of each tool whose window has evaluated calls its guideline was not written
   * from (all of them with `force`), from the newest `memoryRecent` evaluated calls, once they are
   * at least `minEvaluatedCalls`; vetted, then stored with the statistics. A tool with nothing new
   * costs no synthesizer call.
   * @throws InvalidInput when `config` holds an unknown or bad setting.
   */
  async summarize(partition: string, options: SummarizeOptions = {}, config?: RunnableConfig): Promise<SummaryReport> {
    const settings = await this.settings(partition, options.config);
    const tools = options.tools ?? (await this.ledger.listMemoryTools(partition));
    const cards = new Map((await this.ledger.getCards(partition, tools)).map((c) => [c.name, c]));
    const results = await mapLimit(tools, SUMMARY_CONCURRENCY, (tool) =>
      this.summarizeTool(partition, tool, cards.get(tool), settings, options.force ?? false, config),
    );
    return { partition, synthesizer: this.synthesizer.name, tools: results };
  }

  /** Statistics of a tool's window now. */
  async stats(partition: string, tool: string, options: Pick<MemoryPassOptions, "config"> = {}): Promise<ToolStats> {
    const settings = await this.settings(partition, options.config);
    return toolStats(await this.ledger.listEvaluatedCalls(partition, tool), settings.memoryRecent);
  }

  /** What a tool's memory holds: its statistics now and its guideline. */
  async memoryFor(
    partition: string,
    tool: string,
    options: Pick<MemoryPassOptions, "config"> = {},
  ): Promise<ToolMemoryView> {
    const settings = await this.settings(partition, options.config);
    const [state, window] = await Promise.all([
      this.ledger.getToolMemory(partition, tool),
      this.ledger.listEvaluatedCalls(partition, tool),
    ]);
    const guideline = state?.guideline ?? null;
    const newest = window.at(-1)?.id;
    return {
      partition,
      tool,
      stats: toolStats(window, settings.memoryRecent),
      guideline,
      stale: newest !== undefined && guideline?.through !== newest,
      minEvaluatedCalls: settings.minEvaluatedCalls,
    };
  }

  // ---------------------------------------------------------------- internals

  private async settings(partition: string, override: SettingsInput | undefined): Promise<Settings> {
    return parseSettings(override ?? {}, await this.ledger.getSettings(partition));
  }

  private async plan(
    partition: string,
    tool: string,
    card: ToolCard | undefined,
    settings: Settings,
  ): Promise<ToolPlan> {
    const [state, window] = await Promise.all([
      this.ledger.getToolMemory(partition, tool),
      this.ledger.listEvaluatedCalls(partition, tool),
    ]);
    const after = state?.evaluatedThrough;
    const calls = await this.ledger.listCalls(partition, {
      tool,
      ...(after !== undefined ? { after } : {}),
      limit: settings.memoryWindow,
    });
    const plan = planEvaluation(calls, window);
    const latencyNormMs = latencyNorm(window, plan.pending);
    const context = {
      card,
      ...(latencyNormMs !== undefined ? { latencyNormMs } : {}),
      slowLatencyFactor: settings.slowLatencyFactor,
    };
    return {
      tool,
      state,
      windowSize: window.length,
      calls,
      pending: plan.pending,
      duplicates: plan.duplicates.length,
      inputs: plan.pending.map((call) => evaluationInput(call, context)),
    };
  }

  /**
   * An evaluation's summary and text are untrusted (a model wrote them, or an evaluator the
   * package does not know): refused (the call stays unevaluated) when they hold an argument value
   * of the call, text aimed at the model ("Note to the AI model: …"), or private data the gate's
   * detectors find, before anything is stored for the synthesizer to read. Every evaluator's
   * outcome is checked (the deterministic one's labels and numbers pass).
   */
  private checked(call: CallRecord, outcome: EvaluationOutcome | undefined, key: string): EvaluationOutcome {
    if (outcome === undefined) return { ok: false, reason: "model_error", detail: "the evaluator gave no outcome" };
    if (!outcome.ok) return outcome;
    const { summary, evaluation } = outcome.evaluation;
    for (const text of [summary, evaluation]) {
      if (call.fingerprints.length > 0 && containsFingerprint(text, call.fingerprints, key)) {
        return { ok: false, reason: "contains_value", detail: "the evaluation holds an argument value of the call" };
      }
      // One pass through the gate: its check for text aimed at the model, and its detectors.
      const gated = gateText(text, { kind: "stored" });
      if (gated.aimed !== undefined) return { ok: false, reason: "aimed_at_model", detail: gated.aimed };
      if (gated.masked.length > 0) {
        return { ok: false, reason: "contains_private_data", detail: [...new Set(gated.masked)].join(", ") };
      }
    }
    return outcome;
  }

  private async summarizeTool(
    partition: string,
    tool: string,
    card: ToolCard | undefined,
    settings: Settings,
    force: boolean,
    config: RunnableConfig | undefined,
  ): Promise<ToolSummaryReport> {
    const [state, window] = await Promise.all([
      this.ledger.getToolMemory(partition, tool),
      this.ledger.listEvaluatedCalls(partition, tool),
    ]);
    const current = state?.guideline ?? null;
    const newest = window.at(-1)?.id;
    if (newest === undefined) return { tool, status: "no_calls", guideline: current };
    if (!force && current?.through === newest) return { tool, status: "unchanged", guideline: current };
    const recent = window.slice(Math.max(0, window.length - settings.memoryRecent));
    if (recent.length < settings.minEvaluatedCalls) {
      return {
        tool,
        status: "not_enough_data",
        guideline: current,
        detail: `${recent.length} evaluated call(s) in the recent window; a guideline needs ${settings.minEvaluatedCalls}`,
      };
    }
    const stats = toolStats(window, settings.memoryRecent);
    const limits = { maxLineLength: settings.maxLineLength, maxGuidelineLength: settings.maxGuidelineLength };
    const outcome = await this.synthesizer.synthesize(
      { tool, description: descriptionOf(card), requiredArgs: requiredArgs(card), recent, stats, limits },
      config,
    );
    if (!outcome.ok)
      return { tool, status: "failed", guideline: current, detail: `${outcome.reason}: ${outcome.detail}` };
    const containsValue = windowValueCheck(window, await this.ledger.fingerprintKey(partition));
    const vetted = vetGuideline(outcome.draft, {
      containsValue,
      allowed: allowedWords({ card: card ? cardWords(card) : [tool], toolNames: [tool], isValue: containsValue }),
      callIds: new Set(window.map((r) => r.id)),
      unanimous: isUnanimous(recent),
      ...limits,
    });
    const guideline: Guideline = {
      ...vetted.parts,
      stats,
      through: newest,
      calls: recent.length,
      synthesizer: this.synthesizer.name,
      refused: vetted.refused,
      at: this.options.now(),
    };
    const latest = await this.ledger.getToolMemory(partition, tool);
    await this.ledger.putToolMemory({
      partition,
      tool,
      ...(latest?.evaluatedThrough !== undefined ? { evaluatedThrough: latest.evaluatedThrough } : {}),
      guideline,
    });
    return { tool, status: "summarized", guideline };
  }
}
