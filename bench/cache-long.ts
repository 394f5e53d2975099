/**
 * What keeping the prompt cache costs a user over long threads and a large catalog (issue 45):
 * MetaTool's 199 tools, threads of {@link TURNS} turns each over a different tool, a scripted
 * model (`bench/cache-model.ts`), the same threads for every mode:
 *
 * - `allTools`: every tool on every call (`createAgent` without the middleware);
 * - `narrowing`: `toolLessonsMiddleware({ maxTools })`, the routed tools of each request;
 * - `append`: cache-keeping, found tools appended to the thread's tools (`deferredLoading: "append"`);
 * - `deferred`: cache-keeping, provider-deferred (`deferredLoading: "anthropic"`): every tool sent
 *   with `defer_loading`, `search_tools` answered with `tool_reference` blocks.
 *
 * Each model call is rendered as Anthropic bills it (`rendered`), and compared with the thread's
 * previous call: the common prefix is read from the cache, the rest is written to it.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HumanMessage, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { seededRandom } from "../src/internal.js";
import { Ledger } from "../src/ledger/ledger.js";
import { toolLessonsMiddleware } from "../src/middleware/index.js";
import { DeferringModel, type ModelCall, rendered, type Want } from "./cache-model.js";
import { readJsonl } from "./jsonl.js";

export const MODES = ["allTools", "narrowing", "append", "deferred"] as const;
export type LongMode = (typeof MODES)[number];

const THREADS = 6;
const TURNS = 20;
const MAX_TOOLS = 5;
/** Anthropic's prompt-cache prices, as multiples of the base input price. */
const CACHE_READ = 0.1;
const CACHE_WRITE = 1.25;
const SYSTEM_PROMPT = "You are a helpful assistant. Use your tools when one fits the request.";

export interface LongFigures {
  calls: number;
  /** Bytes kept from each call to the next, over the previous call's bytes (all pairs of every thread). */
  prefixKeptShare: number;
  /** The lowest share of one pair. */
  prefixKeptMin: number;
  promptTokensPerCall: number;
  uncachedTokensPerCall: number;
  effectiveTokensPerCall: number;
  toolsPerCall: number;
  /** Effective tokens of all the calls a request took, per request. */
  effectiveTokensPerRequest: number;
  searches: number;
  served: number;
  requests: number;
}

const dataDir =
  process.env.METATOOL_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../shared/data/metatool");

interface Thread {
  turns: { query: string; tool: string }[];
}

