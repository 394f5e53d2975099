/**
 * The real OpenAI clients when the server misbehaves, and the two structured-output methods
 * `ChatOpenAI` may choose: what the package does with 429s (with and without `retry-after`),
 * errors, slow and malformed replies, and what it sends for structured output. Against the local
 * OpenAI-compatible server (test/helpers/openai-server.ts), over real HTTP.
 */
import { HumanMessage } from "@langchain/core/messages";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { InMemoryStore } from "@langchain/langgraph";
import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { augmentTool } from "../../src/learn/augment.js";
import { detect } from "../../src/learn/detect.js";
import { ModelProposer, ProposalReplySchema } from "../../src/learn/model-proposer.js";
import { buildToolEvidence, type ToolEvidence } from "../../src/learn/proposer.js";
import { registerTools } from "../../src/learn/register.js";
import { cardFromTool } from "../../src/ledger/cards.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { maskArgs } from "../../src/text/mask.js";
import { call, card, turn } from "../learn/learn-fixtures.js";
import { augmentScript, byRole, supportAgentScript } from "../helpers/openai-scripts.js";
import {
  type ChatCompletionBody,
  errorBody,
  type OpenAITestServer,
  startOpenAIServer,
} from "../helpers/openai-server.js";
import { routedAgent, turnOf } from "../helpers/routed-agent.js";
import { normalizedSchema } from "./wire.js";

let server: OpenAITestServer;

beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.clearRequests();
  server.onChat(byRole({ augment: augmentScript(), agent: supportAgentScript() }));
});

function chat(fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) {
  return new ChatOpenAI({
    model: "gpt-4o-mini",
    apiKey: "test-key",
    configuration: { baseURL: server.baseURL },
    ...fields,
  });
}

const lookupCard = () => cardFromTool(supportDeskTools()[0], "default", 1_000);

const rateLimited = (retryAfter?: string) => ({
  status: 429,
  body: errorBody("Rate limit reached for requests.", "requests", null, "rate_limit_exceeded"),
  headers: retryAfter === undefined ? ({} as Record<string, string>) : { "retry-after": retryAfter },
});

/** Evidence of one tool with two refused calls, as a review builds it. */
function evidence(): ToolEvidence {
  const calls = [
    call("lookup_order", "error", maskArgs({ order_id: "482913" }), {
      id: "c1",
      errorClass: "validation",
      errorMessage: "order ids must start with ORD-",
    }),
    call("lookup_order", "error", maskArgs({ order_id: "771204" }), {
      id: "c2",
      errorClass: "validation",
      errorMessage: "order ids must start with ORD-",
    }),
    call("lookup_order", "success", maskArgs({ order_id: "ORD-660981" }), { id: "c3" }),
  ];
  const turns = [turn("q1", "where is my order", [{ tool: "lookup_order" }], { id: "t1", threadId: "a" })];
  const detection = detect({ calls, turns, routes: [], tools: ["lookup_order"] }).tools.get("lookup_order")!;
  return buildToolEvidence({
    card: card("lookup_order", {}, "Look up an order."),
    detection,
    tools: [{ name: "lookup_order", description: "Look up an order." }],
  });
}

const PROPOSAL = {
  notes: [{ text: "order_id must look like ORD-######.", cites: ["c1", "c2"] }],
  examples: [],
  notFor: [],
};

