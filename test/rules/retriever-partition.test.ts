import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { createRecallRulesTool } from "../../src/rules/recall-tool.js";
import { LessonRetriever } from "../../src/rules/retriever.js";
import { putRule } from "../../src/rules/store.js";

const normal = { priority: "normal", source: "programmatic" } as const;

async function seeded() {
  const ledger = new Ledger(new InMemoryStore());
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Attach invoices as PDF files." },
    { partition: "u:erin" },
  );
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Sign invoices as accounts." },
    { partition: "t:acme/u:erin" },
  );
  await putRule(ledger, { ...normal, tool: "send_email", rule: "Sign invoices as Bob." }, { partition: "u:bob" });
  return ledger;
}

const texts = (docs: { pageContent: string }[]) => docs.map((d) => d.pageContent);

describe("LessonRetriever and the recall tool resolve the caller as every piece does", () => {
  it("reads the ids from metadata, configurable or v1 context", async () => {
    const retriever = new LessonRetriever({ ledger: await seeded() });
    for (const config of [
      { metadata: { user_id: "erin" } },
      { configurable: { user_id: "erin" } },
      { context: { user_id: "erin" } },
    ]) {
      expect(texts(await retriever.invoke("email the invoice", config)), JSON.stringify(config)).toEqual([
        "Attach invoices as PDF files.",
      ]);
    }
  });

  it("takes a template, and refuses a malformed one when made", async () => {
    const ledger = await seeded();
    const retriever = new LessonRetriever({ ledger, partition: "t:{tenant_id}/u:{user_id}" });
    const docs = await retriever.invoke("sign the invoice", { context: { tenant_id: "acme", user_id: "erin" } });
    expect(texts(docs)).toEqual(["Sign invoices as accounts."]);
    expect(() => new LessonRetriever({ ledger, partition: "t:{tenant" })).toThrow(InvalidInput);
    expect(() => createRecallRulesTool({ ledger, partition: "{" })).toThrow(InvalidInput);
  });

  it("the recall tool reads the caller from v1 context", async () => {
    const recall = createRecallRulesTool({ ledger: await seeded() });
    const out = await recall.invoke({ tool: "send_email" }, { context: { user_id: "erin" } } as never);
    expect(out).toContain("Attach invoices as PDF files.");
    expect(out).not.toContain("Bob");
  });
});
