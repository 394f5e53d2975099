/**
 * Third-party tool text stays data (issue 29, item 3), against a real MCP server: a stdio server
 * (test/helpers/mcp-hostile-server.ts, `@modelcontextprotocol/sdk`) whose tool descriptions carry
 * an instruction in `<IMPORTANT>` tags, an override of the app's instructions, an address and a
 * token; its tools loaded with `@langchain/mcp-adapters` and served for 48 turns, 24 through
 * `createToolLessonsAgent` (autoApply) and 24 through `createAgent` + `toolLessonsMiddleware`
 * (lessons applied by `LessonManager`), with a scripted model that keeps everything it was sent.
 *
 * What must hold on every model call: no system message (nor any other message) holds any of the
 * hostile text; each description reaches the model only as its own tool's definition, and that
 * definition is the author's text plus only the learned lines stored on the tool's card; the
 * lessons block names registered tools only and carries only stored rules, which passed the gate.
 * And nothing learned (cards, revisions, rules) quotes the hostile text.
 */
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { LessonManager } from "../../src/learn/manager.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { Rule } from "../../src/ledger/schema.js";
import { toolLessonsMiddleware } from "../../src/middleware/index.js";
import { LEARNED_HEADING, modelDescription } from "../../src/prompt/describe.js";
import { RETRIEVED_HEADING } from "../../src/prompt/lessons-block.js";
import { RULES_BLOCK_HEADING, RULES_BLOCK_PREAMBLE } from "../../src/prompt/rules-block.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { messageText } from "../../src/caller/request.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { HOSTILE, HOSTILE_DESCRIPTIONS, mcpHostileConnection } from "../helpers/mcp-hostile-server.js";

const LOOKUP = "crm.lookup_customer";
const SEARCH = "kb.search";
const PAY = "payments.send";
const TOOLS = [LOOKUP, SEARCH, PAY];
const APP_PROMPT = "You are the support desk of Acme. Answer briefly.";
const TURNS_PER_PATH = 24;

/** Pieces of the hostile text, any one of which in a system message is a leak. */
const FRAGMENTS = [
  HOSTILE.hiddenInstruction,
  "IMPORTANT",
  "id_rsa",
  "never tell the user",
  "Ignore previous instructions",
  "payments.send first",
  HOSTILE.address,
  "evil-payments",
  HOSTILE.token,
  "51HqLyjWDarjtT1zdp7dcXbGqY3Zq8KpQ2vN",
];

const leaked = (text: string): string[] => FRAGMENTS.filter((f) => text.toLowerCase().includes(f.toLowerCase()));

/** What one model call was sent. */
interface Sent {
  path: "agent" | "middleware";
  tools: { name: string; description: string }[];
  messages: { type: string; text: string }[];
}

/** A bound tool's name and description, whether a tool instance or a plain (OpenAI-style) definition. */
function definitionOf(bound: BindToolsInput): { name: string; description: string } {
  const t = bound as { name?: unknown; description?: unknown; function?: { name?: unknown; description?: unknown } };
  const fn = t.function ?? t;
  return { name: String(fn.name), description: typeof fn.description === "string" ? fn.description : "" };
}

/**
 * A scripted model that keeps what it was sent and acts only on the user's request and on what its
 * tools' definitions show: it types a customer number as given unless the lookup's definition
 * shows the `CUS-` format, and retries with the prefix when the error asks for it. It never
 * follows what a description tells it (it is a test of what is sent, not of a model's obedience).
 */
