/**
 * Where the recorder's own time goes: its callbacks driven directly (no LangGraph) for runs of
 * the recording bench's shape (7 calls: a tool error, a schema refusal, an email, amounts, an
 * order id; then a turn), every run masked, built and written to an in-memory ledger, under V8's
 * sampling profiler. Each sample is charged to the nearest frame on its stack that names a part
 * (schema validation, a detector, the rest of masking, fingerprint HMACs, ids, the store ...).
 *
 * Run with `npx tsx bench/profile-recorder.ts` (prints a markdown table; `--cpuprofile FILE`
 * also saves the raw profile for Chrome's DevTools). Not a section of `npm run bench`: its split
 * is written to docs/benchmarks.md by hand, before and after a change, from the same script.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { Ledger } from "../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../src/record/handler.js";
import { PII_DETECTORS } from "../src/text/detectors.js";
import { normalizeText } from "../src/text/normalize.js";

const RUNS = Number(process.env.PROFILE_RUNS ?? 3000);
const WARMUP = 300;
/** Runs between two flushes: the writer's batches, as a run of turns would see them. */
const FLUSH_EVERY = 20;

const CALLS = [
  { name: "lookup_order", args: { order_id: "ORD-918273" }, out: '{"order_id":"ORD-918273","status":"shipped"}' },
  { name: "echo", args: { n: 1 }, out: "ok 1" },
  { name: "refund", args: { order_id: "ORD-918273", amount: 48.5 }, out: "refunded 48.5" },
  {
    name: "refund",
    args: { order_id: "ORD-918273", amount: 4850 },
    error: "Refund of 4850 for ORD-918273 is not allowed: permission denied",
  },
  { name: "echo", args: { n: 2 }, out: "ok 2" },
  { name: "lookup_order", args: { order_id: "918273" }, error: "Order 918273 not found" },
  {
    name: "send_email",
    args: { to: "sam@example.com", subject: "Refund", body: "Your refund of 48.50 is on its way." },
    out: "sent to sam@example.com",
  },
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** The part a frame names, or undefined to look further up the stack. */
function partOf(frame: ProfileNode["callFrame"]): string | undefined {
  const { functionName: fn, url } = frame;
  if (fn === "(garbage collector)") return "garbage collection";
  if (url.includes("/zod/")) return "schema validation (zod)";
  if (url.includes("/src/text/detector")) return "masking: detectors";
  if (url.includes("/src/text/fingerprint")) return "fingerprints (HMAC)";
  if (url.includes("/src/text/")) return "masking: values, normalising, gate";
  if (fn === "timeOrderedId" || fn === "randomHex") return "ids";
  if (url.includes("/src/ledger/")) return "ledger (rest)";
  if (url.includes("@langchain/langgraph")) return "store (InMemoryStore)";
  if (url.includes("/src/record/rows")) return "row building (rest)";
  if (url.includes("/src/record/")) return "recorder: callbacks and writer";
  return undefined;
}

async function main(): Promise<void> {
  const handler = new ToolLessonsCallbackHandler({
    ledger: new Ledger(new InMemoryStore()),
    failureSink: () => undefined,
  });
  const serialized = { lc: 1, type: "not_implemented" as const, id: ["tool"] };
  const metadata = { user_id: "bench", thread_id: "t" };
  const once = (r: number): void => {
    const human = new HumanMessage({
      content: `Refund 48.50 on ORD-918273 and tell sam@example.com (${r})`,
      id: `h-${r}`,
    });
    const toolCalls = CALLS.map((c, i) => ({
      id: `c-${r}-${i}`,
      name: c.name,
      args: c.args,
      type: "tool_call" as const,
    }));
    const ai = new AIMessage({
      content: "",
      tool_calls: toolCalls,
      usage_metadata: { input_tokens: 110, output_tokens: 10, total_tokens: 120 },
    });
    const root = `root-${r}`;
    const node = `node-${r}`;
    const state = { messages: [human] };
    handler.handleChainStart(serialized, state, root, undefined, [], metadata);
    handler.handleChainStart(serialized, state, node, root, [], metadata);
    handler.handleLLMEnd({ generations: [[{ text: "", message: ai } as never]] }, `llm-${r}`, node);
    const outputs = CALLS.map((c, i) => {
      const run = `tool-${r}-${i}`;
      handler.handleToolStart(serialized, JSON.stringify(c.args), run, node, [], metadata, c.name, toolCalls[i].id);
      if (c.error !== undefined) {
        void handler.handleToolError(new Error(c.error), run);
        return new ToolMessage({ content: c.error, tool_call_id: toolCalls[i].id, status: "error" });
      }
      const out = new ToolMessage({ content: c.out ?? "", tool_call_id: toolCalls[i].id, status: "success" });
      void handler.handleToolEnd(out, run);
      return out;
    });
    void handler.handleChainEnd({ messages: outputs }, node, root);
    void handler.handleChainEnd(state, root);
  };
  const drive = async (from: number, to: number): Promise<void> => {
    for (let r = from; r < to; r += 1) {
      once(r);
      if ((r + 1) % FLUSH_EVERY === 0) await handler.flush();
    }
    await handler.flush();
  };

  await drive(0, WARMUP);
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const t0 = performance.now();
  await drive(WARMUP, WARMUP + RUNS);
  const elapsed = performance.now() - t0;
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  const out = process.argv.indexOf("--cpuprofile");
  if (out > 0) writeFileSync(process.argv[out + 1], JSON.stringify(profile));

  const nodes = profile.nodes as ProfileNode[];
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const partCache = new Map<number, string>();
  const partOfNode = (id: number): string => {
    const known = partCache.get(id);
    if (known !== undefined) return known;
    let part: string | undefined;
    for (let at: number | undefined = id; at !== undefined && part === undefined; at = parent.get(at)) {
      part = partOf(byId.get(at)!.callFrame);
    }
    const found = part ?? "other (callback plumbing, promises, runtime)";
    partCache.set(id, found);
    return found;
  };
  const time = new Map<string, number>();
  const leaves = new Map<string, number>();
  let total = 0;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i += 1) {
    const name = byId.get(samples[i])!.callFrame.functionName;
    if (name === "(idle)" || name === "(program)" || name === "(root)") continue;
    const dt = deltas[i] ?? 0;
    const part = partOfNode(samples[i]);
    time.set(part, (time.get(part) ?? 0) + dt);
    const leaf = byId.get(samples[i])!.callFrame;
    const leafName = `${part} <- ${leaf.functionName || "(anonymous)"} ${leaf.url.split("/").slice(-2).join("/")}`;
    leaves.set(leafName, (leaves.get(leafName) ?? 0) + dt);
    total += dt;
  }
  const calls = RUNS * CALLS.length;
  const stats = handler.stats();
  const lines = [
    `Recorder alone, ${RUNS} runs of ${CALLS.length} calls and a turn, in-memory ledger, flushed every ${FLUSH_EVERY} runs: ` +
      `**${((elapsed * 1000) / calls).toFixed(0)} µs per call** (wall, profiler on); written ${stats.written.calls} calls / ${stats.written.turns} turns.`,
    "",
    "| part | share of sampled time | µs per call |",
    "|---|---:|---:|",
    ...[...time.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([part, us]) => `| ${part} | ${((100 * us) / total).toFixed(1)}% | ${(us / calls).toFixed(1)} |`),
  ];
  console.log(lines.join("\n"));
  console.log(detectorSplit());
  if (process.env.PROFILE_LEAVES) {
    for (const [name, us] of [...leaves.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, Number(process.env.PROFILE_LEAVES))) {
      console.log(`${((100 * us) / total).toFixed(1)}%  ${name}`);
    }
  }
}

