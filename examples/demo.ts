/**
 * `npm run demo`: a day at a support desk whose tools learn, offline, no key, in seconds.
 *
 * The agent is `createToolLessonsAgent`: the lessons subgraph (classify → learn →
 * inject) before the agent node, LangGraph's `ToolNode` after it, the recorder wired in. Eight
 * tools (`examples/support-desk.ts`), a scripted model that makes real models' mistakes and reads
 * what it is shown, two callers: alice names herself in `metadata`, bob only in `configurable`
 * (one resolver reads both). The ledger is the embedded default, a SQLite file
 * (`.tool-lessons/demo/ledger.db`, recreated on every run).
 *
 * - Morning: traffic. Tools fail the same way again and again; the nodes notice on the next turn
 *   of the thread and propose lessons, vetted by code, that wait for the operator. "Never email
 *   Dana." is a rule of alice's at once, and obeyed from her next turn; bob is not bound by it.
 *   A wording routing missed ("money back") is served by the refund tool a turn later.
 * - Midday: the operator's view of what waits (`LessonManager`), and apply.
 * - Afternoon: the same kinds of request: the failures are gone, the missed wording routes to the
 *   refund tool, a tool's guideline is shown before the tool is used.
 * - Evening: history, each applied lesson's measured effect (what it answered, before and since;
 *   "not enough data" until each side has the minimum), usage flags, rules; undo one lesson, and
 *   its failure is back.
 */
import { rm } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { createToolLessonsAgent, LessonManager, openLedger, type Revision, ToolIndex } from "../src/index.js";
import { MIN_EFFECT_OPPORTUNITIES, type RevisionEffect } from "../src/learn/index.js";
import { type BoundTool, ScriptedSupportModel, supportDeskTools } from "./support-desk.js";

/** Options of {@link main}. */
export interface DayDemoOptions {
  /**
   * Print nothing (the test runs it this way).
   * @default false
   */
  quiet?: boolean;
  /**
   * Directory of the demo's ledger file (`ledger.db`), created if missing; the file is deleted at
   * start so every run begins empty.
   * @default ".tool-lessons/demo" under the working directory
   */
  dir?: string;
}

/** One user message and what came of it. */
export interface DayTurn {
  user: string;
  request: string;
  /** Tools routed for the turn (what the model could call). */
  routed: string[];
  /** Tool calls in order. */
  calls: { tool: string; ok: boolean }[];
  answer: string;
  /** What the lessons nodes did this turn. */
  proposed: number;
  rules: number;
  guidelines: string[];
  /** The lessons block the model was shown. */
  block: string;
  /** The tools the turn's first model call was sent, each with the description it was sent. */
  shown: BoundTool[];
}

/** What {@link main} returns, for the test. */
export interface DayDemoSummary {
  ledgerPath: string;
  morning: Record<string, DayTurn>;
  /** Revisions waiting at midday: tool and what they add. */
  pending: Pick<Revision, "tool" | "notesAdded" | "queriesAdded" | "avoidAdded" | "callExample">[];
  applied: string[];
  afternoon: Record<string, DayTurn>;
  /** The box "what the model was shown for lookup_order": the description its first call this afternoon was sent. */
  shownLookup: string;
  history: string[];
  /** Each applied lesson's measured effect: its tool, the verdict, and the line printed. */
  effects: { tool: string; verdict: string; line: string }[];
  flags: string[];
  rules: { partition: string; priority: string; tool: string; rule: string }[];
  afterUndo: DayTurn;
  /** Call records per partition at the end of the day. */
  calls: Record<string, number>;
}

const OPERATOR = "demo-operator";
const ALICE = "u:alice";
const BOB = "u:bob";

