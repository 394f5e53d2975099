/**
 * inject: what the agent sees this turn. The routed tool set (top-k for the request, plus the
 * tools the thread already uses, plus the always-offer list), recorded as the turn's route; and
 * one system message rendered by `prompt/lessons-block.ts` (pure, byte-stable, within a token
 * budget): the pinned rules, each routed tool's description with its learned notes, "Not for"
 * lines, example call and guideline, and the normal-priority rules retrieved for the request.
 *
 * Degrades, never breaks: routing failing (embeddings or the index down) gives every tool and is
 * recorded as a turn routing skipped; the ledger failing gives an empty block. Each is reported
 * once.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Ledger } from "../ledger/ledger.js";
import type { RoutingSkipped } from "../routing/router.js";
import type { Offer, ToolCard } from "../ledger/schema.js";
import { type BlockRule, type BlockTool, renderLessonsBlock } from "../prompt/lessons-block.js";
import { renderGuideline } from "../prompt/memory.js";
import { latestHumanTurn, requestIdFor, toolsInUse } from "../record/request.js";
import { isUnscoped } from "../rules/model.js";
import { bindingRules } from "../rules/store.js";
import type { Rule } from "../rules/model.js";
import { DEFAULT_LESSONS_GRAPH, type LessonsRuntime } from "./context.js";
import { emptyReport, type LessonsReport } from "./state.js";

/** The state inject reads. */
export interface InjectState {
  messages: BaseMessage[];
  lessonsTurn?: string;
  lessonsReport?: LessonsReport;
}

/** A card as the lessons block shows it (learned example requests only with `showLearnedExamples`). */
export function blockToolOf(card: ToolCard, showLearnedExamples: boolean, guideline?: string): BlockTool {
  const authored = card.author.description;
  const asked = card.learned.examples.filter((e) => e.source === "learned").map((e) => `"${e.text}"`);
  const call = card.learned.exampleCall?.text;
  return {
    name: card.name,
    description: authored.trim() !== "" ? authored : (card.augmented?.description ?? ""),
    notes: [
      ...card.learned.notes.map((n) => n.text),
      ...(showLearnedExamples && asked.length > 0 ? [`Also asked for as: ${asked.join("; ")}`] : []),
    ],
    notFor: card.learned.notFor.map((n) => n.text),
    ...(call !== undefined ? { exampleCall: /^example call:/i.test(call) ? call : `Example call: ${call}` } : {}),
    ...(guideline !== undefined ? { guideline } : {}),
  };
}

/** The inject node: sets `routedTools`, `lessonsPrompt`, `lessonsTurn` and the report. */
export function createInjectNode(runtime: LessonsRuntime) {
  const all = runtime.options.tools.map((t) => t.name);
  const maxTokens = runtime.options.maxTokens ?? DEFAULT_LESSONS_GRAPH.maxTokens;
  return async function inject(state: InjectState, config?: RunnableConfig) {
    const threadId = config?.configurable?.thread_id as string | undefined;
    const requestId = requestIdFor(threadId, state.messages);
    const turn = latestHumanTurn(state.messages);
    if (requestId === undefined || turn === undefined || requestId === state.lessonsTurn) return {};
    const report: LessonsReport = { ...(state.lessonsReport ?? emptyReport()), routing: "routed" };
    const done = (routedTools: string[], text: string) => ({
      routedTools,
      lessonsPrompt: text,
      lessonsTurn: requestId,
      lessonsReport: report,
    });
    const { ledger, partition } = runtime.context(config);
    if (!ledger) {
      report.routing = "all_tools";
      return done([...all], "");
    }
    try {
      await runtime.ensureRegistered(ledger, partition);
    } catch (error) {
      runtime.report("ledger", "the ledger could not be read; this turn goes on without lessons.", error);
      report.ledgerFailed = true;
    }

    let routed: string[];
    let offered: Offer[] = [];
    let allSent = true;
    let skipped: RoutingSkipped["reason"] | undefined;
    const router = runtime.router(ledger);
    try {
      const r = await router.route(turn.text, { partition, sticky: toolsInUse(state.messages) }, config);
      offered = r.offered;
      allSent = r.allSent;
      routed = r.tools;
      // A skipped routing (failed, or no tools in the partition) is warned by the router itself.
      skipped = r.skipped?.reason;
    } catch (error) {
      // The router degrades by itself; a router of the user's own may still throw.
      runtime.report("routing", "routing failed; this turn offers every tool.", error);
      routed = [];
      offered = [];
      allSent = true;
      skipped = "index_failed";
    }
    if (routed.length === 0) {
      routed = [...all];
      report.routing = "all_tools";
    }
    try {
      await ledger.appendRoutes([
        { partition, threadId, requestId, offered, allSent, k: router.k, ...(skipped ? { skipped } : {}) },
      ]);
    } catch (error) {
      runtime.report("ledger", "the ledger could not be written; this turn goes on without lessons.", error);
      report.ledgerFailed = true;
    }

    let text = "";
    try {
      const input = await blockInput(runtime, ledger, partition, routed, turn.text);
      const block = renderLessonsBlock(input, { maxTokens });
      text = block.text;
      report.blockTokens = block.tokens;
      report.cut = block.cut;
    } catch (error) {
      runtime.report("ledger", "the ledger could not be read; this turn goes on without lessons.", error);
      report.ledgerFailed = true;
    }
    return done(routed, text);
  };
}

/** What the block shows for the routed tools, read from the ledger (and the rule retriever). */
async function blockInput(
  runtime: LessonsRuntime,
  ledger: Ledger,
  partition: string,
  routed: readonly string[],
  request: string,
): Promise<{ rules: Rule[]; tools: BlockTool[]; retrieved: BlockRule[] }> {
  const [cards, settings, rules, memories] = await Promise.all([
    ledger.getCards(partition, routed),
    ledger.getSettings(partition),
    bindingRules(ledger, partition, routed),
    Promise.all(routed.map((tool) => ledger.getToolMemory(partition, tool))),
  ]);
  const byName = new Map(cards.map((c) => [c.name, c]));
  const tools: BlockTool[] = [];
  routed.forEach((name, i) => {
    const card = byName.get(name);
    const guideline = memories[i]?.guideline;
    if (card)
      tools.push(
        blockToolOf(card, settings.showLearnedExamples, guideline ? renderGuideline(name, guideline) : undefined),
      );
  });
  const wanted = new Set(routed);
  const retrieved: BlockRule[] = [];
  const hasNormal = rules.some((r) => r.priority === "normal");
  if (hasNormal) {
    try {
      for (const doc of await runtime.retriever(ledger).retrieve(request, { partition })) {
        const tool = String(doc.metadata.tool);
        if (wanted.has(tool) || isUnscoped({ tool })) retrieved.push({ tool, rule: doc.pageContent });
      }
    } catch (error) {
      runtime.report("retrieval", "retrieving normal-priority rules failed; the block goes without them.", error);
    }
  }
  return { rules, tools, retrieved };
}
