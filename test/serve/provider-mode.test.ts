/**
 * The pure pieces of provider-deferred cache keeping: which tools a call sends (every agent tool,
 * deferred, each frozen as the thread first saw it), how a `search_tools` answer is put to each
 * provider, and how an OpenAI client `tool_search_call` becomes a `search_tools` call.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { deferredCall } from "../../src/middleware/tools-view.js";
import { providerMessages, withSearchCalls } from "../../src/serve/provider-mode.js";
import { createSearchToolsTool } from "../../src/serve/search-tools.js";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";
import { TurnServer } from "../../src/serve/turn-server.js";

const tools = supportDeskTools();
const search = createSearchToolsTool(new TurnServer({ failureSink: () => undefined }));
const searchAnswer = (id: string, found: string[]) =>
  new ToolMessage({
    content: "Found these tools.",
    tool_call_id: id,
    name: SEARCH_TOOLS_NAME,
    artifact: { found: found.map((name) => ({ name, description: `${name} as shown` })) },
  });

describe("deferredCall", () => {
  it("sends search_tools first, then every agent tool deferred with the description frozen for the thread", () => {
    const kept = [{ name: "lookup_order", description: "frozen when the thread began" }];
    const call = deferredCall("anthropic", [...tools, search], [], kept, []);
    const sent = call.tools as { name?: string; description?: string; extras?: unknown }[];
    expect(sent[0]).toBe(search);
    expect(sent.slice(1).map((t) => t.name)).toEqual([
      "lookup_order",
      ...tools.map((t) => t.name).filter((n) => n !== "lookup_order"),
    ]);
    expect(sent[1].description).toBe("frozen when the thread began");
    for (const t of sent.slice(1)) expect(t.extras).toEqual({ defer_loading: true });
    // Tools the thread had not seen join it, at the end, as they are described now.
    expect(call.kept.map((t) => t.name)).toEqual(sent.slice(1).map((t) => t.name));
    expect(deferredCall("anthropic", [...tools, search], [], call.kept, []).kept).toBe(call.kept);
  });

  it("puts the client-executed tool_search first for OpenAI", () => {
    const call = deferredCall("openai", [...tools, search], [], [], []);
    expect(call.tools[0]).toMatchObject({ type: "tool_search", execution: "client" });
    expect(call.tools.map((t) => (t as { name?: string }).name)).not.toContain(SEARCH_TOOLS_NAME);
  });
});

describe("providerMessages", () => {
  const deferred = deferredCall("anthropic", tools, [], [], []).tools as never[];

  it("Anthropic: a search_tools answer is a tool_result of tool_reference blocks, deferred tools only", () => {
    const messages = [
      new HumanMessage("Where is my parcel?"),
      new AIMessage({ content: "", tool_calls: [{ id: "s1", name: SEARCH_TOOLS_NAME, args: { query: "parcel" } }] }),
      searchAnswer("s1", ["track_shipment", "not_an_agent_tool"]),
    ];
    const view = providerMessages("anthropic", messages, deferred);
    expect(view.slice(0, 2)).toEqual(messages.slice(0, 2));
    expect(view[2].getType()).toBe("human");
    expect(view[2].content).toEqual([
      { type: "tool_result", tool_use_id: "s1", content: [{ type: "tool_reference", tool_name: "track_shipment" }] },
    ]);
    expect(JSON.stringify(providerMessages("anthropic", messages, deferred))).toBe(JSON.stringify(view));
    // Nothing deferred was found: the answer's text goes as it is.
    const none = searchAnswer("s2", ["not_an_agent_tool"]);
    expect(providerMessages("anthropic", [none], deferred)[0]).toBe(none);
  });

  it("OpenAI: the tool_search_output follows its call in the replayed output; the tool message is left out", () => {
    const call = {
      type: "tool_search_call",
      id: "tsc_1",
      call_id: "c1",
      execution: "client",
      arguments: { query: "parcel" },
    };
    const reasoning = { type: "reasoning", id: "rs_1", summary: [] };
    const ai = new AIMessage({ content: "", id: "resp_1", response_metadata: { output: [reasoning, call] } });
    const view = providerMessages(
      "openai",
      [new HumanMessage("Where?"), ai, searchAnswer("c1", ["track_shipment"])],
      deferred,
    );
    expect(view).toHaveLength(2);
    const output = (view[1].response_metadata as { output: Record<string, unknown>[] }).output;
    expect(output.slice(0, 2)).toEqual([reasoning, call]);
    expect(output[2]).toMatchObject({
      type: "tool_search_output",
      call_id: "c1",
      execution: "client",
      status: "completed",
    });
    expect(output[2].tools).toEqual([
      expect.objectContaining({
        type: "function",
        name: "track_shipment",
        defer_loading: true,
        parameters: expect.objectContaining({ type: "object" }),
      }),
    ]);
    // The state's message is not changed.
    expect((ai.response_metadata as { output: unknown[] }).output).toHaveLength(2);
  });
});

describe("withSearchCalls", () => {
  it("runs each client tool_search_call as a search_tools call, once", () => {
    const reply = new AIMessage({
      content: "",
      response_metadata: {
        output: [
          { type: "tool_search_call", call_id: "c1", execution: "client", arguments: { query: "refund" } },
          { type: "tool_search_call", call_id: "c2", execution: "client", arguments: '{"query":"email"}' },
          { type: "tool_search_call", call_id: "c3", execution: "server", arguments: { query: "x" } },
        ],
      },
    });
    const same = withSearchCalls("openai", reply);
    expect(same).toBe(reply);
    expect(reply.tool_calls?.map((c) => [c.id, c.name, c.args])).toEqual([
      ["c1", SEARCH_TOOLS_NAME, { query: "refund" }],
      ["c2", SEARCH_TOOLS_NAME, { query: "email" }],
    ]);
    withSearchCalls("openai", reply);
    expect(reply.tool_calls).toHaveLength(2);
    const anthropic = new AIMessage({
      content: "",
      response_metadata: { output: [{ type: "tool_search_call", call_id: "c9", execution: "client" }] },
    });
    expect(withSearchCalls("anthropic", anthropic).tool_calls).toEqual([]);
  });
});