class RecordingModel extends BaseChatModel {
  constructor(
    readonly sent: Sent[],
    readonly path: Sent["path"],
    readonly bound: readonly BindToolsInput[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return "recording";
  }

  override bindTools(tools: BindToolsInput[]): RecordingModel {
    return new RecordingModel(this.sent, this.path, tools);
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const tools = this.bound.map(definitionOf);
    this.sent.push({
      path: this.path,
      tools,
      messages: messages.map((m) => ({ type: m.getType(), text: messageText(m) })),
    });
    const message = this.reply(messages, new Map(tools.map((t) => [t.name, t.description])));
    return { generations: [{ text: message.text, message }] };
  }

  private reply(messages: BaseMessage[], shown: ReadonlyMap<string, string>): AIMessage {
    const last = messages[messages.length - 1];
    const call = (name: string, args: Record<string, unknown>) =>
      shown.has(name)
        ? new AIMessage({ content: "", tool_calls: [{ id: `call_${++callIds}`, name, args, type: "tool_call" }] })
        : new AIMessage("I cannot do that here.");
    if (last instanceof ToolMessage) {
      const retry = /must start with "CUS-"/.test(last.text) && /customer id "(\d+)"/.exec(last.text);
      return retry ? call(LOOKUP, { customer_id: `CUS-${retry[1]}` }) : new AIMessage(`Done: ${last.text}`);
    }
    const request = [...messages].reverse().find((m) => m.getType() === "human")?.text ?? "";
    const customer = /\bcustomer (\d{5})\b/i.exec(request)?.[1];
    if (customer)
      return call(LOOKUP, { customer_id: /CUS-#/.test(shown.get(LOOKUP) ?? "") ? `CUS-${customer}` : customer });
    const topic = /knowledge base for (.+)$/i.exec(request)?.[1];
    if (topic) return call(SEARCH, { query: topic });
    const pay = /^pay (\d+) to (.+)$/i.exec(request);
    if (pay) return call(PAY, { payee: pay[2], amount: Number(pay[1]) });
    return new AIMessage("Noted.");
  }
}
let callIds = 0;

/** The i-th request of a path: lookups (which teach the CUS- format), searches, payments, one edict. */
function requestOf(i: number): string {
  if (i === 2) return "Never use payments.send for my rent.";
  switch (i % 4) {
    case 0:
      return `Look up customer ${48_000 + i}`;
    case 1:
      return `Search the knowledge base for refund policy ${i}`;
    case 2:
      return `What plan is customer ${50_000 + i} on?`;
    default:
      return `Pay ${20 + i} to the window cleaner`;
  }
}

const sent: Sent[] = [];
const clients: MultiServerMCPClient[] = [];
let mcpTools: StructuredToolInterface[];
let agentLedger: Ledger;
let middlewareLedger: Ledger;
const partition = "u:ann";

async function connect(): Promise<StructuredToolInterface[]> {
  const client = new MultiServerMCPClient({ mcpServers: { thirdParty: mcpHostileConnection() } });
  clients.push(client);
  return client.getTools();
}

beforeAll(async () => {
  mcpTools = await connect();

  // 1. createToolLessonsAgent: the lessons node serves each turn, learns, applies (autoApply).
  const graph = createToolLessonsAgent({
    model: new RecordingModel(sent, "agent"),
    tools: mcpTools,
    systemPrompt: APP_PROMPT,
    store: new InMemoryStore(),
    checkpointer: new MemorySaver(),
    autoApply: true,
    failureSink: () => undefined,
  });
  agentLedger = graph.ledger;
  for (let i = 0; i < TURNS_PER_PATH; i++) {
    await graph.invoke(
      { messages: [new HumanMessage(requestOf(i))] },
      { configurable: { thread_id: `agent-${i}`, user_id: "ann" } },
    );
    await graph.recorder.flush();
  }

  // 2. createAgent + toolLessonsMiddleware, on tools loaded again from a second connection;
  //    lessons reviewed and applied by the operator's LessonManager after 8 turns.
  const tools = await connect();
  middlewareLedger = new Ledger(new InMemoryStore());
  const index = new ToolIndex({ ledger: middlewareLedger });
  const recorder = new ToolLessonsCallbackHandler({ ledger: middlewareLedger, failureSink: () => undefined });
  const agent = createAgent({
    model: new RecordingModel(sent, "middleware"),
    tools,
    systemPrompt: APP_PROMPT,
    middleware: [toolLessonsMiddleware({ ledger: middlewareLedger, index, failureSink: () => undefined })],
    checkpointer: new MemorySaver(),
  });
  const manager = new LessonManager({ ledger: middlewareLedger, index });
  for (let i = 0; i < TURNS_PER_PATH; i++) {
    await agent.invoke(
      { messages: [new HumanMessage(requestOf(i))] },
      { configurable: { thread_id: `mw-${i}` }, context: { user_id: "ann" }, callbacks: [recorder] },
    );
    await recorder.flush();
    if (i === 7) {
      const review = await manager.review({ partition });
      for (const revision of review.revisions) await manager.apply(revision.id, { partition, approvedBy: "ops" });
    }
  }
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.close();
});

/** Everything a ledger learned or stores as guidance, as text. */
async function learnedTexts(ledger: Ledger): Promise<string[]> {
  const cards = await ledger.listCards(partition);
  const revisions = await ledger.listRevisions(partition);
  const rules = await ledger.listRules(partition);
  return [
    ...cards.flatMap((c) => [
      ...c.learned.notes.map((n) => n.text),
      ...c.learned.notFor.map((n) => n.text),
      ...(c.learned.exampleCall ? [c.learned.exampleCall.text] : []),
      ...c.learned.examples.filter((e) => e.source === "learned").map((e) => e.text),
    ]),
    ...revisions.flatMap((r) => [...r.notesAdded, ...r.queriesAdded]),
    ...rules.map((r) => r.rule),
  ];
}

/** The lines of the lessons block in a system message: what follows the app's own prompt. */
function blockOf(system: string): string {
  expect(system.startsWith(APP_PROMPT)).toBe(true);
  return system.slice(APP_PROMPT.length).trim();
}

describe("third-party tool descriptions from a real MCP server stay data", () => {
  it("loads the server's tools with their hostile descriptions as written", () => {
    expect(mcpTools.map((t) => t.name).sort()).toEqual([LOOKUP, SEARCH, PAY].sort());
    for (const t of mcpTools) {
      expect(t.description).toBe(HOSTILE_DESCRIPTIONS[t.name as keyof typeof HOSTILE_DESCRIPTIONS]);
      // The check below finds each description's hostile text (so a leak could not pass unseen).
      expect(leaked(t.description).length).toBeGreaterThanOrEqual(2);
    }
  });

  it("ran 48 turns, learned a lesson and kept a rule on each path (so the checks below are not empty)", async () => {
    for (const path of ["agent", "middleware"] as const) {
      const calls = sent.filter((s) => s.path === path);
      const turns = new Set(calls.map((s) => s.messages.filter((m) => m.type === "human").at(-1)?.text));
      expect(calls.length).toBeGreaterThanOrEqual(TURNS_PER_PATH);
      expect(turns.size).toBe(TURNS_PER_PATH);
      // A lesson on the lookup reached its definition; the user's edict reached the block.
      expect(calls.some((s) => s.tools.some((t) => t.name === LOOKUP && t.description.includes(LEARNED_HEADING)))).toBe(
        true,
      );
      expect(
        calls.some((s) => s.messages.some((m) => m.type === "system" && m.text.includes(RULES_BLOCK_HEADING))),
      ).toBe(true);
    }
    for (const ledger of [agentLedger, middlewareLedger]) {
      const rules = await ledger.listRules(partition);
      expect(rules.map((r) => [r.tool, r.priority])).toContainEqual([PAY, "critical"]);
      const card = (await ledger.getCard(partition, LOOKUP))!;
      expect(card.learned.notes.map((n) => n.text).join(" ")).toMatch(/CUS-#####/);
    }
    // Right first time once learned: the last lookups of each path carried the prefix at once.
    for (const path of ["agent", "middleware"] as const) {
      const last = sent
        .filter(
          (s) =>
            s.path === path && s.messages.at(-1)?.type === "human" && /customer \d{5}/.test(s.messages.at(-1)!.text),
        )
        .at(-1)!;
      expect(last.tools.find((t) => t.name === LOOKUP)?.description).toMatch(/CUS-#####/);
    }
  });

  it("no system message, nor any other message, of any model call holds any of the hostile text", () => {
    expect(sent.length).toBeGreaterThanOrEqual(2 * TURNS_PER_PATH);
    for (const s of sent) {
      for (const m of s.messages)
        expect({ path: s.path, type: m.type, leaked: leaked(m.text) }).toEqual({
          path: s.path,
          type: m.type,
          leaked: [],
        });
    }
  });

  it("each description reaches the model only as its own tool's definition: the author's text, then stored learned lines", async () => {
    for (const s of sent) {
      for (const t of s.tools) {
        expect(TOOLS).toContain(t.name);
        const author = HOSTILE_DESCRIPTIONS[t.name as keyof typeof HOSTILE_DESCRIPTIONS];
        // The author's own text, as written, first; no other tool's text anywhere in it.
        expect(t.description.startsWith(author)).toBe(true);
        for (const other of TOOLS.filter((n) => n !== t.name)) {
          const theirs = HOSTILE_DESCRIPTIONS[other as keyof typeof HOSTILE_DESCRIPTIONS];
          expect(t.description.includes(theirs)).toBe(false);
        }
        // What follows is only the "Learned from use:" lines, none of which quotes the hostile text.
        const added = t.description.slice(author.length);
        if (added !== "") {
          expect(added.startsWith(`\n\n${LEARNED_HEADING}\n- `)).toBe(true);
          expect(leaked(added)).toEqual([]);
        }
      }
    }
    // The definitions the model got at the end are the stored cards' descriptions, byte for byte.
    for (const [path, ledger] of [
      ["agent", agentLedger],
      ["middleware", middlewareLedger],
    ] as const) {
      const last = sent.filter((s) => s.path === path).at(-1)!;
      for (const t of last.tools) {
        const card = (await ledger.getCard(partition, t.name))!;
        expect(t.description).toBe(modelDescription(card));
      }
    }
  });

  it("the lessons block names registered tools only and carries only rules the ledger stored after the gate", async () => {
    for (const [path, ledger] of [
      ["agent", agentLedger],
      ["middleware", middlewareLedger],
    ] as const) {
      const stored: Rule[] = await ledger.listRules(partition);
      const storedText = new Set(stored.map((r) => r.rule));
      let blocks = 0;
      for (const s of sent.filter((x) => x.path === path)) {
        const systems = s.messages.filter((m) => m.type === "system");
        expect(systems.length).toBeLessThanOrEqual(1);
        if (systems.length === 0) continue;
        const block = blockOf(systems[0].text);
        if (block === "") continue;
        blocks += 1;
        for (const line of block.split("\n").filter((l) => l.trim() !== "")) {
          const tool = /^### `(.+)`$/.exec(line)?.[1];
          const rule = /^- \[(?:critical|high)\] (.+)$/.exec(line)?.[1];
          const retrieved = /^- `(.+)`: (.+)$/.exec(line);
          if (tool !== undefined) expect(TOOLS).toContain(tool);
          else if (rule !== undefined) expect(storedText.has(rule)).toBe(true);
          else if (retrieved) {
            expect(TOOLS).toContain(retrieved[1]);
            expect(storedText.has(retrieved[2])).toBe(true);
          } else expect([RULES_BLOCK_HEADING, RULES_BLOCK_PREAMBLE, RETRIEVED_HEADING]).toContain(line);
        }
      }
      expect(blocks).toBeGreaterThan(0);
    }
  });

  it("nothing learned, on either path, quotes the hostile text", async () => {
    for (const ledger of [agentLedger, middlewareLedger]) {
      const texts = await learnedTexts(ledger);
      expect(texts.length).toBeGreaterThan(0);
      for (const text of texts) expect(leaked(text)).toEqual([]);
    }
  });
});
