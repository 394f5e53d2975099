/**
 * Provider-deferred cache keeping over the wire, with the real provider clients: `ChatAnthropic`
 * (`@langchain/anthropic`) and `ChatOpenAI` on the Responses API (`@langchain/openai`) talk over
 * HTTP to a local server (`provider-wire-server.ts`) from an agent built with langchain's
 * `createAgent` and `toolLessonsMiddleware({ cacheKeeping: true })`, the mode picked from the
 * model. The server checks every request against the shapes the providers document, and answers
 * as a model would: it searches for each request's tool, calls what the search loaded, then
 * answers.
 *
 * - Anthropic: every agent tool sent with `defer_loading: true`, `search_tools` first and not
 *   deferred; each `search_tools` answer a `tool_result` of `tool_reference` blocks naming
 *   deferred tools only.
 * - OpenAI: the client-executed `tool_search` tool first, every function with
 *   `defer_loading: true`; each client `tool_search_call` followed by its `tool_search_output`
 *   (the found functions' definitions), never a `function_call_output` for it.
 * - Both: the tools, the system prompt and every message before the newest ones are the same, in
 *   the same order, from one call of a thread to the next.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { HumanMessage, SystemMessage, type ToolMessage } from "@langchain/core/messages";
import { END, InMemoryStore, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { DESK_THREAD } from "../../fixtures/seeking-model.js";
import { bindKeptTools } from "../../src/graph/kept-tools.js";
import { createLessonsGraph, lessonsMessages } from "../../src/graph/lessons-graph.js";
import { ToolLessonsAnnotation } from "../../src/graph/state.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { toolLessonsMiddleware } from "../../src/middleware/index.js";
import { cacheModeOf } from "../../src/serve/provider-mode.js";
import { createSearchToolsTool } from "../../src/serve/search-tools.js";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";
import { anthropicReply, responsesReply, startWireServer, type WireServer } from "./provider-wire-server.js";

type Json = Record<string, unknown>;
const TURNS = DESK_THREAD.slice(0, 5);
const AGENT_TOOLS = supportDeskTools().map((t) => t.name);
const SYSTEM = "You are the support desk's assistant.";
const wanted = (request: string) => TURNS.find((t) => t.request === request);

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

/** Checks that the tools, system and messages of `before` open `after` unchanged (JSON, element by element). */
class PrefixCheck {
  private last: { head: string; items: string[] } | undefined;
  constructor(readonly violations: string[]) {}
  reset() {
    this.last = undefined;
  }
  check(head: unknown, items: readonly unknown[]) {
    const now = { head: JSON.stringify(head), items: items.map((i) => JSON.stringify(i)) };
    if (this.last) {
      if (this.last.head !== now.head) this.violations.push("the tools or the system prompt changed within a thread");
      const kept = this.last.items.every((item, i) => now.items[i] === item);
      if (!kept || now.items.length <= this.last.items.length)
        this.violations.push("the messages of the previous call do not open this one unchanged");
    }
    this.last = now;
  }
}

function agentFor(model: ChatAnthropic | ChatOpenAI) {
  return createAgent({
    model,
    tools: supportDeskTools(),
    systemPrompt: SYSTEM,
    checkpointer: new MemorySaver(),
    middleware: [
      toolLessonsMiddleware({ ledger: new Ledger(new InMemoryStore()), cacheKeeping: true, failureSink: () => {} }),
    ],
  });
}

/**
 * A LangGraph graph of one's own over the same model: the lessons subgraph (cache keeping), an
 * agent node that binds with `bindKeptTools(..., "auto")`, LangGraph's `ToolNode`.
 */
