/**
 * Cache-keeping tool search (issue 32): what each way of choosing a thread's tools does to the
 * prompt's cacheable prefix, and whether `search_tools` routes as well as the router.
 *
 * 1. A set of multi-turn threads over the support desk's tools (`examples/support-desk.ts`) with a
 *    scripted model (it calls the tool its script names when bound, else `search_tools` when bound,
 *    then the tool). Three agents, all `createAgent` with the same system prompt: narrowing
 *    (`toolLessonsMiddleware({ maxTools: 2 })`), cache-keeping (the same with `cacheKeeping: true`),
 *    and every tool (no middleware). Each model call is serialized as a provider sees it and
 *    compared with the thread's previous call.
 * 2. Long threads over MetaTool's 199 tools (`bench/cache-long.ts`): what each mode (every tool,
 *    narrowing, append, provider-deferred) costs per call at Anthropic's cache prices.
 * 3. MetaTool eval fold 1 (`/work/shared/data/metatool/`): the top-1 of `search_tools` answers
 *    (the real tool, invoked as a tool call, the caller named in `context`) beside the router's
 *    top-1 over the same index.
 *
 * Run alone with `npx tsx bench/cache.ts`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { supportDeskTools } from "../examples/support-desk.js";
import { seededRandom } from "../src/internal.js";
import { registerTools } from "../src/learn/register.js";
import { Ledger } from "../src/ledger/ledger.js";
import { toolLessonsMiddleware } from "../src/middleware/index.js";
import { ToolRouter } from "../src/routing/router.js";
import { ToolIndex } from "../src/routing/tool-index.js";
import { createSearchToolsTool } from "../src/serve/search-tools.js";
import type { SearchToolsArtifact } from "../src/serve/tool-set.js";
import { TurnServer } from "../src/serve/turn-server.js";
import { type CallView, DESK_THREAD, deskScript, SeekingModel } from "../fixtures/seeking-model.js";
import { benchLongThreads } from "./cache-long.js";
import { readJsonl as readJsonlFile } from "./jsonl.js";

const THREADS = 12;
const TURNS = 6;
const MAX_TOOLS = 2;
const SYSTEM_PROMPT = "You are the support desk's assistant. Be brief and use your tools.";
/** Requests routing does not send to the tool they need: the model has to search (or see every tool). */
const EXTRA: typeof DESK_THREAD = [
  {
    request: "Tell them the mug is lovely.",
    tool: "send_email",
    args: { to: "a@b.test", subject: "Your mug", body: "Lovely." },
    query: "send an email to a customer",
  },
  {
    request: "What is our procedure when the warehouse scanner is down?",
    tool: "search_internal_runbooks",
    args: { query: "scanner down" },
    query: "internal runbooks procedure for staff",
  },
];
const POOL = [...DESK_THREAD, ...EXTRA];

type Mode = "narrowing" | "cacheKeeping" | "allTools";

/** Token counter: js-tiktoken's cl100k_base when it can be loaded, else bytes / 4 (said in the text). */
async function tokenCounter(): Promise<{ count: (text: string) => number; how: string }> {
  try {
    const { Tiktoken } = await import("js-tiktoken/lite");
    const { default: ranks } = await import("js-tiktoken/ranks/cl100k_base");
    const encoder = new Tiktoken(ranks);
    return { count: (text) => encoder.encode(text).length, how: "js-tiktoken's cl100k_base encoding" };
  } catch {
    return { count: (text) => Math.ceil(Buffer.byteLength(text) / 4), how: "UTF-8 bytes / 4 (no tokenizer installed)" };
  }
}

