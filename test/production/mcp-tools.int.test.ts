/**
 * Learning on a connected MCP server's tools: a real stdio MCP server (test/helpers/mcp-server.ts,
 * `@modelcontextprotocol/sdk`) started by the test, its tools loaded with `@langchain/mcp-adapters`
 * and run by a routed LangGraph agent with the real ToolNode and the package's recorder. Names with
 * `.` and `/` go through the ledger, the review and the prompt unchanged; a restart of the server
 * with new descriptions updates the cards and keeps what was learned.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { Revision } from "../../src/ledger/schema.js";
import { modelDescription } from "../../src/prompt/describe.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { MCP_DESCRIPTIONS, type McpRelease, mcpStdioConnection } from "../helpers/mcp-server.js";
import { ask, routedAgent } from "../helpers/routed-agent.js";

const LOOKUP = "crm.lookup_customer";
const READ = "files/read_file";
const TICKET = "crm.create_ticket";

/**
 * A chat model with one habit: it copies a customer number as typed ("48213") unless the
 * description it was bound with shows the `CUS-` format, and retries with the prefix when the
 * error asks for it. What it does differently after a lesson, it does because of what it is shown.
 */
class CrmModel extends BaseChatModel {
  constructor(readonly bound: ReadonlyMap<string, string> = new Map()) {
    super({});
  }

  _llmType(): string {
    return "crm-scripted";
  }

  override bindTools(tools: unknown[]): CrmModel {
    const named = tools.map((t) => t as { name?: unknown; description?: unknown });
    return new CrmModel(
      new Map(named.map((t) => [String(t.name), typeof t.description === "string" ? t.description : ""])),
    );
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.reply(messages);
    return { generations: [{ text: message.text, message }] };
  }

  private reply(messages: BaseMessage[]): AIMessage {
    let human = messages.length - 1;
    while (human >= 0 && messages[human].getType() !== "human") human -= 1;
    const request = messages[human]?.text ?? "";
    const last = messages[messages.length - 1];
    const call = (name: string, args: Record<string, unknown>) =>
      this.bound.has(name)
        ? new AIMessage({ content: "", tool_calls: [{ id: `call_${++calls}`, name, args, type: "tool_call" }] })
        : new AIMessage("I cannot do that here.");
    if (last instanceof ToolMessage) {
      const retry = /must start with "CUS-"/.test(last.text) && /customer id "(\d+)"/.exec(last.text);
      return retry ? call(LOOKUP, { customer_id: `CUS-${retry[1]}` }) : new AIMessage(`Done: ${last.text}`);
    }
    const customer = /\bcustomer (?:CUS-)?(\d{5})\b/i.exec(request)?.[1];
    if (/ticket/i.test(request) && customer)
      return call(TICKET, { customer_id: `CUS-${customer}`, subject: "Follow-up" });
    if (customer) {
      const shown = /CUS-#/.test(this.bound.get(LOOKUP) ?? "");
      return call(LOOKUP, { customer_id: shown ? `CUS-${customer}` : customer });
    }
    const file = /\bfile (\S+)/i.exec(request)?.[1];
    if (file) return call(READ, { path: file });
    return new AIMessage("Sorry, no tool for that.");
  }
}
let calls = 0;

async function connect(
  release: McpRelease,
): Promise<{ client: MultiServerMCPClient; tools: StructuredToolInterface[] }> {
  const client = new MultiServerMCPClient({ mcpServers: { crm: mcpStdioConnection(release) } });
  return { client, tools: await client.getTools() };
}

let clients: MultiServerMCPClient[] = [];
let ledger: Ledger;
let index: ToolIndex;
let recorder: ToolLessonsCallbackHandler;
let v1Tools: StructuredToolInterface[];
let v1ArgNames: string[];
let traffic: Awaited<ReturnType<typeof ask>>[];
let revision: Revision;
let learnedTurn: Awaited<ReturnType<typeof ask>>;
let afterRestart: { registered: Awaited<ReturnType<typeof registerTools>>; turn: Awaited<ReturnType<typeof ask>> };

