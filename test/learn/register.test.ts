import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { DynamicStructuredTool, tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { InvalidInput } from "../../src/errors.js";
import { exampleSources } from "../../src/ledger/cards.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { registerTools } from "../../src/learn/register.js";

const GOOD = (topic: string) =>
  JSON.stringify({
    description: `Everything about ${topic}.`,
    examples: [1, 2, 3, 4, 5, 6].map((i) => `${topic} question number ${i}`),
  });

class CallCounter extends BaseCallbackHandler {
  name = "call-counter";
  calls = 0;
  override async handleChatModelStart() {
    this.calls += 1;
  }
}

function scripted(...responses: string[]) {
  const counter = new CallCounter();
  return { model: new FakeListChatModel({ responses, callbacks: [counter] }), counter };
}

function newLedger(): Ledger {
  return new Ledger(new InMemoryStore(), { failureSink: () => {} });
}

const makeLookup = (description = "Look up a claim by reference.", extraArg = false) =>
  tool(async () => "ok", {
    name: "lookup_claim",
    description,
    schema: extraArg ? z.object({ claimRef: z.string(), year: z.number() }) : z.object({ claimRef: z.string() }),
  });

const refund = tool(async () => "ok", {
  name: "refund_claim",
  description: "Refund a claim.",
  schema: z.object({ claimRef: z.string(), amount: z.number() }),
});

const mcpTool = (name: string) =>
  new DynamicStructuredTool({
    name,
    description: `MCP tool ${name}.`,
    schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    func: async () => "ok",
  });

describe("registerTools", () => {
  it("writes one card per new tool, with the author's text and no augmentation by default", async () => {
    const ledger = newLedger();
    const result = await registerTools(ledger, [makeLookup(), refund]);
    expect(result).toEqual({
      registered: ["lookup_claim", "refund_claim"],
      unchanged: [],
      updated: [],
      augmented: [],
      refused: [],
      lookalikes: [],
    });
    const card = await ledger.getCard("default", "lookup_claim");
    expect(card?.version).toBe(1);
    expect(card?.author.description).toBe("Look up a claim by reference.");
    expect(card?.author.argNames).toEqual(["claimRef"]);
    expect(card?.augmented).toBeNull();
  });

  it("is a no-op for an unchanged tool: no write, no model call", async () => {
    const ledger = newLedger();
    await registerTools(ledger, [makeLookup()]);
    const { model, counter } = scripted(GOOD("claims"));
    const commit = vi.spyOn(ledger, "commit");
    const result = await registerTools(ledger, [makeLookup()], { augment: true, model });
    expect(result.unchanged).toEqual(["lookup_claim"]);
    expect(result.registered).toEqual([]);
    expect(commit).not.toHaveBeenCalled();
    expect(counter.calls).toBe(0);
    expect((await ledger.getCard("default", "lookup_claim"))?.version).toBe(1);
  });

  it("updates the author's part of a changed tool and keeps what was learned", async () => {
    const ledger = newLedger();
    const { model } = scripted(GOOD("claims"));
    await registerTools(ledger, [makeLookup()], { augment: true, model });
    const stored = await ledger.getCard("default", "lookup_claim");
    if (!stored) throw new Error("card missing");
    await ledger.putCard({
      ...stored,
      learned: {
        ...stored.learned,
        examples: [
          ...stored.learned.examples,
          { text: "windscreen job status", source: "learned", revisionId: "r1", addedAt: 2 },
        ],
        notes: [{ text: "Pass claimRef with its CW- prefix.", revisionId: "r1" }],
      },
    });

    const { model: second, counter } = scripted(GOOD("other"));
    const docChanged = await registerTools(ledger, [makeLookup("Look up an insurance claim.")], {
      augment: true,
      model: second,
    });
    expect(docChanged.updated).toEqual(["lookup_claim"]);
    expect(counter.calls).toBe(0);
    const afterDoc = await ledger.getCard("default", "lookup_claim");
    expect(afterDoc?.version).toBe(3);
    expect(afterDoc?.author.description).toBe("Look up an insurance claim.");
    expect(afterDoc?.learned.notes).toEqual([{ text: "Pass claimRef with its CW- prefix.", revisionId: "r1" }]);
    expect(afterDoc?.learned.examples).toHaveLength(7);
    expect(afterDoc?.augmented?.description).toBe("Everything about claims.");

    const schemaChanged = await registerTools(ledger, [makeLookup("Look up an insurance claim.", true)]);
    expect(schemaChanged.updated).toEqual(["lookup_claim"]);
    const afterSchema = await ledger.getCard("default", "lookup_claim");
    expect(afterSchema?.author.argNames).toEqual(["claimRef", "year"]);
    expect(afterSchema?.learned).toEqual(afterDoc?.learned);
  });

  it("augments only new tools, one model call each, and records refusals on the card", async () => {
    const ledger = newLedger();
    await registerTools(ledger, [makeLookup()]);
    const { model, counter } = scripted(GOOD("refunds"));
    const first = await registerTools(ledger, [makeLookup(), refund], { augment: true, model });
    expect(counter.calls).toBe(1);
    expect(first).toMatchObject({
      registered: ["refund_claim"],
      unchanged: ["lookup_claim"],
      augmented: ["refund_claim"],
    });
    const refundCard = await ledger.getCard("default", "refund_claim");
    expect(exampleSources(refundCard ?? {}).every((e) => e.source === "synthetic")).toBe(true);
    expect(refundCard?.author.description).toBe("Refund a claim.");

    const { model: chatty, counter: chattyCount } = scripted("Sure! Here you go.");
    const second = await registerTools(ledger, [mcpTool("fs/read")], { augment: true, model: chatty });
    expect(chattyCount.calls).toBe(1);
    expect(second.registered).toEqual(["fs/read"]);
    expect(second.refused).toEqual([{ tool: "fs/read", reason: "reply_not_json: the reply is not JSON" }]);
    const refusedCard = await ledger.getCard("default", "fs/read");
    expect(refusedCard?.augmentationRefused).toBe("reply_not_json: the reply is not JSON");
    expect(refusedCard?.augmented).toBeNull();
    expect(refusedCard?.learned.examples).toEqual([]);
  });

  it("re-augments existing tools when asked", async () => {
    const ledger = newLedger();
    await registerTools(ledger, [makeLookup()]);
    const { model, counter } = scripted(GOOD("claims"));
    const result = await registerTools(ledger, [makeLookup()], { augment: true, reaugment: true, model });
    expect(counter.calls).toBe(1);
    expect(result).toMatchObject({ updated: ["lookup_claim"], augmented: ["lookup_claim"] });
    expect((await ledger.getCard("default", "lookup_claim"))?.learned.examples).toHaveLength(6);
  });

  it("round-trips MCP-style names with dots and slashes", async () => {
    const ledger = newLedger();
    const tools = [mcpTool("github.create_issue"), mcpTool("fs/read"), mcpTool("github.create")];
    expect((await registerTools(ledger, tools)).registered).toEqual([
      "github.create_issue",
      "fs/read",
      "github.create",
    ]);
    expect((await ledger.getCard("default", "github.create_issue"))?.name).toBe("github.create_issue");
    expect((await ledger.getCard("default", "fs/read"))?.author.argNames).toEqual(["path"]);
    expect((await ledger.listCards("default")).map((c) => c.name)).toEqual([
      "fs/read",
      "github.create",
      "github.create_issue",
    ]);
    expect((await registerTools(ledger, tools)).unchanged).toEqual(["github.create_issue", "fs/read", "github.create"]);
  });

  it("keeps partitions apart", async () => {
    const ledger = newLedger();
    await registerTools(ledger, [makeLookup()], { partition: "tenant-a" });
    expect(await ledger.getCard("default", "lookup_claim")).toBeNull();
    expect((await ledger.getCard("tenant-a", "lookup_claim"))?.partition).toBe("tenant-a");
  });

  it("refuses two tools with one name, and augment without a model", async () => {
    const ledger = newLedger();
    await expect(registerTools(ledger, [makeLookup(), makeLookup()])).rejects.toThrow(InvalidInput);
    await expect(registerTools(ledger, [makeLookup()], { augment: true })).rejects.toThrow(InvalidInput);
    expect(await ledger.listCards("default")).toEqual([]);
  });

  it("uses the partition's settings for the example length limit", async () => {
    const ledger = newLedger();
    await ledger.configure("default", { maxLineLength: 20 });
    const { model } = scripted(GOOD("a rather long topic name"));
    const result = await registerTools(ledger, [refund], { augment: true, model });
    expect(result.refused[0]?.reason).toMatch(/^too_long:/);
  });
});

describe("one tool per name a person would read", () => {
  const named = (name: string) =>
    tool(async () => "ok", { name, description: "Send an email.", schema: z.object({ to: z.string() }) });
  const LOOKALIKES = [
    "send_\u0435mail", // Cyrillic е
    "s\u0435nd_em\u0430il", // two Cyrillic letters
    "send\u200B_email", // zero-width space
    "send_email\u{E0041}", // a tag character
    "\uFF53\uFF45\uFF4E\uFF44_\uFF45\uFF4D\uFF41\uFF49\uFF4C", // full-width
    "send_\u202Eemail", // bidi override
    "send_\u0435\u200Dmail", // Cyrillic and a joiner
  ];

  it("refuses every look-alike of a registered tool, registering only the real one", async () => {
    const ledger = newLedger();
    await registerTools(ledger, [named("send_email")]);
    const result = await registerTools(ledger, LOOKALIKES.map(named));
    expect(result.registered).toEqual([]);
    expect(result.lookalikes.map((l) => l.tool)).toEqual(LOOKALIKES);
    expect(result.lookalikes.every((l) => l.like === "send_email")).toBe(true);
    expect((await ledger.listCards("default")).map((c) => c.name)).toEqual(["send_email"]);
  });

  it("a name that differs only in case is another tool, registered as written (issue 44, item 9)", async () => {
    const ledger = newLedger();
    await registerTools(ledger, [named("send_email")]);
    const result = await registerTools(ledger, [named("Send_Email"), named("SEND_EMAIL")]);
    expect(result.registered).toEqual(["Send_Email", "SEND_EMAIL"]);
    expect(result.lookalikes).toEqual([]);
    // A look-alike of a case variant is still one.
    const again = await registerTools(ledger, [named("S\u0435nd_Email")]);
    expect(again.lookalikes.map((l) => l.reason)).toEqual(["lookalike"]);
  });

  it("within one batch the first printable name wins; an unprintable name alone is refused too", async () => {
    const ledger = newLedger();
    const result = await registerTools(ledger, [named("send_\u0435mail"), named("send_email"), named("ok\u200B_tool")]);
    expect(result.registered).toEqual(["send_\u0435mail"]);
    expect(result.lookalikes).toEqual([
      { tool: "send_email", reason: "lookalike", like: "send_\u0435mail" },
      { tool: "ok\u200B_tool", reason: "unprintable" },
    ]);
  });

  it('with lookalikes: "report", registers them and says which', async () => {
    const ledger = newLedger();
    const result = await registerTools(ledger, [named("send_email"), named("send_\u0435mail")], {
      lookalikes: "report",
    });
    expect(result.registered).toEqual(["send_email", "send_\u0435mail"]);
    expect(result.lookalikes).toEqual([{ tool: "send_\u0435mail", reason: "lookalike", like: "send_email" }]);
  });
});
