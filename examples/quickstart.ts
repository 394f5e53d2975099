/**
 * `npm run demo`: the whole loop on a small support desk, offline, in a few seconds.
 *
 * 1. Two callers (partitions `u:alice` and `u:bob`) talk to a real LangGraph agent
 *    (route → agent → ToolNode → agent) driven by a scripted model that makes real models'
 *    mistakes. `ToolLessonsCallbackHandler` records every call; the route node records what
 *    routing offered for each request. The ledger is the embedded default, a SQLite file.
 * 2. What the ledger holds: calls and failures per partition and tool, masked error samples,
 *    and what routing offered for each request.
 * 3. The operator's loop: review → proposed revisions → apply → the failing request again (the
 *    model is now shown the learned lines and gets it right first time) → undo → history.
 *
 * Run it again and it prints the same (the ledger file is recreated at start).
 */
import { rm } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { AIMessage, HumanMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import {
  bindRoutedTools,
  LessonManager,
  openLedger,
  registerTools,
  type Revision,
  ToolIndex,
  ToolLessonsAnnotation,
  ToolLessonsCallbackHandler,
  type ToolLessonsState,
} from "../src/index.js";
import { createRouteNode } from "../src/graph/index.js";
import { ToolRouter } from "../src/routing/index.js";
import { modelDescription } from "../src/prompt/index.js";
import { classifyError, resolvePartition } from "../src/record/index.js";
import { ScriptedSupportModel, supportDeskTools } from "./support-desk.js";

/** Options of {@link main}. */
export interface DemoOptions {
  /**
   * Print nothing (the test runs it this way).
   * @default false
   */
  quiet?: boolean;
  /**
   * Directory of the demo's ledger file (`ledger.db`), created if missing. The file is deleted
   * at start so every run begins empty; nothing else in the directory is touched.
   * @default ".tool-lessons/demo" under the working directory
   */
  dir?: string;
}

/** What one user message led to: the tool calls in order, with outcome and error class. */
export interface TurnOutcome {
  caller: string;
  request: string;
  calls: { tool: string; ok: boolean; errorClass?: string }[];
  answer: string;
}

/** What {@link main} returns, for the test and for anyone scripting the demo. */
export interface DemoSummary {
  /** The SQLite file the ledger lives in. */
  ledgerPath: string;
  /** Partitions with call records. */
  partitions: string[];
  /** Call records per partition, after the first round of traffic. */
  calls: Record<string, number>;
  /** Failed calls per partition, tool and error class, after the first round of traffic. */
  failures: Record<string, Record<string, Record<string, number>>>;
  /** Calls refused by the tool's schema (never reached tool callbacks), recorded from ToolMessages. */
  schemaRefusals: number;
  /** Revisions the reviews proposed, per partition. */
  proposed: Record<
    string,
    Pick<Revision, "tool" | "notesAdded" | "queriesAdded" | "avoidAdded" | "callExample" | "refused">[]
  >;
  /** Tools whose revision was applied. */
  applied: string[];
  /** The tool whose lesson is shown, undone and re-run. */
  tool: string;
  /** What the model was shown for it and what happened, before learning, after apply, after undo. */
  before: { description: string; turn: TurnOutcome };
  afterApply: { description: string; turn: TurnOutcome };
  afterUndo: { description: string; turn: TurnOutcome };
  /** The docs question re-run after apply (the "Not for" line and learned examples at work). */
  docsAfterApply: TurnOutcome;
  /** The other partition's description of the tool after apply (lessons do not cross partitions). */
  otherPartitionDescription: string;
  /** Revision statuses of the tool, newest first. */
  history: string[];
}

const OPERATOR = "demo-operator";

/** The two callers: one names itself in `metadata`, the other in `configurable` as well. */
const ALICE = { user: "alice", partition: resolvePartition({ user_id: "alice" }) };
const BOB = { user: "bob", partition: resolvePartition({ user_id: "bob" }) };

/** Run the demo. Returns a summary; prints as it goes unless `quiet`. */
export async function main(options: DemoOptions = {}): Promise<DemoSummary> {
  const out = options.quiet ? () => undefined : (line = "") => console.log(line);
  const dir = resolve(options.dir ?? ".tool-lessons/demo");
  const ledgerPath = join(dir, "ledger.db");
  for (const suffix of ["", "-wal", "-shm"]) await rm(`${ledgerPath}${suffix}`, { force: true });

  const ledger = await openLedger({ path: ledgerPath });
  try {
    return await run(ledger, ledgerPath, out);
  } finally {
    await ledger.close();
  }
}

type Print = (line?: string) => void;
type OpenedLedger = Awaited<ReturnType<typeof openLedger>>;

async function run(ledger: OpenedLedger, ledgerPath: string, out: Print): Promise<DemoSummary> {
  const tools = supportDeskTools();
  const index = new ToolIndex({ ledger });
  for (const caller of [ALICE, BOB]) {
    await registerTools(ledger, tools, { partition: caller.partition });
    await index.reindex(caller.partition);
  }
  const router = new ToolRouter({ index, maxTools: 4 });
  const recorder = new ToolLessonsCallbackHandler({ ledger });
  const model = new ScriptedSupportModel();

  // The agent: route the new user turn, bind only the routed tools (described as their cards
  // say), run the calls with LangGraph's own ToolNode, loop until the model answers.
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode("route", createRouteNode({ router, ledger }))
    .addNode("agent", async (state: ToolLessonsState, config: RunnableConfig) => {
      // The route node read this caller's cards of the routed tools once for the turn.
      const bound = bindRoutedTools(model, tools, state.routedTools, state.routedCards);
      return { messages: [await bound.invoke(state.messages, config)] };
    })
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "route")
    .addEdge("route", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });

  let threads = 0;
  const newThread = () => `thread-${++threads}`;

  /** One user message in a thread. Alice names herself in metadata; Bob in configurable too. */
  async function ask(
    caller: typeof ALICE,
    threadId: string,
    request: string,
    show: { offered?: boolean } = {},
  ): Promise<TurnOutcome> {
    const config: RunnableConfig =
      caller === ALICE
        ? { configurable: { thread_id: threadId }, metadata: { user_id: caller.user } }
        : // Nodes read `configurable`; callbacks only see `metadata`, so the id goes in both.
          { configurable: { thread_id: threadId, user_id: caller.user }, metadata: { user_id: caller.user } };
    const state = await graph.invoke({ messages: [new HumanMessage(request)] }, { ...config, callbacks: [recorder] });
    await recorder.flush();
    const turn = outcomeOf(caller.user, request, state.messages);
    out(`  ${turn.caller.padEnd(5)} ${JSON.stringify(request)}`);
    if (show.offered) out(`        offered: ${state.routedTools.join(", ")}`);
    out(
      `        ${turn.calls.map((c) => `${c.tool} ${c.ok ? "ok" : `refused (${c.errorClass})`}`).join(" → ") || "(no tool)"}`,
    );
    return turn;
  }

  const relPath = relative(process.cwd(), ledgerPath) || ledgerPath;
  out("tool-lessons demo: a support desk with 8 tools, a scripted model, two callers");
  out(`ledger: SQLite file ${relPath} (embedded default; recreated on every run)`);
  out(`routing: ${router.maxTools} of ${tools.length} tools offered per request (offline lexical embeddings)`);
  out();

  // ------------------------------------------------------------------ 1. traffic
  out("1. Traffic (the raw requests; the ledger only keeps masked text)");
  const before = modelDescription((await ledger.getCard(ALICE.partition, "lookup_order"))!);
  const first = await ask(ALICE, newThread(), "Where is order 482913? It was a birthday present.");
  await ask(ALICE, newThread(), "Can you check on order 771204 for me?");
  await ask(ALICE, newThread(), "Please refund $18.50 on ORD-771204, the mug arrived broken.");
  await ask(ALICE, newThread(), "Refund $12.00 on ORD-660981, it was the wrong size.");
  let docs = newThread();
  await ask(ALICE, docs, "How do I rotate the signing keys on the payments cluster?");
  await ask(ALICE, docs, "No, I mean our internal runbook for the payments cluster keys.");
  docs = newThread();
  await ask(ALICE, docs, "How do I fail over the primary database on the eu cluster?");
  await ask(ALICE, docs, "That's the public help center. I need the internal runbook for the database cluster.");
  await ask(ALICE, newThread(), "Send dana.whitfield@northwind.test an email that her refund went through.");
  await ask(BOB, newThread(), "What's the status of order 590114?");
  await ask(BOB, newThread(), "Track the parcel for ORD-590114 please.");
  await ask(BOB, newThread(), "Reset the password for bob.okafor@northwind.test");
  await ask(BOB, newThread(), "How do I download my invoices?");
  out();

  // ------------------------------------------------------------------ 2. what the ledger holds
  out("2. What the ledger holds, per partition");
  const partitions = [ALICE.partition, BOB.partition];
  const calls: Record<string, number> = {};
  const failures: DemoSummary["failures"] = {};
  let schemaRefusals = 0;
  for (const partition of partitions) {
    const records = await ledger.listCalls(partition);
    calls[partition] = records.length;
    failures[partition] = {};
    out(`  [${partition}] ${records.length} calls`);
    const byTool = groupBy(records, (r) => r.tool);
    for (const [tool, rows] of byTool) {
      const failed = rows.filter((r) => r.outcome === "error");
      const classes: Record<string, number> = {};
      for (const r of failed) classes[r.errorClass ?? "unknown"] = (classes[r.errorClass ?? "unknown"] ?? 0) + 1;
      if (failed.length > 0) failures[partition][tool] = classes;
      schemaRefusals += failed.filter((r) => r.source === "tool_message").length;
      const classText = Object.entries(classes)
        .map(([c, n]) => `${n} ${c}`)
        .join(", ");
      out(
        `    ${tool.padEnd(24)} ${rows.length} calls${failed.length ? `, ${failed.length} failed (${classText})` : ""}`,
      );
      const sample = failed[0];
      if (sample) {
        const via = sample.source === "tool_message" ? "schema refusal, from the ToolMessage" : "from the tool's error";
        out(`      sample (${via}): ${clip(sample.errorMessage ?? "", 110)}`);
        out(`      args kept as shapes: ${sample.args.map((a) => `${a.name}=${a.shape}`).join(", ")}`);
      }
    }
    out("    routing offered, per request (the request's one masked text is its turn's):");
    const requests = new Map((await ledger.listTurns(partition)).map((t) => [t.requestId, t.request]));
    for (const route of await ledger.listRoutes(partition)) {
      const request = requests.get(route.requestId) ?? "";
      out(`      ${clip(JSON.stringify(request), 64).padEnd(66)} ${route.offered.map((o) => o.tool).join(", ")}`);
    }
  }
  out();

  // ------------------------------------------------------------------ 3. review, apply, re-run, undo
  out("3. Review (deterministic proposer; every line vetted by code)");
  const manager = new LessonManager({ ledger, index });
  const proposed: DemoSummary["proposed"] = {};
  const waiting: Revision[] = [];
  for (const partition of partitions) {
    const review = await manager.review({ partition });
    proposed[partition] = review.revisions.map((r) => ({
      tool: r.tool,
      notesAdded: r.notesAdded,
      queriesAdded: r.queriesAdded,
      avoidAdded: r.avoidAdded,
      callExample: r.callExample,
      refused: r.refused,
    }));
    waiting.push(...review.revisions);
    out(`  [${partition}] ${review.revisions.length} revision(s) proposed`);
    for (const r of review.revisions) printRevision(r, out);
    const quiet = review.refused.filter((f) => !review.revisions.some((r) => r.tool === f.tool));
    for (const { tool, refusal } of quiet) out(`    ${tool}: refused (${refusal.reason}): ${clip(refusal.text, 80)}`);
    for (const [reason, tools] of groupBy(review.skipped, (s) => s.reason)) {
      out(`    not reviewed, ${reason.replace(/_/g, " ")}: ${tools.map((s) => s.tool).join(", ")}`);
    }
    for (const f of review.flags)
      out(`    usage flag: ${f.tool} ${f.flag} (offered in ${f.offeredTurns} of ${f.routedTurns} routed turns)`);
  }
  out();

  out(`  apply each, approvedBy "${OPERATOR}":`);
  const applied: string[] = [];
  for (const revision of waiting) {
    const done = await manager.apply(revision.id, { partition: revision.partition, approvedBy: OPERATOR });
    applied.push(done.tool);
    const withdrawn = done.queriesWithdrawn.length > 0 ? `; withdrawn: ${done.queriesWithdrawn.join(" | ")}` : "";
    out(`    ${done.tool}: ${done.status}${withdrawn}`);
  }
  out();

  const tool = "lookup_order";
  const learnedCard = (await ledger.getCard(ALICE.partition, tool))!;
  const afterDescription = modelDescription(learnedCard);
  out(`  What the model is now shown for ${tool} in ${ALICE.partition}:`);
  for (const line of afterDescription.split("\n")) out(`    | ${line}`);
  const otherPartitionDescription = modelDescription((await ledger.getCard(BOB.partition, tool))!);
  out(`  ...and in ${BOB.partition} (nothing crosses partitions): ${JSON.stringify(otherPartitionDescription)}`);
  const docsCard = (await ledger.getCard(ALICE.partition, "search_public_docs"))!;
  for (const line of docsCard.learned.notFor)
    out(`  search_public_docs in ${ALICE.partition} now also says: ${JSON.stringify(line.text)}`);
  out();
  out("  The same kinds of request again, after apply:");
  const again = await ask(ALICE, newThread(), "Where is order 319870?");
  const docsAgain = await ask(ALICE, newThread(), "How do I restart the ingest workers on the search cluster?", {
    offered: true,
  });
  out();

  out(`  undo ${tool}, then the same request once more:`);
  await manager.undo(tool, { partition: ALICE.partition, approvedBy: OPERATOR });
  const undoneDescription = modelDescription((await ledger.getCard(ALICE.partition, tool))!);
  out(`    model is shown: ${JSON.stringify(undoneDescription)}`);
  const afterUndo = await ask(ALICE, newThread(), "Where is order 319870?");
  out();

  const history = await manager.history(tool, { partition: ALICE.partition });
  out(`  history of ${tool} in ${ALICE.partition}, newest first:`);
  for (const r of history) {
    const who = [r.approvedBy && `applied by ${r.approvedBy}`, r.closedBy && `${r.status} by ${r.closedBy}`].filter(
      Boolean,
    );
    const failed = r.evidence.reduce((n, e) => n + (e.kind === "failed_call" ? e.callIds.length : 0), 0);
    out(
      `    ${r.status.padEnd(8)} ${who.join(", ")}; +${r.notesAdded.length} note, example call ${r.callExample ? "yes" : "no"}; cites ${failed} failed calls`,
    );
  }

  return {
    ledgerPath,
    partitions: (await ledger.listPartitions()).filter((p) => partitions.includes(p)).sort(),
    calls,
    failures,
    schemaRefusals,
    proposed,
    applied,
    tool,
    before: { description: before, turn: first },
    afterApply: { description: afterDescription, turn: again },
    afterUndo: { description: undoneDescription, turn: afterUndo },
    docsAfterApply: docsAgain,
    otherPartitionDescription,
    history: history.map((r) => r.status),
  };
}

