/**
 * The support desk through langchain v1's `createAgent` and `toolLessonsMiddleware`, offline, no
 * key: `npx tsx examples/create-agent.ts`.
 *
 * 1. Two callers name themselves only in v1 `context` (`{ user_id }`). The middleware routes each
 *    request to 4 of the 8 tools, records what it offered, and tells the recorder the thread's
 *    partition, so the route records, the calls and the turns of a request land in one partition.
 * 2. Alice tells the agent "Never email Dana."; on her next turn the pinned rules block carries
 *    it and the model refuses; Bob is not bound by it.
 * 3. An operator reviews and applies what the failures taught; the middleware sends the learned
 *    lines with the tool (as a plain definition: createAgent refuses a changed tool instance), and
 *    the call succeeds first time; undo takes it back.
 *
 * The ledger is the embedded default, a SQLite file (`.tool-lessons/create-agent/ledger.db`,
 * recreated on every run). The model is the demo's scripted one (`examples/support-desk.ts`),
 * plus one habit: it will not email someone a pinned critical rule of `send_email` names.
 */
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { LessonManager, openLedger, ToolIndex, ToolLessonsCallbackHandler } from "../src/index.js";
import { ToolRouter } from "../src/routing/index.js";
import { toolLessonsMiddleware } from "../src/middleware/index.js";
import { modelDescription } from "../src/prompt/index.js";
import { type BoundTool, ScriptedSupportModel, supportDeskTools } from "./support-desk.js";

/** Options of {@link main}. */
export interface CreateAgentDemoOptions {
  /**
   * Print nothing (the test runs it this way).
   * @default false
   */
  quiet?: boolean;
  /**
   * Directory of the ledger file (`ledger.db`), created if missing; the file is deleted at start.
   * @default ".tool-lessons/create-agent" under the working directory
   */
  dir?: string;
}

/** One user message and what came of it. */
export interface Turn {
  user: string;
  request: string;
  calls: { tool: string; ok: boolean }[];
  answer: string;
  /** The tools the model was shown on its first call, with their descriptions. */
  shown: BoundTool[];
  /** The system message of its first call. */
  system: string;
}

/** What {@link main} returns, for the test. */
export interface CreateAgentDemoSummary {
  ledgerPath: string;
  /** Per partition: route records, turns and calls after the first round of traffic. */
  records: Record<string, { routes: number; turns: number; calls: number; failed: number }>;
  /** Route records whose request id has no turn in the same partition (0: one partition per request). */
  unjoinedRoutes: number;
  edict: { rule: string; refused: Turn; other: Turn };
  applied: string[];
  before: Turn;
  afterApply: Turn;
  otherPartition: string;
  afterUndo: Turn;
}

/** What each first model call of a request was shown (the middleware binds the tools per call). */
const firstViews: { request: string; shown: BoundTool[]; system: string }[] = [];

/** The scripted support model, plus: it will not email someone a pinned critical rule names. */
class RuleReadingModel extends ScriptedSupportModel {
  override bindTools(tools: BindToolsInput[]): RuleReadingModel {
    return new RuleReadingModel(
      tools.map((t) => {
        const named = t as { name?: unknown; description?: unknown };
        return {
          name: String(named.name),
          description: typeof named.description === "string" ? named.description : "",
        };
      }),
    );
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const system = messages[0]?.getType() === "system" ? messages[0].text : "";
    const human = [...messages].reverse().find((m) => m.getType() === "human");
    const request = human?.text ?? "";
    if (messages[messages.length - 1] === human) firstViews.push({ request, shown: [...this.bound], system });
    const to = /\b(?:email|send)\b/i.test(request) ? /([a-z]+)[\w.+-]*@[\w-]+\.[\w.]+/i.exec(request)?.[1] : undefined;
    const rules = system.split("### `send_email`")[1]?.split("\n### ")[0] ?? "";
    const rule = to
      ? rules.split("\n").find((l) => l.startsWith("- [critical]") && new RegExp(`\\b${to}\\b`, "i").test(l))
      : undefined;
    if (rule) {
      const text = `I won't email ${to}: a pinned rule says "${rule.slice("- [critical] ".length)}"`;
      return { generations: [{ text, message: new AIMessage(text) }] };
    }
    return super._generate(messages);
  }
}

