/**
 * Every place the package calls a model, through `ChatOpenAI` and `OpenAIEmbeddings` from
 * `@langchain/openai` over real HTTP, against the local OpenAI-compatible server
 * (test/helpers/openai-server.ts): augmentation at registration, routing with OpenAI embeddings,
 * the agent (a LangGraph graph with the real ToolNode and the package's recorder), the model
 * proposer under LessonManager, and the agent again with the lesson shown. What left the process
 * is read back from the server: no argument value in any prompt the package wrote, the
 * structured-output schema the package declares.
 */
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { InMemoryStore } from "@langchain/langgraph";
import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { ProposalReplySchema } from "../../src/learn/model-proposer.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { Revision } from "../../src/ledger/schema.js";
import { modelDescription } from "../../src/prompt/describe.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { byRole, roleOf, augmentScript, proposerScript, supportAgentScript } from "../helpers/openai-scripts.js";
import {
  type ChatCompletionBody,
  type OpenAITestServer,
  type RecordedRequest,
  startOpenAIServer,
} from "../helpers/openai-server.js";
import { ask, routedAgent } from "../helpers/routed-agent.js";
import { normalizedSchema, plantedIn } from "./wire.js";

const PARTITION = "u:alice";
const ALICE = { user_id: "alice" };

/** What the users typed and the model passed: none may leave in a prompt the package writes. */
const PLANTED = ["482913", "771204", "660981", "319870", "zelda.quackenbush@example.test", "quackenbush", "zelda"];
const TRAFFIC = [
  "Where is order 482913? It was a birthday present.",
  "Can you check on order 771204 for me?",
  "What's the status of order 660981?",
  "Send zelda.quackenbush@example.test an email that her refund went through.",
];

let server: OpenAITestServer;
let ledger: Ledger;
let index: ToolIndex;
let graph: ReturnType<typeof routedAgent>;
let recorder: ToolLessonsCallbackHandler;
let registered: Awaited<ReturnType<typeof registerTools>>;
let review: Awaited<ReturnType<LessonManager["review"]>>;
let applied: Revision;
let before: Awaited<ReturnType<typeof ask>>[];
let after: Awaited<ReturnType<typeof ask>>;
/** Requests of each stage, in order. */
const stages: Record<"register" | "traffic" | "review" | "again", RecordedRequest[]> = {
  register: [],
  traffic: [],
  review: [],
  again: [],
};

function models() {
  const configuration = { baseURL: server.baseURL };
  return {
    chat: new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "test-key", temperature: 0, configuration }),
    embeddings: new OpenAIEmbeddings({ model: "text-embedding-3-small", apiKey: "test-key", configuration }),
  };
}

async function stage<T>(name: keyof typeof stages, run: () => Promise<T>): Promise<T> {
  const from = server.requests.length;
  const out = await run();
  stages[name] = server.requests.slice(from);
  return out;
}

const chatBody = (r: RecordedRequest) => r.body as ChatCompletionBody;
const isChat = (r: RecordedRequest) => r.path === "/v1/chat/completions";
const roleOfRequest = (r: RecordedRequest) =>
  roleOf({ body: chatBody(r), request: r, role: undefined, texts: [], lastUser: "", sinceUser: [], toolNames: [] });

