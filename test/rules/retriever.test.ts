import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { LessonRetriever } from "../../src/rules/retriever.js";
import { deleteRule, putRule } from "../../src/rules/store.js";

const normal = { priority: "normal", source: "programmatic" } as const;

async function seeded() {
  const ledger = new Ledger(new InMemoryStore());
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Sign newsletters as the marketing team." },
    { partition: "u:alice" },
  );
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Attach invoices as PDF files." },
    { partition: "u:alice" },
  );
  await putRule(ledger, { ...normal, tool: "book_hotel", rule: "Prefer hotels with a gym." }, { partition: "u:alice" });
  await putRule(ledger, { ...normal, tool: "send_email", rule: "Sign newsletters as Bob." }, { partition: "u:bob" });
  await putRule(
    ledger,
    { tool: "send_email", rule: "Never email newsletters to Sarah.", priority: "critical", source: "user_explicit" },
    {
      partition: "u:alice",
    },
  );
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Newsletters go out on Tuesdays." },
    { partition: "u:alice", scope: "shared" },
  );
  return ledger;
}

const texts = (docs: { pageContent: string }[]) => docs.map((d) => d.pageContent);

describe("LessonRetriever", () => {
  it("serves the normal rules relevant to a request, from the caller's partition (read from config) and the shared scope", async () => {
    const retriever = new LessonRetriever({ ledger: await seeded(), k: 3 });
    const docs = await retriever.invoke("send the newsletter", { metadata: { user_id: "alice" } });
    expect(texts(docs)).toEqual(
      expect.arrayContaining(["Sign newsletters as the marketing team.", "Newsletters go out on Tuesdays."]),
    );
    expect(texts(docs)).not.toContain("Sign newsletters as Bob.");
    expect(texts(docs)).not.toContain("Never email newsletters to Sarah.");
    expect(docs[0].metadata).toMatchObject({
      kind: "rule",
      priority: "normal",
      tool: expect.any(String),
      score: expect.any(Number),
    });
    const bob = await retriever.invoke("send the newsletter", { configurable: { user_id: "bob" } });
    expect(texts(bob)).toContain("Sign newsletters as Bob.");
    expect(texts(bob)).not.toContain("Sign newsletters as the marketing team.");
  });

  it("keeps each caller apart when calls run at once", async () => {
    const retriever = new LessonRetriever({ ledger: await seeded(), k: 5 });
    const [alice, bob] = await Promise.all([
      retriever.invoke("newsletter", { metadata: { user_id: "alice" } }),
      retriever.invoke("newsletter", { metadata: { user_id: "bob" } }),
    ]);
    expect(texts(alice)).toContain("Sign newsletters as the marketing team.");
    expect(texts(alice)).not.toContain("Sign newsletters as Bob.");
    expect(texts(bob)).toContain("Sign newsletters as Bob.");
    expect(texts(bob)).not.toContain("Sign newsletters as the marketing team.");
  });

  it("stays in step with the ledger: new rules appear, deleted or newly pinned ones leave", async () => {
    const ledger = await seeded();
    const retriever = new LessonRetriever({ ledger, k: 10, minScore: 0 });
    const ask = () => retriever.retrieve("gym hotel", { partition: "u:alice", tool: "book_hotel" });
    expect(texts(await ask())).toEqual(["Prefer hotels with a gym."]);
    const added = await putRule(
      ledger,
      { ...normal, tool: "book_hotel", rule: "Book hotels near the office gym." },
      { partition: "u:alice" },
    );
    expect(texts(await ask()).sort()).toEqual(["Book hotels near the office gym.", "Prefer hotels with a gym."]);
    await putRule(
      ledger,
      { ...normal, tool: "book_hotel", rule: "Prefer hotels with a gym.", priority: "high" },
      { partition: "u:alice" },
    );
    await deleteRule(ledger, added.id, { partition: "u:alice" });
    expect(await ask()).toEqual([]);
  });

  it("is a LangChain retriever: callbacks see the run", async () => {
    const events: string[] = [];
    const handler = BaseCallbackHandler.fromMethods({
      handleRetrieverStart: () => void events.push("start"),
      handleRetrieverEnd: (docs) => void events.push(`end:${docs.length}`),
    });
    const retriever = new LessonRetriever({ ledger: await seeded(), k: 1 });
    await retriever.invoke("newsletter", { callbacks: [handler], metadata: { user_id: "alice" } });
    expect(events).toEqual(["start", "end:1"]);
  });
});