/** Run the story. Returns a summary; prints as it goes unless `quiet`. */
export async function main(options: CreateAgentDemoOptions = {}): Promise<CreateAgentDemoSummary> {
  const out = options.quiet ? () => undefined : (line = "") => console.log(line);
  const ledgerPath = join(resolve(options.dir ?? ".tool-lessons/create-agent"), "ledger.db");
  for (const suffix of ["", "-wal", "-shm"]) await rm(`${ledgerPath}${suffix}`, { force: true });
  firstViews.length = 0;

  const ledger = await openLedger({ path: ledgerPath });
  try {
    const tools = supportDeskTools();
    const index = new ToolIndex({ ledger });
    const router = new ToolRouter({ index });
    // The agent: langchain's own createAgent; the middleware routes, re-describes, pins rules and
    // records; the recorder in callbacks records every call and turn.
    const agent = createAgent({
      model: new RuleReadingModel(),
      tools,
      middleware: [toolLessonsMiddleware({ ledger, router, maxTools: 4 })],
      checkpointer: new MemorySaver(),
    });
    const recorder = new ToolLessonsCallbackHandler({ ledger });

    let threads = 0;
    const newThread = () => `thread-${++threads}`;
    async function ask(user: string, request: string, thread = newThread()): Promise<Turn> {
      const seen = firstViews.length;
      const state = await agent.invoke(
        { messages: [new HumanMessage(request)] },
        // The caller is named only in v1 context: callbacks never see it, the middleware does.
        { configurable: { thread_id: thread }, context: { user_id: user }, callbacks: [recorder] },
      );
      await recorder.flush();
      const view = firstViews[seen] ?? { shown: [], system: "" };
      const turn = { user, request, ...outcomeOf(state.messages), shown: view.shown, system: view.system };
      out(`  ${user.padEnd(5)} ${JSON.stringify(request)}`);
      out(`        ${turn.calls.map((c) => `${c.tool} ${c.ok ? "ok" : "refused"}`).join(" → ") || turn.answer}`);
      return turn;
    }

    out("tool-lessons + createAgent: the support desk, 8 tools, 4 routed per request, callers named in context");
    out();
    out("1. Traffic");
    const before = await ask("alice", "Where is order 482913? It was a birthday present.");
    await ask("alice", "Can you check on order 771204 for me?");
    await ask("alice", "Please refund $18.50 on ORD-771204, the mug arrived broken.");
    await ask("alice", "Refund $12.00 on ORD-660981, it was the wrong size.");
    const edictThread = newThread();
    await ask("alice", "Thanks for sorting that out. Never email Dana.", edictThread);
    const refused = await ask(
      "alice",
      "Send dana.whitfield@northwind.test an email that her refund went through.",
      edictThread,
    );
    await ask("bob", "What's the status of order 590114?");
    await ask("bob", "Track the parcel for ORD-590114 please.");
    const other = await ask("bob", "Send dana.whitfield@northwind.test an email that her refund went through.");
    out();

    out("2. The ledger: every record of a request in the caller's partition");
    const records: CreateAgentDemoSummary["records"] = {};
    let unjoinedRoutes = 0;
    for (const partition of (await ledger.listPartitions()).sort()) {
      const [routes, turns, calls] = await Promise.all([
        ledger.listRoutes(partition),
        ledger.listTurns(partition),
        ledger.listCalls(partition),
      ]);
      const failed = calls.filter((c) => c.outcome === "error").length;
      records[partition] = { routes: routes.length, turns: turns.length, calls: calls.length, failed };
      const turnIds = new Set(turns.map((t) => t.requestId));
      unjoinedRoutes += routes.filter((r) => !turnIds.has(r.requestId)).length;
      out(
        `  ${partition.padEnd(8)} ${routes.length} routed requests, ${turns.length} turns, ${calls.length} calls (${failed} failed)`,
      );
    }
    const [rule] = await ledger.listRules("u:alice");
    out(`  rule captured for alice: [${rule?.priority}] ${rule?.tool}: ${JSON.stringify(rule?.rule)}`);
    out();

    out("3. Review, apply, the same kind of request again");
    const manager = new LessonManager({ ledger, index });
    const review = await manager.review({ partition: "u:alice" });
    const applied: string[] = [];
    for (const revision of review.revisions) {
      await manager.apply(revision.id, { partition: "u:alice", approvedBy: "demo-operator" });
      applied.push(revision.tool);
    }
    out(`  applied for u:alice: ${applied.join(", ")}`);
    const afterApply = await ask("alice", "Where is order 319870?");
    const shown = afterApply.shown.find((t) => t.name === "lookup_order")?.description ?? "";
    out("  the model was shown for lookup_order:");
    for (const line of shown.split("\n")) out(`    | ${line}`);
    const otherPartition = modelDescription((await ledger.getCard("u:bob", "lookup_order"))!);
    out(`  ...and bob's card (nothing crosses partitions): ${JSON.stringify(otherPartition)}`);
    await manager.undo("lookup_order", { partition: "u:alice", approvedBy: "demo-operator" });
    out("  undo lookup_order, then once more:");
    const afterUndo = await ask("alice", "Where is order 319870?");

    return {
      ledgerPath,
      records,
      unjoinedRoutes,
      edict: { rule: rule?.rule ?? "", refused, other },
      applied,
      before,
      afterApply,
      otherPartition,
      afterUndo,
    };
  } finally {
    await ledger.close();
  }
}

/** The calls and the answer of the newest turn. */
function outcomeOf(messages: readonly BaseMessage[]): Pick<Turn, "calls" | "answer"> {
  let start = messages.length - 1;
  while (start >= 0 && messages[start].getType() !== "human") start -= 1;
  const turn = messages.slice(start + 1);
  const calls = turn
    .filter((m) => m.getType() === "tool")
    .map((m) => ({ tool: (m as { name?: string }).name ?? "", ok: (m as { status?: string }).status !== "error" }));
  const last = turn[turn.length - 1];
  return { calls, answer: last && last.getType() === "ai" ? last.text : "" };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