await main();

/** The detectors timed alone on the texts a run masks (its request, errors and outputs): the four named in the issue against the rest. */
function detectorSplit(): string {
  const texts = [
    "Refund 48.50 on ORD-918273 and tell sam@example.com (12)",
    ...CALLS.map((c) => c.error ?? c.out ?? ""),
  ].map(normalizeText);
  const four = new Set(
    PII_DETECTORS.filter((d) => ["api_key", "mac_address", "ipv6", "street_address"].includes(d.name)).map(
      (d) => d.detect,
    ),
  );
  const time = (detect: (t: string) => unknown) => {
    const t0 = performance.now();
    for (let k = 0; k < 2000; k += 1) for (const t of texts) detect(t);
    return ((performance.now() - t0) * 1000) / 2000;
  };
  for (const d of PII_DETECTORS) time(d.detect);
  let fourUs = 0;
  let restUs = 0;
  for (const d of PII_DETECTORS) {
    const us = time(d.detect);
    if (four.has(d.detect)) fourUs += us;
    else restUs += us;
  }
  return (
    `\nDetectors alone on one run's ${texts.length} texts: street address + API key + IPv6 + MAC ${fourUs.toFixed(1)} µs, ` +
    `the other ${PII_DETECTORS.length - 4} detectors ${restUs.toFixed(1)} µs (the four: ${((100 * fourUs) / (fourUs + restUs)).toFixed(0)}%).`
  );
}