describe("retries and failures of the real clients", () => {
  it("a 429 with retry-after is retried after it, then with exponential backoff, and the reply is used", async () => {
    server.enqueue("chat", rateLimited("1.5"), rateLimited("0"));
    const { card, refused } = await augmentTool(lookupCard(), chat());
    expect(refused).toBeUndefined();
    expect(card.augmented?.description).toMatch(/lookup order/);
    const [first, second, third] = server.requestsTo("chat");
    expect(server.requestsTo("chat")).toHaveLength(3);
    // retry-after (1.5 s) is longer than the first backoff step (1-2 s, random): it was waited for...
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_450);
    // ...and the second retry waits the second step (2-4 s) though retry-after said 0.
    expect(third.at - second.at).toBeGreaterThanOrEqual(1_950);
    expect(third.raw).toBe(first.raw);
  });

  it("a 429 without retry-after, or for an exhausted quota, is not retried: augmentation is refused at once", async () => {
    server.enqueue("chat", rateLimited());
    const bare = await augmentTool(lookupCard(), chat());
    expect(bare.refused).toMatch(/^model_error: /);
    expect(bare.card.augmented).toBeNull();
    server.enqueue("chat", {
      status: 429,
      body: errorBody("You exceeded your current quota.", "insufficient_quota", null, "insufficient_quota"),
      headers: { "retry-after": "1" },
    });
    const quota = await augmentTool(lookupCard(), chat());
    expect(quota.refused).toMatch(/^model_error: .*quota/i);
    expect(server.requestsTo("chat")).toHaveLength(2);
  });

  it("a 400 is not retried; the card keeps its author's text and the reason", async () => {
    server.enqueue("chat", {
      status: 400,
      body: errorBody("Invalid 'messages'.", "invalid_request_error", "messages"),
    });
    const { card, refused } = await augmentTool(lookupCard(), chat());
    expect(refused).toMatch(/^model_error: .*Invalid 'messages'/);
    expect(card.augmentationRefused).toBe(refused);
    expect(card.author.description).toBe("Look up an order: its status, items and total.");
    expect(server.requestsTo("chat")).toHaveLength(1);
  });

  it("a slow reply past the client's timeout is refused, not waited for; an abort through the signal is thrown", async () => {
    server.enqueue("chat", { status: 200, body: "{}", delayMs: 5_000 });
    const started = performance.now();
    const slow = await augmentTool(lookupCard(), chat({ timeout: 300, maxRetries: 0 }));
    expect(slow.refused).toMatch(/^model_error: .*time/i);
    expect(performance.now() - started).toBeLessThan(2_500);

    server.enqueue("chat", { status: 200, body: "{}", delayMs: 5_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await expect(augmentTool(lookupCard(), chat({ maxRetries: 0 }), {}, { signal: controller.signal })).rejects.toThrow(
      /abort/i,
    );
  });

  it("a malformed body is a model error: augmentation refused, the proposer's review goes on with nothing proposed", async () => {
    const malformed = {
      status: 200,
      body: '{"id": "chatcmpl-1", "choices": [',
      headers: { "content-type": "application/json" },
    };
    server.enqueue("chat", malformed, malformed);
    const augmented = await augmentTool(lookupCard(), chat({ maxRetries: 0 }));
    expect(augmented.refused).toMatch(/^model_error: /);
    const proposal = await new ModelProposer(chat({ maxRetries: 0 })).propose(evidence());
    expect(proposal).toMatchObject({ notes: [], examples: [], notFor: [], rejected: { reason: "model_error" } });
  });

  it("an embeddings 429 with retry-after is retried: routing answers", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, supportDeskTools());
    const embeddings = new OpenAIEmbeddings({
      model: "text-embedding-3-small",
      apiKey: "test-key",
      configuration: { baseURL: server.baseURL },
    });
    const index = new ToolIndex({ ledger, embeddings });
    await index.reindex("default");
    server.enqueue("embeddings", rateLimited("0"));
    const offered = await index.route("default", "track the parcel of my order", { k: 3 });
    expect(offered.map((o) => o.tool)).toContain("track_shipment");
    const [refused, retried] = server.requestsTo("embeddings").slice(-2);
    expect(retried.at - refused.at).toBeGreaterThanOrEqual(950);
  });
});