/** Run the day. Returns a summary; prints as it goes unless `quiet`. */
export async function main(options: DayDemoOptions = {}): Promise<DayDemoSummary> {
  const out = options.quiet ? () => undefined : (line = "") => console.log(line);
  const ledgerPath = join(resolve(options.dir ?? ".tool-lessons/demo"), "ledger.db");
  for (const suffix of ["", "-wal", "-shm"]) await rm(`${ledgerPath}${suffix}`, { force: true });
  const opened = await openLedger({ path: ledgerPath });
  const tools = supportDeskTools();
  // One routing index for the nodes and the operator (its ledger writes to the graph's store).
  // The day routes from the cards alone (wordings off), so each reviewed lesson shows: with the
  // default wordings on, the missed wording would be routed right without an example.
  const index = new ToolIndex({ ledger: opened, wordings: false });
  const sent: BoundTool[][] = [];
  const graph = createToolLessonsAgent({
    index,
    model: new WatchedSupportModel(sent),
    tools,
    store: opened.store,
    checkpointer: new MemorySaver(),
    maxTools: 3,
    subgraph: true,
    memoryEvery: 4,
    failureSink: (failure) => out(`  ! ${failure.message}`),
  });
  const { ledger } = graph;
  try {
    // The review checks a missed wording against the partition's routingK: keep it the graph's k.
    for (const partition of [ALICE, BOB]) await ledger.configure(partition, { minEvaluatedCalls: 3, routingK: 3 });
    const manager = new LessonManager({ ledger, index });

    /** One user message in a thread. Alice is named in metadata; bob only in configurable. */
    async function ask(user: "alice" | "bob", thread: string, request: string): Promise<DayTurn> {
      const config: RunnableConfig =
        user === "alice"
          ? { configurable: { thread_id: thread }, metadata: { user_id: user } }
          : { configurable: { thread_id: thread, user_id: user } };
      const from = sent.length;
      const state = await graph.invoke({ messages: [new HumanMessage(request)] }, config);
      await graph.recorder.flush();
      const turn: DayTurn = {
        user,
        request,
        routed: state.routedTools,
        ...outcomeOf(state.messages),
        proposed: state.lessonsReport.proposed.length,
        rules: state.lessonsReport.rules.length,
        guidelines: state.lessonsReport.guidelines,
        block: state.lessonsPrompt,
        shown: sent[from] ?? [],
      };
      const did =
        turn.calls.map((c) => `${c.tool} ${c.ok ? "ok" : "refused"}`).join(" → ") || `"${clip(turn.answer, 60)}"`;
      const learned = [
        turn.proposed ? `${turn.proposed} lesson(s) proposed` : "",
        turn.rules ? "rule stored" : "",
        turn.guidelines.length ? `guideline: ${turn.guidelines.join(", ")}` : "",
      ].filter(Boolean);
      out(`  ${user.padEnd(5)} ${clip(JSON.stringify(request), 66).padEnd(68)} ${did}`);
      if (learned.length) out(`        ${" ".repeat(68)} + ${learned.join("; ")}`);
      return turn;
    }

    out("tool-lessons demo: a day at a support desk, 8 tools, 3 routed per request, two callers");
    out(
      `ledger: SQLite file ${relative(process.cwd(), ledgerPath) || ledgerPath} (embedded default, recreated each run)`,
    );
    out("agent: createToolLessonsAgent (lessons: classify → learn → inject, then agent ⇄ ToolNode)");
    out("routing: from the tools' cards alone (wordings off here, on by default), so each lesson shows");
    out();

    // ---------------------------------------------------------------- morning
    out("Morning: traffic (lessons are proposed as evidence repeats; they wait for the operator)");
    const morning: DayDemoSummary["morning"] = {};
    morning.missed = await ask("alice", "a-1", "I want my money back for the kettle.");
    morning.refund = await ask("alice", "a-1", "Refund $14.00 on ORD-202020, the kettle leaks.");
    await ask("alice", "a-1", "Thanks.");
    await ask("alice", "a-2", "I want my money back for the toaster.");
    await ask("alice", "a-2", "Refund $9.00 on ORD-303030, the toaster is broken.");
    await ask("alice", "a-2", "Thanks.");
    morning.order = await ask("alice", "a-3", "Where is order 482913? It was a birthday present.");
    await ask("alice", "a-3", "Can you check on order 771204 for me?");
    await ask("alice", "a-3", "Thanks.");
    for (const [thread, first, second] of [
      [
        "a-4",
        "How do I rotate the signing keys on the payments cluster?",
        "No, I mean our internal runbook for the payments cluster keys.",
      ],
      [
        "a-5",
        "How do I fail over the primary database on the eu cluster?",
        "That's the public help center. I need the internal runbook for the database cluster.",
      ],
    ]) {
      await ask("alice", thread, first);
      await ask("alice", thread, second);
      await ask("alice", thread, "Thanks.");
    }
    morning.edict = await ask("alice", "a-6", "Thanks for sorting that out. Never email Dana.");
    morning.obeyed = await ask(
      "alice",
      "a-6",
      "Send dana.whitfield@northwind.test an email that her refund went through.",
    );
    morning.otherCaller = await ask(
      "bob",
      "b-1",
      "Send dana.whitfield@northwind.test an email that her refund went through.",
    );
    morning.bob = await ask("bob", "b-1", "What's the status of order 590114?");
    out();

    // ---------------------------------------------------------------- midday
    out("Midday: the operator's view of what waits, then apply");
    const waiting = (await ledger.listRevisions(ALICE)).filter((r) => r.status === "proposed");
    const pending = waiting.map((r) => ({
      tool: r.tool,
      notesAdded: r.notesAdded,
      queriesAdded: r.queriesAdded,
      avoidAdded: r.avoidAdded,
      callExample: r.callExample,
    }));
    table(
      out,
      ["tool", "what it adds"],
      waiting.map((r) => [r.tool, adds(r)]),
    );
    const applied: string[] = [];
    for (const revision of waiting) {
      const done = await manager.apply(revision.id, { partition: ALICE, approvedBy: OPERATOR });
      applied.push(done.tool);
    }
    out(`  applied ${applied.length}, approved by "${OPERATOR}"`);
    out();

    // ---------------------------------------------------------------- afternoon
    out("Afternoon: the same kinds of request");
    const afternoon: DayDemoSummary["afternoon"] = {};
    afternoon.order = await ask("alice", "a-7", "Where is order 319870?");
    afternoon.refund = await ask("alice", "a-8", "Refund $7.50 on ORD-319870, one cup was chipped.");
    afternoon.docs = await ask("alice", "a-9", "How do I restart the ingest workers on the search cluster?");
    afternoon.missed = await ask("alice", "a-10", "I want my money back for the blender.");
    out(
      `        routed for it: morning ${morning.missed.routed.join(", ")}; now ${afternoon.missed.routed.join(", ")}`,
    );
    afternoon.guideline = afternoon.order;
    afternoon.bob = await ask("bob", "b-2", "Where is order 590115?");
    // What was learned is in the tool's own definition: its description, as the model was sent it.
    const shownLookup = afternoon.order.shown.find((t) => t.name === "lookup_order")?.description ?? "";
    out("  what the model was shown for lookup_order before its first call this afternoon:");
    for (const line of shownLookup.split("\n")) out(`    | ${line}`.trimEnd());
    out();

    // ---------------------------------------------------------------- evening
    out("Evening: history, each applied lesson's effect, usage flags, rules; then undo");
    const history = await manager.history("lookup_order", { partition: ALICE });
    table(
      out,
      ["lookup_order", "by", "adds"],
      history.map((r) => [r.status, r.closedBy ?? r.approvedBy ?? "", adds(r)]),
    );
    // What each applied lesson answered (refused calls of a class, misses, confusions), before and since.
    const effects = (await manager.effects({ partition: ALICE })).map((e) => ({
      tool: e.tool,
      verdict: e.verdict,
      line: effectOf(e),
    }));
    table(
      out,
      ["applied lesson", "measured effect (events/opportunities, before -> since)"],
      effects.map((e) => [e.tool, e.line]),
    );
    const flags = (await manager.flags({ partition: ALICE })).map((f) => `${f.tool} ${f.flag}`);
    out(`  usage flags: ${flags.length ? flags.join(", ") : "none"}`);
    const rules: DayDemoSummary["rules"] = [];
    for (const partition of [ALICE, BOB]) {
      for (const r of await manager.listRules({ partition })) {
        rules.push({ partition, priority: r.priority, tool: r.tool, rule: r.rule });
      }
    }
    table(
      out,
      ["partition", "rule"],
      rules.map((r) => [r.partition, `[${r.priority}] ${r.tool}: ${r.rule}`]),
    );
    await manager.undo("refund_order", { partition: ALICE, approvedBy: OPERATOR });
    out("  undo refund_order (its note goes from what the model is shown), then a refund again:");
    const afterUndo = await ask("alice", "a-11", "Refund $5.00 on ORD-319871, the lid is missing.");

    const calls: Record<string, number> = {};
    for (const partition of [ALICE, BOB]) calls[partition] = (await ledger.listCalls(partition)).length;
    return {
      ledgerPath,
      morning,
      pending,
      applied,
      afternoon,
      shownLookup,
      history: history.map((r) => r.status),
      effects,
      flags,
      rules,
      afterUndo,
      calls,
    };
  } finally {
    await opened.close();
  }
}