beforeAll(async () => {
  server = await startOpenAIServer();
  server.onChat(
    byRole({
      agent: supportAgentScript(),
      augment: augmentScript(),
      // A model that also copies a value it saw somewhere into a note: the vet must refuse it.
      proposer: proposerScript((evidence) =>
        evidence.tool === "lookup_order"
          ? [{ text: "Try order_id 482913 with ORD- in front.", cites: evidence.failedCalls[0]?.callIds ?? [] }]
          : [],
      ),
    }),
  );
  const { chat, embeddings } = models();
  ledger = new Ledger(new InMemoryStore());
  const tools = supportDeskTools();
  registered = await stage("register", () =>
    registerTools(ledger, tools, { partition: PARTITION, augment: true, model: chat }),
  );
  index = new ToolIndex({ ledger, embeddings });
  const router = new ToolRouter({ index, maxTools: 3 });
  recorder = new ToolLessonsCallbackHandler({ ledger });
  graph = routedAgent({ model: chat, tools, router, ledger });

  before = await stage("traffic", async () => {
    const out = [];
    for (const request of TRAFFIC) out.push(await ask(graph, recorder, request, ALICE));
    return out;
  });
  const manager = new LessonManager({ ledger, index, model: chat });
  review = await stage("review", async () => {
    const r = await manager.review({ partition: PARTITION });
    applied = await manager.apply(r.revisions.find((x) => x.tool === "lookup_order")!.id, {
      partition: PARTITION,
      approvedBy: "ops",
    });
    return r;
  });
  after = await stage("again", () => ask(graph, recorder, "Where is order 319870?", ALICE));
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe("ChatOpenAI and OpenAIEmbeddings over HTTP, every place the package calls a model", () => {
  it("augments each tool with exactly one plain chat call (no structured output), and keeps the replies", () => {
    const chats = stages.register.filter(isChat);
    expect(chats).toHaveLength(8);
    expect(chats.every((r) => roleOfRequest(r) === "augment")).toBe(true);
    for (const r of chats) {
      expect(chatBody(r).response_format).toBeUndefined();
      expect(chatBody(r).tools).toBeUndefined();
      expect(chatBody(r).model).toBe("gpt-4o-mini");
    }
    expect(registered.augmented).toHaveLength(8);
    expect(registered.refused).toEqual([]);
  });

  it("routes with OpenAI embeddings: the cards' routing text and each request are embedded on the server", async () => {
    const embedded = stages.traffic
      .filter((r) => r.path === "/v1/embeddings")
      .flatMap((r) => (r.body as { input: string[] }).input);
    for (const request of TRAFFIC) expect(embedded).toContain(request);
    expect(embedded.some((text) => text.includes("lookup_order"))).toBe(true);
    expect(before[0].routed).toContain("lookup_order");
    expect(before[3].routed).toContain("send_email");
  });

  it("runs the agent through ChatOpenAI with the routed tools bound; the recorder records every call", async () => {
    for (const turn of before.slice(0, 3)) {
      expect(turn.calls.map((c) => `${c.tool}:${c.ok}`)).toEqual(["lookup_order:false", "lookup_order:true"]);
    }
    expect(before[3].calls.map((c) => `${c.tool}:${c.ok}`)).toEqual(["send_email:true"]);
    const agentRequests = stages.traffic.filter((r) => isChat(r) && roleOfRequest(r) === "agent");
    // Each bound only the routed tools (k = 3), as OpenAI function definitions.
    for (const r of agentRequests) expect(chatBody(r).tools?.length).toBe(3);
    const calls = await ledger.listCalls(PARTITION);
    // Three refused and three served in the traffic, one served after the lesson.
    expect(
      calls
        .filter((c) => c.tool === "lookup_order")
        .map((c) => c.outcome)
        .sort(),
    ).toEqual([...["error", "error", "error"], ...["success", "success", "success", "success"]]);
    expect(calls.filter((c) => c.outcome === "error").every((c) => c.errorClass === "validation")).toBe(true);
    expect(calls.filter((c) => c.tool === "send_email")).toHaveLength(1);
    // Tokens reported by the server reach the records.
    expect(calls.every((c) => typeof c.tokens === "number" && c.tokens > 0)).toBe(true);
  });

  it("proposes through structured output with the schema the package declares (json_schema, name propose_lessons)", () => {
    const proposals = stages.review.filter((r) => isChat(r) && roleOfRequest(r) === "proposer");
    expect(proposals.length).toBeGreaterThanOrEqual(1);
    for (const r of proposals) {
      const format = chatBody(r).response_format!;
      expect(format.type).toBe("json_schema");
      expect(format.json_schema!.name).toBe("propose_lessons");
      expect(normalizedSchema(format.json_schema!.schema)).toEqual(normalizedSchema(toJsonSchema(ProposalReplySchema)));
    }
  });

  it("keeps the model's clean note, refuses the one holding an argument value, and shows the lesson to the agent", async () => {
    expect(applied.status).toBe("applied");
    expect(applied.notesAdded).toEqual(["order_id must look like ORD-######; calls with ###### were refused."]);
    const refused = review.refused.filter((r) => r.tool === "lookup_order").map((r) => r.refusal.reason);
    expect(refused).toContain("contains_value");
    // The refused text is withheld, not kept for the operator with the value in it.
    expect(plantedIn(JSON.stringify(review.refused), PLANTED)).toEqual([]);
    const card = (await ledger.getCard(PARTITION, "lookup_order"))!;
    expect(modelDescription(card)).toMatch(/Learned from use:\n- order_id must look like ORD-######/);
    // The next turn's request carries the lesson in the tool's description, and the model gets it right first time.
    const bound = stages.again
      .filter((r) => isChat(r) && roleOfRequest(r) === "agent")
      .flatMap((r) => chatBody(r).tools ?? []);
    const lookup = bound.find((t) => t.function.name === "lookup_order")!;
    expect(lookup.function.description).toContain("order_id must look like ORD-######");
    expect(after.calls.map((c) => `${c.tool}:${c.ok}`)).toEqual(["lookup_order:true"]);
    expect(after.calls[0].args).toEqual({ order_id: "ORD-319870" });
  });

  it("no argument value leaves in a prompt the package wrote: augmentation, proposals, tool descriptions, index texts", () => {
    // The check finds values where they are: in the users' own conversation with the agent.
    expect(plantedIn(stages.traffic.map((r) => r.raw).join("\n"), PLANTED)).toEqual(
      expect.arrayContaining(["482913", "zelda"]),
    );
    const written = [...stages.register, ...stages.review].filter(isChat);
    expect(written.length).toBeGreaterThan(8);
    for (const r of written) expect(plantedIn(r.raw, PLANTED), r.raw.slice(0, 200)).toEqual([]);
    // The agent's requests carry the user's own conversation; what the package adds to them (the
    // tool descriptions, lessons included) holds no value.
    for (const r of [...stages.traffic, ...stages.again].filter(isChat)) {
      for (const t of chatBody(r).tools ?? []) expect(plantedIn(JSON.stringify(t), PLANTED)).toEqual([]);
    }
    // Embeddings: the live request being routed is the user's; every other text (cards, the
    // stored and masked requests a review asks "what if" about) holds no value.
    const live = new Set([...TRAFFIC, "Where is order 319870?"]);
    const texts = server.requestsTo("embeddings").flatMap((r) => (r.body as { input: string[] }).input);
    expect(texts.length).toBeGreaterThan(live.size);
    for (const text of texts.filter((t) => !live.has(t))) expect(plantedIn(text, PLANTED), text).toEqual([]);
  });
});