describe("structured output as ChatOpenAI sends it", () => {
  it("json_schema (gpt-4o models): response_format carries the declared schema, named propose_lessons", async () => {
    server.onChat(() => ({ json: PROPOSAL }));
    const proposal = await new ModelProposer(chat()).propose(evidence());
    expect(proposal).toEqual(PROPOSAL);
    const body = server.requestsTo("chat")[0].body as ChatCompletionBody;
    expect(body.response_format?.type).toBe("json_schema");
    expect(body.response_format?.json_schema?.name).toBe("propose_lessons");
    expect(body.response_format?.json_schema?.strict).toBe(true);
    expect(normalizedSchema(body.response_format?.json_schema?.schema)).toEqual(
      normalizedSchema(toJsonSchema(ProposalReplySchema)),
    );
    expect(body.tools).toBeUndefined();
  });

  it("function calling (gpt-4): one forced function propose_lessons whose parameters are the declared schema", async () => {
    server.onChat(() => ({ json: PROPOSAL }));
    const proposal = await new ModelProposer(chat({ model: "gpt-4" })).propose(evidence());
    expect(proposal).toEqual(PROPOSAL);
    const body = server.requestsTo("chat")[0].body as ChatCompletionBody;
    expect(body.response_format).toBeUndefined();
    expect(body.tools?.map((t) => t.function.name)).toEqual(["propose_lessons"]);
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "propose_lessons" } });
    expect(normalizedSchema(body.tools?.[0].function.parameters)).toEqual(
      normalizedSchema(toJsonSchema(ProposalReplySchema)),
    );
  });

  it("text mode (structuredOutput: never) asks for plain JSON and parses the reply text", async () => {
    server.onChat(() => ({ content: JSON.stringify(PROPOSAL) }));
    expect(await new ModelProposer(chat(), { structuredOutput: "never" }).propose(evidence())).toEqual(PROPOSAL);
    const body = server.requestsTo("chat")[0].body as ChatCompletionBody;
    expect(body.response_format).toBeUndefined();
    expect(body.tools).toBeUndefined();
  });

  it("a structured reply of the wrong shape gives an empty proposal with the reason, never a throw", async () => {
    server.onChat(() => ({ json: { notes: "use the prefix" } }));
    const proposal = await new ModelProposer(chat({ maxRetries: 0 })).propose(evidence());
    expect(proposal.notes).toEqual([]);
    expect(proposal.rejected?.reason).toMatch(/model_error|reply_wrong_shape/);
  });
});

describe("streaming the agent through LangGraph", () => {
  // streamMode "messages" streams the model's tokens (SSE from the server). Not `streaming: true`
  // with invoke(): @langchain/openai then estimates the tokens with a tokenizer it downloads at
  // first use, which never arrives offline (docs/production.md).
  it("records the tool calls of a run streamed as messages (SSE) like any other", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const tools = supportDeskTools();
    await registerTools(ledger, tools);
    const index = new ToolIndex({ ledger });
    const recorder = new ToolLessonsCallbackHandler({ ledger });
    const graph = routedAgent({ model: chat(), tools, router: new ToolRouter({ index, maxTools: 3 }), ledger });
    const config = { configurable: { thread_id: "streamed" }, callbacks: [recorder] };
    let chunks = 0;
    for await (const _ of await graph.stream(
      { messages: [new HumanMessage("Where is order 482913?")] },
      { ...config, streamMode: "messages" },
    )) {
      chunks++;
    }
    await recorder.flush();
    const { calls } = turnOf((await graph.getState(config)).values.messages);
    expect(calls.map((c) => `${c.tool}:${c.ok}`)).toEqual(["lookup_order:false", "lookup_order:true"]);
    expect(chunks).toBeGreaterThan(3);
    const bodies = server.requestsTo("chat").map((r) => r.body as ChatCompletionBody);
    expect(bodies).toHaveLength(3);
    expect(bodies.every((b) => b.stream === true)).toBe(true);
    expect((await ledger.listCalls("default")).map((c) => c.outcome).sort()).toEqual(["error", "success"]);
  });
});