/** Threads of {@link TURNS} requests, each needing a different tool (the same seeded draw for every mode). */
function drawThreads(known: Set<string>): Thread[] {
  const queries = readJsonl<{ query: string; expect: string[] }>(path.join(dataDir, "queries.jsonl")).filter(
    (q) => q.expect.length === 1 && known.has(q.expect[0]),
  );
  const random = seededRandom(45);
  return Array.from({ length: THREADS }, () => {
    const used = new Set<string>();
    const turns: Thread["turns"] = [];
    while (turns.length < TURNS) {
      const q = queries[Math.floor(random() * queries.length)];
      if (used.has(q.expect[0]) || turns.some((t) => t.query === q.query)) continue;
      used.add(q.expect[0]);
      turns.push({ query: q.query, tool: q.expect[0] });
    }
    return { turns };
  });
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Runs every thread in one mode and prices every model call. */
async function runMode(mode: LongMode, threads: Thread[], count: (text: string) => number): Promise<LongFigures> {
  const catalog = readJsonl<{ name: string; description: string }>(path.join(dataDir, "tools.jsonl"));
  const tools = catalog.map((t) =>
    tool(async () => `${t.name} did it.`, {
      name: t.name,
      description: t.description,
      schema: { type: "object", properties: { request: { type: "string" } }, required: ["request"] },
    }),
  );
  const script = new Map(threads.flatMap((t) => t.turns).map((t) => [t.query, t]));
  const want = (request: string): Want => {
    const turn = script.get(request);
    return turn && { tool: turn.tool, args: { request: "as asked" }, query: request };
  };
  const calls: ModelCall[] = [];
  const middleware =
    mode === "allTools"
      ? []
      : [
          toolLessonsMiddleware({
            ledger: new Ledger(new InMemoryStore()),
            maxTools: MAX_TOOLS,
            cacheKeeping: mode !== "narrowing",
            deferredLoading: mode === "deferred" ? "anthropic" : "append",
            timeoutMs: 60_000,
            failureSink: () => undefined,
          }),
        ];
  const agent = createAgent({
    model: new DeferringModel(want, calls),
    tools,
    systemPrompt: SYSTEM_PROMPT,
    middleware,
    checkpointer: new MemorySaver(),
  });
  const out = {
    calls: 0,
    kept: 0,
    before: 0,
    min: 1,
    prompt: 0,
    uncached: 0,
    effective: 0,
    shown: 0,
    searches: 0,
    served: 0,
  };
  for (const [t, thread] of threads.entries()) {
    calls.length = 0;
    const config = { configurable: { thread_id: `long-${t}` }, context: { user_id: "bench" } };
    for (const turn of thread.turns) {
      const state = await agent.invoke({ messages: [new HumanMessage(turn.query)] }, config as never);
      const messages = state.messages as BaseMessage[];
      const ran = messages
        .slice(messages.findLastIndex((m) => m.getType() === "human"))
        .filter((m) => m.getType() === "tool") as ToolMessage[];
      out.searches += ran.filter((m) => m.name === "search_tools").length;
      if (ran.some((m) => m.name === turn.tool && m.status !== "error")) out.served += 1;
    }
    let previous: string | undefined;
    for (const call of calls) {
      const { prompt, toolsShown } = rendered(call);
      const keptChars = previous === undefined ? 0 : commonPrefix(previous, prompt);
      if (previous !== undefined) {
        out.kept += keptChars;
        out.before += previous.length;
        out.min = Math.min(out.min, keptChars / previous.length);
      }
      const total = count(prompt);
      const cached = keptChars === 0 ? 0 : count(prompt.slice(0, keptChars));
      out.calls += 1;
      out.prompt += total;
      out.uncached += total - cached;
      out.effective += CACHE_READ * cached + CACHE_WRITE * (total - cached);
      out.shown += toolsShown;
      previous = prompt;
    }
  }
  return {
    calls: out.calls,
    prefixKeptShare: out.before === 0 ? 0 : out.kept / out.before,
    prefixKeptMin: out.min,
    promptTokensPerCall: out.prompt / out.calls,
    uncachedTokensPerCall: out.uncached / out.calls,
    effectiveTokensPerCall: out.effective / out.calls,
    toolsPerCall: out.shown / out.calls,
    effectiveTokensPerRequest: out.effective / (THREADS * TURNS),
    searches: out.searches,
    served: out.served,
    requests: THREADS * TURNS,
  };
}

const LABELS: Record<LongMode, string> = {
  allTools: "every tool",
  narrowing: `narrowing (\`maxTools: ${MAX_TOOLS}\`)`,
  append: "cache-keeping, append",
  deferred: "cache-keeping, provider-deferred",
};

/** The long-threads part of the `cache` section: its markdown and its figures (`longThreads`). */
export async function benchLongThreads(
  count: (text: string) => number,
  how: string,
): Promise<{ markdown: string; figures: Record<LongMode, Record<string, number>> }> {
  const catalog = readJsonl<{ name: string }>(path.join(dataDir, "tools.jsonl"));
  const threads = drawThreads(new Set(catalog.map((t) => t.name)));
  const results = {} as Record<LongMode, LongFigures>;
  for (const mode of MODES) results[mode] = await runMode(mode, threads, count);
  const r = (x: number, d = 1) => Number(x.toFixed(d));
  const figures = Object.fromEntries(
    MODES.map((m) => [
      m,
      {
        prefixKeptShare: r(results[m].prefixKeptShare, 4),
        prefixKeptMin: r(results[m].prefixKeptMin, 4),
        uncachedTokensPerCall: r(results[m].uncachedTokensPerCall),
        effectiveTokensPerCall: r(results[m].effectiveTokensPerCall),
        promptTokensPerCall: r(results[m].promptTokensPerCall),
        toolsPerCall: r(results[m].toolsPerCall, 2),
        effectiveTokensPerRequest: r(results[m].effectiveTokensPerRequest),
      },
    ]),
  ) as unknown as Record<LongMode, Record<string, number>>;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const row = (m: LongMode) => {
    const x = results[m];
    return `| ${LABELS[m]} | ${x.calls} | ${pct(x.prefixKeptShare)} | ${pct(x.prefixKeptMin)} | ${Math.round(x.promptTokensPerCall)} | ${Math.round(x.uncachedTokensPerCall)} | ${Math.round(x.effectiveTokensPerCall)} | ${Math.round(x.effectiveTokensPerRequest)} | ${x.toolsPerCall.toFixed(1)} | ${x.searches} | ${x.served}/${x.requests} |`;
  };
  const ratio = (a: LongMode, b: LongMode) =>
    (results[a].effectiveTokensPerCall / results[b].effectiveTokensPerCall).toFixed(2);
  const markdown = [
    `### Long threads over ${catalog.length} tools: what a user pays`,
    "",
    `MetaTool's ${catalog.length} tools, ${THREADS} threads of ${TURNS} turns, each turn a MetaTool request whose labelled tool`,
    "no earlier turn of the thread needed (the same seeded draw for every mode); a scripted model that calls the",
    "tool a request needs when it holds it, else `search_tools` when it has it, then the tool if the search brought",
    "it. A tool sent deferred is held once a search answer in the thread referenced it, as the provider loads it.",
    "Each model call is rendered as Anthropic's Messages API bills it: the live tool definitions (name, description,",
    "input schema; a deferred tool is left out), the system prompt, then every message, with each `tool_reference`",
    "replaced by the referenced tool's definition where it stands. The part of a call that opens the thread's",
    "previous call unchanged is read from the cache, the rest written to it (a cache breakpoint on the newest",
    `message; no expiry, no minimum length). Tokens: ${how}. Command: \`npm run bench -- cache --json\``,
    "(figures under `cache.longThreads.<mode>`).",
    "",
    "- **prefix kept**: characters of the previous call that open this one unchanged, over the previous call's",
    "  characters, summed over every pair of consecutive calls of a thread; **lowest pair**: the smallest share of one pair.",
    "- **uncached tokens per call**: the tokens after the kept prefix (written to the cache).",
    `- **effective tokens per call**: ${CACHE_READ}× the cached tokens + ${CACHE_WRITE}× the uncached ones, Anthropic's read and write prices.`,
    "- **effective tokens per request**: the effective tokens of every call a request took (a search is a call of its own).",
    "- **tools shown per call**: tool definitions in the rendering (live, or loaded by a reference).",
    "",
    "| mode | model calls | prefix kept | lowest pair | prompt tokens per call | uncached tokens per call | effective tokens per call | effective tokens per request | tools shown per call | search_tools calls | requests served by their tool |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...MODES.map(row),
    "",
    `Effective tokens per call, provider-deferred over every tool: ${ratio("deferred", "allTools")}×; over append: ${ratio("deferred", "append")}×;`,
    `over narrowing: ${ratio("deferred", "narrowing")}×. Narrowing starts a new prefix at the first tool whenever a request's routed`,
    "set differs, and serves only the requests routing put in its top tools (it has no `search_tools`); appending",
    "rewrites everything after the tools on each call that adds one, which over long threads is most of the prompt;",
    "provider-deferred leaves every byte before the newest message as it was. Every mode runs with its defaults",
    "(`searchResults: 3`): a deferred thread holds no routed tool until it searches, so it searches on most turns,",
    "and a request whose tool is not in the search's top 3 goes unserved (the column on the right).",
  ].join("\n");
  return { markdown, figures };
}