beforeAll(async () => {
  const v1 = await connect("v1");
  clients.push(v1.client);
  v1Tools = v1.tools;
  ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, v1Tools);
  v1ArgNames = (await ledger.getCard("default", LOOKUP))!.author.argNames;
  index = new ToolIndex({ ledger });
  const router = new ToolRouter({ index, maxTools: 2 });
  recorder = new ToolLessonsCallbackHandler({ ledger });
  const graph = routedAgent({ model: new CrmModel(), tools: v1Tools, router, ledger });
  traffic = [];
  for (const request of [
    "Look up customer 48213 please",
    "What plan is customer 50721 on?",
    "Read the file notes/today.txt",
  ]) {
    traffic.push(await ask(graph, recorder, request));
  }
  const manager = new LessonManager({ ledger, index });
  const review = await manager.review();
  revision = await manager.apply(review.revisions.find((r) => r.tool === LOOKUP)!.id, { approvedBy: "ops" });
  learnedTurn = await ask(graph, recorder, "Check customer 61234 for me");

  // The server restarts as its next release: new descriptions (and an optional argument).
  await v1.client.close();
  clients = [];
  const v2 = await connect("v2");
  clients.push(v2.client);
  const registered = await registerTools(ledger, v2.tools);
  await index.upsertCards("default", await ledger.listCards("default"));
  const graph2 = routedAgent({ model: new CrmModel(), tools: v2.tools, router, ledger });
  afterRestart = { registered, turn: await ask(graph2, recorder, "Look up customer 70001") };
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.close();
});

describe("an agent on a real MCP server's tools, over stdio", () => {
  it("loads the server's tools with their names as the server gives them, and registers a card for each", async () => {
    expect(v1Tools.map((t) => t.name).sort()).toEqual([TICKET, LOOKUP, READ]);
    const cards = await ledger.listCards("default");
    expect(cards.map((c) => c.name).sort()).toEqual([TICKET, LOOKUP, READ]);
    expect(v1ArgNames).toEqual(["customer_id"]);
  });

  it("records every call, MCP error results included, under the exact tool names", async () => {
    expect(traffic[0].calls.map((c) => `${c.tool}:${c.ok}`)).toEqual([`${LOOKUP}:false`, `${LOOKUP}:true`]);
    expect(traffic[1].calls.map((c) => `${c.tool}:${c.ok}`)).toEqual([`${LOOKUP}:false`, `${LOOKUP}:true`]);
    expect(traffic[2].calls.map((c) => `${c.tool}:${c.ok}`)).toEqual([`${READ}:true`]);
    const records = await ledger.listCalls("default");
    const lookups = records.filter((r) => r.tool === LOOKUP && r.outcome === "error");
    expect(lookups).toHaveLength(2);
    // The MCP server's error text, masked: the typed id is not kept.
    for (const r of lookups) {
      expect(r.errorMessage).toMatch(/customer ids must start with "CUS-"/);
      expect(r.errorMessage).not.toMatch(/48213|50721/);
    }
    expect(records.some((r) => r.tool === READ && r.outcome === "success")).toBe(true);
    const routes = await ledger.listRoutes("default");
    expect(routes.flatMap((r) => r.offered.map((o) => o.tool))).toEqual(expect.arrayContaining([LOOKUP, READ]));
  });

  it("learns a lesson on the MCP tool, shows it to the model, and the model gets it right first time", async () => {
    expect(revision.tool).toBe(LOOKUP);
    expect(revision.status).toBe("applied");
    expect(revision.notesAdded.join(" ")).toMatch(/CUS-#####/);
    const history = await new LessonManager({ ledger, index }).history(LOOKUP);
    expect(history.map((r) => r.id)).toContain(revision.id);
    expect(learnedTurn.calls.map((c) => `${c.tool}:${c.ok}`)).toEqual([`${LOOKUP}:true`]);
    expect(learnedTurn.calls[0].args).toEqual({ customer_id: "CUS-61234" });
  });

  it("after a restart with new descriptions, the cards take the new author's text and keep what was learned", async () => {
    expect(afterRestart.registered.updated).toEqual([LOOKUP]);
    expect(afterRestart.registered.unchanged.sort()).toEqual([TICKET, READ]);
    const card = (await ledger.getCard("default", LOOKUP))!;
    expect(card.author.description).toBe(MCP_DESCRIPTIONS.v2[LOOKUP]);
    expect(card.author.argNames).toEqual(["customer_id", "include_orders"]);
    expect(card.learned.notes.map((n) => n.text)).toEqual(revision.notesAdded);
    const shown = modelDescription(card);
    expect(shown.startsWith(MCP_DESCRIPTIONS.v2[LOOKUP])).toBe(true);
    expect(shown).toMatch(/Learned from use:[\s\S]*CUS-#####/);
    // The restarted server's tools, with the kept lesson: right first time.
    expect(afterRestart.turn.calls.map((c) => `${c.tool}:${c.ok}`)).toEqual([`${LOOKUP}:true`]);
  });
});
