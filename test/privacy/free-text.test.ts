/**
 * Issue 29 item 10: values that appear only in free text (a tool's error, an error ToolMessage, a
 * tool's output, the user's request), which no detector knows — a person's name, a street address
 * in words, a date of birth in words, a letter-only id, a password — are kept out of every sink:
 * the store's rows (raw), what the ledger reads back, the lessons a review learns, the routing
 * text and what the model is shown with learned examples on. The corpus is the hostile corpus's
 * `free_text_only` cases (test/fixtures/make-hostile-corpus.ts, section 8), grown by format.
 *
 * Each case runs in a thread of its own, on a real LangGraph agent with the real recorder, route
 * node, review and prompt builder, over an in-memory store. Controls show each check can fail: the
 * rows do hold the cases' other words, and a note does quote a failing error (in its masked shape).
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { modelDescription } from "../../src/prompt/describe.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { ToolRouter } from "../../src/routing/router.js";
import { routingText } from "../../src/routing/routing-text.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { plainAgent, RecordingChatModel, routedAgent } from "./agent.js";
import { type CorpusCase, loadCorpus } from "./corpus.js";
import { plantedOf, ValueFinder, VALUES } from "./leaks.js";

const CASES = loadCorpus().filter((c) => c.tricks.includes("free_text_only"));
const FINDER = new ValueFinder(plantedOf(CASES));
const PARTITION = "u:u-1";

/** Every row of a store, as JSON text (the raw bytes a ledger holds). */
async function rawRows(store: InMemoryStore): Promise<string> {
  const out: string[] = [];
  for (const ns of await store.listNamespaces({ limit: 10_000 }))
    for (const item of await store.search(ns, { limit: 10_000 }))
      out.push(`${ns.join("/")} ${item.key} ${JSON.stringify(item.value)}`);
  return out.join("\n");
}

/** The planted values found in `texts`, as `caseId: how`. */
function leaks(texts: Iterable<string>): string[] {
  const out: string[] = [];
  for (const text of texts)
    for (const hit of FINDER.find(text, VALUES)) out.push(`${hit.caseId}: ${hit.how} in ${hit.excerpt}`);
  return out;
}

type Channel = "tool-error" | "error-toolmessage" | "tool-output" | "user-turn" | "user-turn-routed";

/** The tools of a channel: `check_account` carries the case's text; the others are the routing field. */
function toolsFor(channel: Channel, textOf: () => string): StructuredToolInterface[] {
  const failing = (args: Record<string, unknown>): boolean => typeof args.attempt === "number" && args.attempt <= 3;
  const check =
    channel === "error-toolmessage"
      ? tool(async () => "Done.", {
          name: "check_account",
          description: "Check a customer account.",
          schema: z.looseObject({}).superRefine((args, ctx) => {
            if (failing(args)) ctx.addIssue({ code: "custom", message: textOf() });
          }),
        })
      : tool(
          async (args: Record<string, unknown>) => {
            if (channel === "tool-error" && failing(args)) throw new Error(textOf());
            return channel === "tool-output" ? textOf() : "Done.";
          },
          { name: "check_account", description: "Check a customer account.", schema: z.looseObject({}) },
        );
  const other = (name: string, description: string) =>
    tool(async () => "Done.", { name, description, schema: z.looseObject({}) });
  return [
    check,
    other("send_email", "Send an email to a recipient."),
    other("get_weather", "Get the weather forecast for a city."),
  ];
}

interface World {
  store: InMemoryStore;
  ledger: Ledger;
  manager: LessonManager;
  model: RecordingChatModel;
  run: (thread: string, request: string, plan: (step: number) => string | undefined, text?: string) => Promise<void>;
  flush: () => Promise<void>;
}

async function world(channel: Channel): Promise<World> {
  const store = new InMemoryStore();
  const ledger = new Ledger(store, { failureSink: () => undefined });
  const recorder = new ToolLessonsCallbackHandler({ ledger, failureSink: () => undefined });
  let current = "";
  const tools = toolsFor(channel, () => current);
  await registerTools(ledger, tools, { partition: PARTITION });
  await ledger.configure(PARTITION, { minMisses: 1, minConfusions: 1, routingK: 1, maxTools: 8 });
  const index = new ToolIndex({ ledger });
  const model = new RecordingChatModel();
  const graph =
    channel === "user-turn-routed"
      ? routedAgent({
          model,
          tools,
          ledger,
          partition: PARTITION,
          router: new ToolRouter({ index, maxTools: 1 }),
          onError: () => undefined,
        })
      : plainAgent({ model, tools, ledger, partition: PARTITION });
  const manager = new LessonManager({ ledger, index });
  return {
    store,
    ledger,
    manager,
    model,
    run: async (thread, request, plan, text) => {
      current = text ?? "";
      model.plan = (step: number, _messages: BaseMessage[]) => {
        const name = plan(step);
        return name === undefined ? undefined : [{ name, args: { attempt: step + 1 } }];
      };
      await graph.invoke(
        { messages: [new HumanMessage(request)] },
        {
          configurable: { thread_id: thread },
          metadata: { user_id: "u-1" },
          callbacks: [recorder],
          recursionLimit: 50,
        },
      );
    },
    flush: async () => {
      await recorder.flush();
    },
  };
}

/** Three failing calls, then one that succeeds. */
const FAIL_THRICE = (step: number): string | undefined => (step <= 3 ? "check_account" : undefined);
const ONCE = (step: number): string | undefined => (step === 0 ? "check_account" : undefined);