function graphFor(model: ChatAnthropic | ChatOpenAI) {
  const tools = supportDeskTools();
  const ledger = new Ledger(new InMemoryStore());
  const index = new ToolIndex({ ledger });
  const search = createSearchToolsTool({ ledger, index, failureSink: () => {} }, tools);
  return new StateGraph(ToolLessonsAnnotation)
    .addNode("lessons", createLessonsGraph({ tools, ledger, index, cacheKeeping: true, failureSink: () => {} }))
    .addNode("agent", async (state, config) => {
      const { bound, keptTools } = bindKeptTools(model, tools, state, search, "auto");
      const messages = [new SystemMessage(SYSTEM), ...lessonsMessages(state)];
      return { messages: [await bound.invoke(messages, config)], ...(keptTools ? { keptTools } : {}) };
    })
    .addNode("tools", new ToolNode([...tools, search]))
    .addEdge(START, "lessons")
    .addEdge("lessons", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

const PATHS = ["createAgent", "a graph of one's own"] as const;
const agentOn = (path: (typeof PATHS)[number], model: ChatAnthropic | ChatOpenAI) =>
  path === "createAgent" ? agentFor(model) : graphFor(model);

/** Runs the turns in one thread; returns each turn's tool messages. */
async function runThread(
  agent: { invoke: ReturnType<typeof agentFor>["invoke"] },
  thread: string,
  prefix: PrefixCheck,
) {
  prefix.reset();
  const ran: ToolMessage[][] = [];
  for (const turn of TURNS) {
    const state = await agent.invoke(
      { messages: [new HumanMessage(turn.request)] },
      { configurable: { thread_id: thread }, context: { user_id: "wire" } },
    );
    const messages = state.messages as ToolMessage[];
    const at = messages.findLastIndex((m) => m.getType() === "human");
    ran.push(messages.slice(at).filter((m) => m.getType() === "tool"));
  }
  return ran;
}

function expectEveryTurnSearchedThenCalled(ran: ToolMessage[][]) {
  for (const [i, messages] of ran.entries()) {
    expect(
      messages.map((m) => m.name),
      TURNS[i].request,
    ).toEqual([SEARCH_TOOLS_NAME, TURNS[i].tool]);
    for (const m of messages) expect(m.status).not.toBe("error");
  }
}

describe("provider-deferred cache keeping, Anthropic Messages API through ChatAnthropic", () => {
  function checkAnthropic(body: Json, violations: string[]) {
    const tools = body.tools as Json[];
    const [search, ...deferred] = tools;
    if (search?.name !== SEARCH_TOOLS_NAME || "defer_loading" in search)
      violations.push("search_tools is not first and live");
    if ((search?.input_schema as Json | undefined)?.type !== "object")
      violations.push("search_tools has no input schema");
    for (const t of deferred) {
      if (t.defer_loading !== true) violations.push(`${String(t.name)} is not deferred`);
      if ((t.input_schema as Json | undefined)?.type !== "object" || typeof t.description !== "string")
        violations.push(`${String(t.name)} is not a custom tool definition`);
    }
    if (JSON.stringify(deferred.map((t) => t.name).sort()) !== JSON.stringify([...AGENT_TOOLS].sort()))
      violations.push("the deferred tools are not the agent's tools");
    const deferredNames = new Set(deferred.map((t) => t.name));
    const calledAs = new Map<string, string>();
    for (const message of body.messages as { role: string; content: string | Json[] }[]) {
      if (typeof message.content === "string") continue;
      for (const block of message.content) {
        if (block.type === "tool_use") calledAs.set(String(block.id), String(block.name));
        if (block.type !== "tool_result" || calledAs.get(String(block.tool_use_id)) !== SEARCH_TOOLS_NAME) continue;
        const content = block.content;
        if (typeof content === "string") continue; // nothing found: the answer's text
        for (const ref of content as Json[]) {
          if (ref.type !== "tool_reference" || Object.keys(ref).sort().join() !== "tool_name,type")
            violations.push(`a search_tools result holds a ${String(ref.type)} block`);
          else if (!deferredNames.has(ref.tool_name))
            violations.push(`${String(ref.tool_name)} is referenced, not deferred`);
        }
      }
    }
  }

  /** What a model does: search for the request's tool, call what the search loaded, answer. */
  function answer(body: Json, n: number): Json {
    const messages = body.messages as { role: string; content: string | Json[] }[];
    const textOf = (c: string | Json[]) =>
      typeof c === "string"
        ? c
        : c
            .filter((b) => b.type === "text")
            .map((b) => String(b.text))
            .join("");
    const request = [...messages].reverse().find((m) => m.role === "user" && textOf(m.content) !== "");
    const want = wanted(request ? textOf(request.content) : "");
    const last = messages[messages.length - 1];
    const results = typeof last.content === "string" ? [] : last.content.filter((b) => b.type === "tool_result");
    if (!want) return anthropicReply(n, [{ type: "text", text: "Nothing to do." }], "end_turn");
    if (results.length === 0)
      return anthropicReply(
        n,
        [{ type: "tool_use", id: `toolu_s${n}`, name: SEARCH_TOOLS_NAME, input: { query: want.request } }],
        "tool_use",
      );
    const loaded = results.flatMap((r) => (Array.isArray(r.content) ? (r.content as Json[]) : []));
    if (String(results[0].tool_use_id).startsWith("toolu_s")) {
      return loaded.some((b) => b.tool_name === want.tool)
        ? anthropicReply(n, [{ type: "tool_use", id: `toolu_t${n}`, name: want.tool, input: want.args }], "tool_use")
        : anthropicReply(n, [{ type: "text", text: "No tool found for that." }], "end_turn");
    }
    return anthropicReply(n, [{ type: "text", text: "Done." }], "end_turn");
  }

  it.each(PATHS)(
    "sends every tool deferred, answers search_tools with tool_reference blocks, and keeps the prefix (%s)",
    async (path) => {
      const violations: string[] = [];
      const prefix = new PrefixCheck(violations);
      server.requests.length = 0;
      server.onRequest((request) => {
        if (request.path !== "/v1/messages") throw new Error(`unexpected path ${request.path}`);
        checkAnthropic(request.body, violations);
        prefix.check({ tools: request.body.tools, system: request.body.system }, request.body.messages as unknown[]);
        return answer(request.body, server.requests.length);
      });
      const model = new ChatAnthropic({
        model: "claude-sonnet-4-5",
        apiKey: "test-key",
        anthropicApiUrl: server.url,
        maxRetries: 0,
      });
      expect(cacheModeOf(model)).toBe("anthropic");
      const ran = await runThread(agentOn(path, model), `wire-anthropic-${path}`, prefix);
      expectEveryTurnSearchedThenCalled(ran);
      expect(server.requests).toHaveLength(TURNS.length * 3);
      expect(violations).toEqual([]);
      // A tool_reference went over the wire for every turn's tool.
      const last = JSON.stringify(server.requests[server.requests.length - 1].body.messages);
      for (const { tool } of TURNS) expect(last).toContain(`{"type":"tool_reference","tool_name":"${tool}"}`);
    },
  );
});

describe("provider-deferred cache keeping, OpenAI Responses API through ChatOpenAI", () => {
  function checkOpenAi(body: Json, violations: string[]) {
    const [search, ...deferred] = body.tools as Json[];
    if (search?.type !== "tool_search" || search.execution !== "client") violations.push("tool_search is not first");
    if ((search?.parameters as Json | undefined)?.type !== "object" || typeof search?.description !== "string")
      violations.push("tool_search has no parameters or description");
    for (const t of deferred) {
      if (t.type !== "function" || t.defer_loading !== true)
        violations.push(`${String(t.name)} is not a deferred function`);
    }
    if (JSON.stringify(deferred.map((t) => t.name).sort()) !== JSON.stringify([...AGENT_TOOLS].sort()))
      violations.push("the deferred functions are not the agent's tools");
    const deferredNames = new Set(deferred.map((t) => t.name));
    const input = body.input as Json[];
    const searchCalls = new Set<string>();
    for (const [i, item] of input.entries()) {
      if (item.type === "tool_search_call") searchCalls.add(String(item.call_id));
      if (item.type === "function_call_output" && searchCalls.has(String(item.call_id)))
        violations.push("a tool search was answered as a function call");
      if (item.type === "function_call" && item.name === SEARCH_TOOLS_NAME)
        violations.push("search_tools went as a function");
      if (item.type !== "tool_search_output") continue;
      const call = input[i - 1];
      if (call?.type !== "tool_search_call" || call.call_id !== item.call_id)
        violations.push("a tool_search_output does not follow its call");
      if (item.execution !== "client" || item.status !== "completed")
        violations.push("a tool_search_output is not a client one");
      for (const t of item.tools as Json[]) {
        if (t.type !== "function" || t.defer_loading !== true || (t.parameters as Json | undefined)?.type !== "object")
          violations.push(`${String(t.name)} is loaded in another shape`);
        if (!deferredNames.has(t.name)) violations.push(`${String(t.name)} is loaded, not deferred`);
      }
    }
    for (const id of searchCalls) {
      if (!input.some((item) => item.type === "tool_search_output" && item.call_id === id))
        violations.push("a tool search went unanswered");
    }
  }

  function answer(body: Json, n: number): Json {
    const input = body.input as Json[];
    const request = [...input].reverse().find((i) => i.type === "message" && i.role === "user");
    const want = wanted(typeof request?.content === "string" ? request.content : "");
    const last = input[input.length - 1];
    const text = (t: string) => [
      {
        type: "message",
        id: `msg_${n}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: t, annotations: [] }],
      },
    ];
    if (!want) return responsesReply(n, text("Nothing to do."));
    if (last.type === "message")
      return responsesReply(n, [
        {
          type: "tool_search_call",
          id: `tsc_${n}`,
          call_id: `call_s${n}`,
          execution: "client",
          status: "completed",
          arguments: { query: want.request },
        },
      ]);
    if (last.type === "tool_search_output") {
      return (last.tools as Json[]).some((t) => t.name === want.tool)
        ? responsesReply(n, [
            {
              type: "function_call",
              id: `fc_${n}`,
              call_id: `call_t${n}`,
              name: want.tool,
              arguments: JSON.stringify(want.args),
              status: "completed",
            },
          ])
        : responsesReply(n, text("No tool found for that."));
    }
    return responsesReply(n, text("Done."));
  }

  it.each(PATHS)(
    "sends tool_search and deferred functions, answers each search with its tool_search_output, and keeps the prefix (%s)",
    async (path) => {
      const violations: string[] = [];
      const prefix = new PrefixCheck(violations);
      server.requests.length = 0;
      server.onRequest((request) => {
        if (request.path !== "/v1/responses") throw new Error(`unexpected path ${request.path}`);
        checkOpenAi(request.body, violations);
        prefix.check(
          { tools: request.body.tools, instructions: request.body.instructions },
          request.body.input as unknown[],
        );
        return answer(request.body, server.requests.length);
      });
      const model = new ChatOpenAI({
        model: "gpt-5.4",
        apiKey: "test-key",
        useResponsesApi: true,
        configuration: { baseURL: `${server.url}/v1` },
        maxRetries: 0,
      });
      expect(cacheModeOf(model)).toBe("openai");
      const ran = await runThread(agentOn(path, model), `wire-openai-${path}`, prefix);
      expectEveryTurnSearchedThenCalled(ran);
      expect(server.requests).toHaveLength(TURNS.length * 3);
      expect(violations).toEqual([]);
      const last = server.requests[server.requests.length - 1].body.input as Json[];
      const loaded = last
        .filter((i) => i.type === "tool_search_output")
        .flatMap((i) => (i.tools as Json[]).map((t) => t.name));
      for (const { tool } of TURNS) expect(loaded).toContain(tool);
    },
  );

  it("keeps the wire valid when a later turn is not served (the caller's id refused)", async () => {
    const violations: string[] = [];
    server.requests.length = 0;
    server.onRequest((request) => {
      checkOpenAi(request.body, violations);
      return answer(request.body, server.requests.length);
    });
    const model = new ChatOpenAI({
      model: "gpt-5.4",
      apiKey: "test-key",
      useResponsesApi: true,
      configuration: { baseURL: `${server.url}/v1` },
      maxRetries: 0,
    });
    const agent = agentFor(model);
    const invoke = (request: string, user: string) =>
      agent.invoke(
        { messages: [new HumanMessage(request)] },
        { configurable: { thread_id: "wire-openai-refused" }, context: { user_id: user } },
      );
    await invoke(TURNS[0].request, "wire");
    const state = await invoke(TURNS[1].request, "");
    // The second turn went out with the first turn's search answered as a tool_search_output.
    expect(server.requests.length).toBeGreaterThan(3);
    expect(violations).toEqual([]);
    expect(String((state.messages as ToolMessage[]).at(-1)?.content)).not.toBe("");
  });

  it("keeps the append mode for ChatOpenAI on chat completions, and for other models", () => {
    const chat = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "test-key" });
    expect(cacheModeOf(chat)).toBe("append");
    expect(cacheModeOf(chat, "openai")).toBe("openai");
    expect(cacheModeOf({ getName: () => "ChatOllama" })).toBe("append");
    expect(cacheModeOf(new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "k" }), "append")).toBe("append");
  });
});