/** What a revision adds, in one short line. */
function adds(r: Revision): string {
  const parts = [
    ...r.notesAdded.map((n) => `note "${clip(n, 48)}"`),
    ...(r.callExample ? ["example call"] : []),
    ...r.queriesAdded.map((q) => `example "${clip(q, 40)}"`),
    ...r.avoidAdded.map((n) => `"${clip(n.text, 48)}"`),
  ];
  return parts.join(", ") || "(nothing)";
}

/** A lesson's measured effect in one line: the verdict, flagged or not, and the counts; no value, no request. */
function effectOf(e: RevisionEffect): string {
  const counts = e.targets.map((t) => {
    const what =
      t.target.kind === "failure"
        ? `refused (${t.target.errorClass})`
        : t.target.kind === "miss"
          ? "missed"
          : `confused with ${t.target.neighbour}`;
    return `${what} ${t.before.events}/${t.before.opportunities} -> ${t.after.events}/${t.after.opportunities}`;
  });
  const verdict =
    e.verdict === "not_enough_data"
      ? `not enough data yet (${MIN_EFFECT_OPPORTUNITIES} a side)`
      : `${e.flag ? "FLAGGED " : ""}${e.verdict.replace(/_/g, " ")}`;
  return `${verdict}: ${counts.join("; ")}`;
}