/** What every sink of a world holds after its traffic, a review with autoApply and a probe. */
async function sinks(w: World): Promise<{ name: string; texts: string[] }[]> {
  await w.flush();
  const afterTraffic = await rawRows(w.store);
  const calls = await w.ledger.listCalls(PARTITION);
  const turns = await w.ledger.listTurns(PARTITION);
  const review = await w.manager.review({ partition: PARTITION, autoApply: true });
  await w.ledger.configure(PARTITION, { showLearnedExamples: true });
  w.model.descriptions.clear();
  w.model.probing = true;
  await w.run("probe", "Hello! Which of your tools can help me today?", () => undefined);
  w.model.probing = false;
  const cards = await w.ledger.listCards(PARTITION);
  return [
    { name: "store rows after the traffic", texts: [afterTraffic] },
    { name: "store rows after review", texts: [await rawRows(w.store)] },
    { name: "call rows read back", texts: calls.map((c) => JSON.stringify(c)) },
    { name: "turn rows read back", texts: turns.map((t) => JSON.stringify(t)) },
    {
      name: "lessons",
      texts: cards.flatMap((c) => [
        ...c.learned.notes.map((n) => n.text),
        ...c.learned.examples.map((e) => e.text),
        ...c.learned.notFor.map((n) => n.text),
        ...(c.learned.exampleCall ? [c.learned.exampleCall.text] : []),
      ]),
    },
    { name: "revisions", texts: review.revisions.map((r) => JSON.stringify(r)) },
    { name: "routing text", texts: cards.map((c) => routingText(c)) },
    {
      name: "model description (examples shown)",
      texts: cards.map((c) => modelDescription(c, { showLearnedExamples: true })),
    },
    {
      name: "what the model was sent",
      texts: [...w.model.descriptions, ...w.model.systemMessages, ...w.model.probeMessages],
    },
  ];
}

/** Runs every case of the corpus through a channel, one thread each. */
async function playCorpus(w: World, channel: Channel, cases: readonly CorpusCase[]): Promise<void> {
  for (const [i, c] of cases.entries()) {
    const thread = `case-${i}`;
    if (channel === "user-turn" || channel === "user-turn-routed") await w.run(thread, c.text, ONCE);
    else if (channel === "tool-output") await w.run(thread, "Please check my account.", ONCE, c.text);
    else await w.run(thread, "Please check my account.", FAIL_THRICE, c.text);
  }
}

describe("free text keeps only what may be kept (issue 29 item 10)", () => {
  it("the corpus holds every format of the item, several values each", () => {
    const families = new Map<string, number>();
    for (const c of CASES) {
      const family = c.id.replace(/^value-free-text-/, "").replace(/-\d+$/, "");
      families.set(family, (families.get(family) ?? 0) + 1);
    }
    expect([...families.keys()].sort()).toEqual(["dob-words", "letter-id", "name", "password", "street"]);
    for (const n of families.values()) expect(n).toBeGreaterThanOrEqual(3);
  });

  it.each(["tool-error", "error-toolmessage", "tool-output", "user-turn", "user-turn-routed"] as const)(
    "%s: no value shown by one thread reaches any sink",
    async (channel) => {
      const w = await world(channel);
      await playCorpus(w, channel, CASES);
      const all = await sinks(w);
      for (const sink of all) expect(leaks(sink.texts), sink.name).toEqual([]);
      // Controls: the rows hold the cases' records, with their other words in the clear.
      const rows = all.find((s) => s.name === "call rows read back")!.texts.join("\n");
      const turns = all.find((s) => s.name === "turn rows read back")!.texts.join("\n");
      const where = channel === "user-turn" || channel === "user-turn-routed" ? turns : rows;
      expect(where).toContain("Account holder <word> has no such record");
      expect(where).toContain("<word>");
    },
    60_000,
  );

  it("one caller's threads never release a word, and a note quotes an error only in its masked shape", async () => {
    const w = await world("tool-error");
    // Two threads of one caller fail with the same unusual word (a product), each with a name of its own.
    const texts = ["Zephyrix plan not active for Thaddeus Quenby", "Zephyrix plan not active for Ottoline Ravensworth"];
    await w.run("a", "Please check my account.", FAIL_THRICE, texts[0]);
    await w.flush();
    // One thread showed "Zephyrix": stored as a token, read back as <word>.
    expect((await w.ledger.listCalls(PARTITION)).map((c) => c.errorMessage).filter(Boolean)).toEqual(
      Array(3).fill("<word> plan not active for <word>"),
    );
    expect(await rawRows(w.store)).not.toMatch(/zephyrix/i);
    await w.run("b", "Please check my account.", FAIL_THRICE, texts[1]);
    const all = await sinks(w);
    for (const sink of all) expect(leaks(sink.texts), sink.name).toEqual([]);
    // The same caller in a second thread releases nothing (issue 44: three distinct callers).
    const messages = (await w.ledger.listCalls(PARTITION)).map((c) => c.errorMessage).filter(Boolean);
    expect(messages).toEqual(Array(6).fill("<word> plan not active for <word>"));
    expect(await rawRows(w.store)).not.toMatch(/zephyrix/i);
    const notes = all.find((s) => s.name === "lessons")!.texts;
    // The review did learn from the failures: a note quotes the error, in its masked shape.
    expect(notes.some((n) => n.includes("plan not active for <word>"))).toBe(true);
    expect(notes.join("\n")).not.toMatch(/zephyrix/i);
  });

  it("a word repeated by one thread stays a token, however often", async () => {
    const w = await world("tool-error");
    for (let i = 0; i < 3; i++)
      await w.run("same", "Please check my account.", FAIL_THRICE, "Account holder Thaddeus Quenby has no such record");
    const all = await sinks(w);
    for (const sink of all) expect(leaks(sink.texts), sink.name).toEqual([]);
    expect(await w.ledger.releasedWords(PARTITION)).toEqual(new Map());
  });
});