function printRevision(r: Revision, out: Print): void {
  out(`    ${r.tool}`);
  for (const note of r.notesAdded) out(`      note:         ${note}`);
  if (r.callExample) out(`      example call: ${r.callExample.replace(/^Example call:\s*/, "")}`);
  for (const q of r.queriesAdded) out(`      example:      ${JSON.stringify(q)}`);
  for (const n of r.avoidAdded) out(`      not for:      ${n.text}`);
  for (const rank of r.ranks)
    out(
      `      rank of ${JSON.stringify(clip(rank.request, 50))}: ${rank.before ?? "not offered"} → ${rank.after ?? "not offered"}`,
    );
  for (const f of r.refused) out(`      refused (${f.reason}): ${clip(f.text, 90)}`);
}

/** The calls made for the newest user message, from the thread's messages. */
function outcomeOf(caller: string, request: string, messages: readonly BaseMessage[]): TurnOutcome {
  let start = messages.length - 1;
  while (start >= 0 && messages[start].getType() !== "human") start -= 1;
  const turn = messages.slice(start + 1);
  const calls: TurnOutcome["calls"] = [];
  for (const message of turn) {
    if (!(message instanceof ToolMessage)) continue;
    const failed = message.status === "error";
    calls.push({
      tool: message.name ?? "unknown",
      ok: !failed,
      ...(failed ? { errorClass: classifyError(message.content) } : {}),
    });
  }
  const last = turn[turn.length - 1];
  const answer = last instanceof AIMessage && typeof last.content === "string" ? last.content : "";
  return { caller, request, calls, answer };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
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