/**
 * The desk's scripted model, keeping what each of its calls was sent: the tools bound for the call,
 * each with its description (the author's text, then what was learned, as `src/prompt/describe.ts`
 * renders it). The graph binds the routed tools anew every turn, so each binding shares the list.
 */
class WatchedSupportModel extends ScriptedSupportModel {
  constructor(
    private readonly sent: BoundTool[][],
    bound: readonly BoundTool[] = [],
  ) {
    super(bound);
  }

  override bindTools(tools: BindToolsInput[]): WatchedSupportModel {
    return new WatchedSupportModel(this.sent, super.bindTools(tools).bound);
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.sent.push([...this.bound]);
    return super._generate(messages);
  }
}

/** A small table: a header row and rows, columns padded. */
function table(out: (line?: string) => void, header: string[], rows: string[][]): void {
  if (rows.length === 0) {
    out("  (none)");
    return;
  }
  const widths = header.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length))));
  const line = (cells: string[]) => `  ${cells.map((c, i) => clip(c, 90).padEnd(widths[i])).join("  ")}`.trimEnd();
  out(line(header));
  out(line(widths.map((w) => "-".repeat(w))));
  for (const row of rows) out(line(row));
}

/** The calls and the answer of the newest turn. */
function outcomeOf(messages: readonly BaseMessage[]): Pick<DayTurn, "calls" | "answer"> {
  let start = messages.length - 1;
  while (start >= 0 && messages[start].getType() !== "human") start -= 1;
  const turn = messages.slice(start + 1);
  const calls = turn
    .filter((m): m is ToolMessage => m instanceof ToolMessage)
    .map((m) => ({ tool: m.name ?? "", ok: m.status !== "error" }));
  const last = turn[turn.length - 1];
  return { calls, answer: last && last.getType() === "ai" ? last.text : "" };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const started = Date.now();
  main()
    .then(() => console.log(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s`))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