/** One model call as a provider receives it: the tool definitions in order, then the system message, then the messages. */
function serialize(view: CallView): { prompt: Buffer; tools: string } {
  const tools = view.bound.map((t) => JSON.stringify(convertToOpenAITool(t as BindToolsInput as never)));
  const messages = view.messages.map((m: BaseMessage) =>
    JSON.stringify({
      role: m.getType(),
      content: m.content,
      ...((m as { tool_calls?: unknown[] }).tool_calls?.length
        ? { tool_calls: (m as { tool_calls?: unknown[] }).tool_calls }
        : {}),
      ...((m as ToolMessage).tool_call_id ? { tool_call_id: (m as ToolMessage).tool_call_id } : {}),
    }),
  );
  return { prompt: Buffer.from([...tools, ...messages].join("\n")), tools: `[${tools.join(",")}]` };
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function agentFor(mode: Mode, views: CallView[]) {
  const model = new SeekingModel(deskScript(EXTRA), views);
  const middleware =
    mode === "allTools"
      ? []
      : [
          toolLessonsMiddleware({
            ledger: new Ledger(new InMemoryStore()),
            maxTools: MAX_TOOLS,
            cacheKeeping: mode === "cacheKeeping",
            failureSink: () => undefined,
          }),
        ];
  return createAgent({
    model,
    tools: supportDeskTools(),
    systemPrompt: SYSTEM_PROMPT,
    middleware,
    checkpointer: new MemorySaver(),
  });
}

interface ModeFigures {
  calls: number;
  prefixKeptShare: number;
  keptBytesPerCall: number;
  promptBytesPerCall: number;
  toolsPerCall: number;
  toolTokensPerCall: number;
  searches: number;
  toolCallsOk: number;
  toolCallsWanted: number;
}

async function runMode(mode: Mode, count: (text: string) => number): Promise<ModeFigures> {
  const random = seededRandom(32);
  const threads = Array.from({ length: THREADS }, () =>
    Array.from({ length: TURNS }, () => POOL[Math.floor(random() * POOL.length)]),
  );
  const views: CallView[] = [];
  const agent = agentFor(mode, views);
  let kept = 0;
  let before = 0;
  let pairs = 0;
  let tools = 0;
  let toolTokens = 0;
  let promptBytes = 0;
  let calls = 0;
  let searches = 0;
  let ok = 0;
  for (const [t, turns] of threads.entries()) {
    views.length = 0;
    const config = { configurable: { thread_id: `bench-${t}` }, context: { user_id: "bench" } };
    for (const turn of turns) {
      const state = await agent.invoke({ messages: [new HumanMessage(turn.request)] }, config as never);
      const messages = state.messages as BaseMessage[];
      const at = messages.findLastIndex((m) => m.getType() === "human");
      const ran = messages.slice(at).filter((m) => m.getType() === "tool") as ToolMessage[];
      searches += ran.filter((m) => m.name === "search_tools").length;
      if (ran.some((m) => m.name === turn.tool && m.status !== "error")) ok += 1;
    }
    const serialized = views.map(serialize);
    for (const [i, s] of serialized.entries()) {
      calls += 1;
      tools += views[i].bound.length;
      toolTokens += count(s.tools);
      promptBytes += s.prompt.length;
      if (i === 0) continue;
      pairs += 1;
      kept += commonPrefix(serialized[i - 1].prompt, s.prompt);
      before += serialized[i - 1].prompt.length;
    }
  }
  return {
    calls,
    prefixKeptShare: before === 0 ? 0 : kept / before,
    keptBytesPerCall: pairs === 0 ? 0 : kept / pairs,
    promptBytesPerCall: promptBytes / calls,
    toolsPerCall: tools / calls,
    toolTokensPerCall: toolTokens / calls,
    searches,
    toolCallsOk: ok,
    toolCallsWanted: THREADS * TURNS,
  };
}

/** MetaTool beside the repository (`../shared/data/metatool`, as the other sections), or `METATOOL_DIR`. */
const dataDir =
  process.env.METATOOL_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../shared/data/metatool");

const readJsonl = <T>(file: string): T[] => readJsonlFile<T>(path.join(dataDir, file));

/** MetaTool eval fold 1: search_tools' top-1 and the router's, over one index in the caller's partition. */
async function metaTool(): Promise<{ searchToolsTop1: number; routerTop1: number; requests: number; same: number }> {
  const tools = readJsonl<{ name: string; description: string; parameters?: Record<string, unknown> | null }>(
    "tools.jsonl",
  );
  const queries = readJsonl<{ query: string; expect: string[]; fold: number }>("queries.jsonl").filter(
    (q) => q.fold === 1 && q.expect.length > 0,
  );
  const ledger = new Ledger(new InMemoryStore());
  const partition = "u:metatool";
  await registerTools(
    ledger,
    tools.map((t) => ({ name: t.name, description: t.description, schema: t.parameters ?? undefined })),
    { partition },
  );
  const index = new ToolIndex({ ledger });
  const router = new ToolRouter({ index, failureSink: () => undefined });
  const search = createSearchToolsTool(
    new TurnServer({ ledger, index, router, timeoutMs: Infinity, failureSink: () => undefined }),
  );
  let searchHits = 0;
  let routerHits = 0;
  let same = 0;
  for (const [i, q] of queries.entries()) {
    const routed = await router.route(q.query, { partition });
    const routerTop = routed.offered[0]?.tool;
    const message = (await search.invoke(
      { name: "search_tools", args: { query: q.query }, id: `call_${i}`, type: "tool_call" },
      { configurable: { thread_id: `metatool-${i}` }, context: { user_id: "metatool" } },
    )) as ToolMessage;
    const searchTop = (message.artifact as SearchToolsArtifact).found[0]?.name;
    if (routerTop !== undefined && q.expect.includes(routerTop)) routerHits += 1;
    if (searchTop !== undefined && q.expect.includes(searchTop)) searchHits += 1;
    if (searchTop === routerTop) same += 1;
  }
  return {
    searchToolsTop1: searchHits / queries.length,
    routerTop1: routerHits / queries.length,
    requests: queries.length,
    same,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export async function benchCache(): Promise<{ markdown: string; figures: Record<string, unknown> }> {
  const { count, how } = await tokenCounter();
  const modes: Mode[] = ["narrowing", "cacheKeeping", "allTools"];
  const results = {} as Record<Mode, ModeFigures>;
  for (const mode of modes) results[mode] = await runMode(mode, count);
  const meta = await metaTool();
  const long = await benchLongThreads(count, how);
  const figures = {
    longThreads: long.figures,
    prefixKeptShare: Object.fromEntries(modes.map((m) => [m, Number(results[m].prefixKeptShare.toFixed(4))])),
    toolTokensPerCall: Object.fromEntries(modes.map((m) => [m, Number(results[m].toolTokensPerCall.toFixed(1))])),
    toolsPerCall: Object.fromEntries(modes.map((m) => [m, Number(results[m].toolsPerCall.toFixed(2))])),
    searchToolsTop1: Number(meta.searchToolsTop1.toFixed(4)),
    routerTop1: Number(meta.routerTop1.toFixed(4)),
    metaToolRequests: meta.requests,
  };
  const row = (m: Mode, label: string) => {
    const r = results[m];
    return `| ${label} | ${r.calls} | ${pct(r.prefixKeptShare)} | ${Math.round(r.keptBytesPerCall)} / ${Math.round(r.promptBytesPerCall)} | ${r.toolsPerCall.toFixed(2)} | ${r.toolTokensPerCall.toFixed(0)} | ${r.searches} | ${r.toolCallsOk}/${r.toolCallsWanted} |`;
  };
  const markdown = [
    "## Cache-keeping tool search",
    "",
    `${THREADS} threads of ${TURNS} turns each (the same seeded draw for every mode) over the support desk's 8 tools`,
    `(\`examples/support-desk.ts\`), ${POOL.length} kinds of request, two of which routing does not send to the tool they`,
    "need; a scripted model calls the tool a request needs when it is bound, else `search_tools` when that is bound,",
    `then the tool. Three \`createAgent\` agents with the same system prompt: **narrowing** (\`toolLessonsMiddleware({ maxTools: ${MAX_TOOLS} })\`),`,
    `**cache-keeping** (the same with \`cacheKeeping: true\`) and **every tool** (no middleware). Nothing is learned during the run.`,
    "",
    "Each model call is serialized as a provider receives it: each bound tool as its OpenAI-format definition",
    "(`convertToOpenAITool`: name, description, JSON schema), one JSON line each in the order bound, then the",
    "system message, then every message of the thread (role, content, tool calls), one JSON line each. The",
    "**prefix kept** is the bytes of the longest common prefix of a call and the thread's previous call, over the",
    "previous call's bytes (summed over every pair of consecutive calls of a thread). **Tool tokens per call**",
    `count the JSON array of the tool definitions with ${how}.`,
    "",
    "| mode | model calls | prefix kept | kept / prompt bytes per call | tools per call | tool tokens per call | search_tools calls | requests served by their tool |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    row("narrowing", "narrowing"),
    row("cacheKeeping", "cache-keeping"),
    row("allTools", "every tool"),
    "",
    `Uncached bytes per call (prompt minus kept): narrowing ${Math.round(results.narrowing.promptBytesPerCall - results.narrowing.keptBytesPerCall)},`,
    `cache-keeping ${Math.round(results.cacheKeeping.promptBytesPerCall - results.cacheKeeping.keptBytesPerCall)}, every tool ${Math.round(results.allTools.promptBytesPerCall - results.allTools.keptBytesPerCall)}.`,
    "Narrowing starts a new prefix at the first tool whenever a turn's routed set differs; cache-keeping loses",
    "the bytes after its tool list only on a call that adds a tool. With 8 small tools, sending every tool keeps",
    "the whole prefix at the highest tool cost per call; the case for cache-keeping is a catalog too large to",
    "send whole, which this section does not measure. Narrowing's misses are the requests whose tool routing",
    "left out (it has no `search_tools`).",
    "",
    `On MetaTool eval fold 1 (${meta.requests} requests with a label, ${tools199()} tools registered in one`,
    "partition, the default lexical index), `search_tools` answered as a tool call with the caller in `context`",
    `put a labelled tool first for ${pct(meta.searchToolsTop1)} of requests; the router's top-1 over the same index is`,
    `${pct(meta.routerTop1)} (the same first tool on ${meta.same} of ${meta.requests}). \`search_tools\` is answered by that router,`,
    "so the two can differ only where its answer drops a tool (another partition's, or not one of the agent's).",
    "",
    long.markdown,
  ].join("\n");
  return { markdown, figures };
}

function tools199(): number {
  return readJsonl<unknown>("tools.jsonl").length;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { markdown, figures } = await benchCache();
  console.log(`${markdown}\n\n${JSON.stringify(figures)}`);
}
