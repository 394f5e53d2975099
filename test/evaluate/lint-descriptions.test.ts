import { describe, expect, it } from "vitest";
import {
  findingLine,
  LINT_RULES,
  type LintFinding,
  lintCard,
  lintDescriptions,
  type LintRule,
  nearNeighbours,
} from "../../src/evaluate/lint-descriptions.js";
import { firstClause } from "../../src/evaluate/lint-text.js";
import { InvalidInput } from "../../src/errors.js";
import { cardFromTool, type ToolSource } from "../../src/ledger/cards.js";
import { ScriptedChatModel } from "../helpers/record-agent.js";
import { AIMessage } from "@langchain/core/messages";
import { BAD_TOOLS, GOOD_TOOLS } from "./lint-fixtures.js";

const bad = (name: string): ToolSource => BAD_TOOLS.find((t) => t.name === name)!;
const good = (name: string): ToolSource => GOOD_TOOLS.find((t) => t.name === name)!;

/** The findings of one tool alone (no neighbours), by the deterministic rules. */
const alone = (tool: ToolSource, rules?: readonly LintRule[]): LintFinding[] =>
  lintCard(cardFromTool(tool, "t"), { neighbours: [], ...(rules ? { rules } : {}) });
const rulesOf = (findings: readonly LintFinding[]): string[] => [...new Set(findings.map((f) => f.rule))];

describe("the description linter", () => {
  it("seed 002's rewrites, in our words, pass every rule, neighbours included", async () => {
    const report = await lintDescriptions(GOOD_TOOLS);
    expect(report.findings).toEqual([]);
    expect(report.failing).toBe(0);
    expect(Object.values(report.counts)).toEqual(LINT_RULES.map(() => 0));
    // The pairs are near neighbours by routing similarity; their boundary sentences name each other.
    expect(report.neighbours.search_public_docs.map((n) => n.tool)).toEqual(["search_internal_runbooks"]);
    expect(report.neighbours.run_analytics_query.map((n) => n.tool)).toEqual(["get_account"]);
  });

  it("boundary: the ambiguous pair, near by the router's similarity, names no sibling", async () => {
    const report = await lintDescriptions([bad("search_docs"), bad("search_kb"), bad("archive_project")]);
    const boundary = report.findings.filter((f) => f.rule === "boundary");
    expect(boundary.map((f) => f.tool)).toEqual(["search_docs", "search_kb"]);
    expect(boundary[0].problem).toMatch(
      /^routing finds it close to search_kb \(0\.\d\d\), and no sentence says when to use that one instead\.$/,
    );
    expect(boundary[0].fix).toContain("use search_kb for that");
    expect(report.counts.boundary).toBe(2);
    // A boundary sentence naming the sibling settles it.
    const fixed = {
      ...bad("search_docs"),
      description: "Search the documentation. Returns 5 pages. For the knowledge base, use search_kb instead.",
    };
    const again = await lintDescriptions([fixed, bad("search_kb")]);
    expect(again.findings.filter((f) => f.rule === "boundary").map((f) => f.tool)).toEqual(["search_kb"]);
    // The docstring copy next to the tool it should point at needs a boundary too.
    const pair = await lintDescriptions([bad("query_db"), good("get_account")], { minNeighbourSimilarity: 0.1 });
    expect(pair.findings.find((f) => f.tool === "query_db")?.rule).toBe("boundary");
    expect(rulesOf(alone(bad("query_db")))).toEqual([]);
  });

  it("neighbours come from the router: an index with its own options finds them", async () => {
    const { neighbours } = await nearNeighbours([bad("search_docs"), bad("search_kb"), bad("archive_project")], {
      minNeighbourSimilarity: 0,
    });
    expect(neighbours.get("search_docs")![0].tool).toBe("search_kb");
    expect(neighbours.get("search_docs")![0].similarity).toBeGreaterThan(neighbours.get("search_docs")![1].similarity);
    const narrow = await nearNeighbours([bad("search_docs"), bad("search_kb")], { minNeighbourSimilarity: 0.99 });
    expect(narrow.neighbours.get("search_docs")).toEqual([]);
  });

  it("constraints-in-prose: a format, a prefix, an enum and a range stated in words", () => {
    const found = alone(bad("list_orders"));
    expect(found.map((f) => [f.where, f.problem.split(" that the schema")[0]])).toEqual([
      [
        "description",
        'states a format in prose ("ISO 8601" in "The date should be ISO 8601 and the customer id must start with cus_.")',
      ],
      [
        "description",
        'states a prefix or pattern in prose ("must start with" in "The date should be ISO 8601 and the customer id must start with cus_.")',
      ],
      [
        "description",
        `states a set of allowed values in prose ("one of" in "The status must be one of 'open', 'shipped' or 'returned'.")`,
      ],
      ["parameter limit", 'states a range or length limit in prose ("At most 50." in "At most 50.")'],
    ]);
    expect(found.every((f) => f.rule === "constraints-in-prose")).toBe(true);
    // The same words with the schema saying it: quiet.
    const said = {
      ...bad("list_orders"),
      schema: {
        type: "object",
        properties: {
          date: { type: "string", format: "date" },
          customer_id: { type: "string", pattern: "^cus_" },
          status: { type: "string", enum: ["open", "shipped", "returned"] },
          limit: { type: "integer", maximum: 50, description: "At most 50." },
        },
      },
    };
    expect(alone(said)).toEqual([]);
    // The fix offers the prefix the prose names.
    const order = {
      name: "get_order_status",
      description: "Returns an order's status. The order id must start with ord_.",
      schema: { type: "object", properties: { order_id: { type: "string" } } },
    };
    expect(alone(order)[0].fix).toContain('"^ord_[A-Za-z0-9]+$"');
    // A cap on what it returns is not an argument constraint.
    expect(
      alone({
        name: "search_news",
        description: "Returns up to 10 articles.",
        schema: { type: "object", properties: { topic: { type: "string" } } },
      }),
    ).toEqual([]);
  });

  it("vague-parameter: arg1 and data; a bare email where a customer and an agent both have one", () => {
    expect(alone(bad("lookup_record")).map((f) => [f.rule, f.where])).toEqual([
      ["vague-parameter", "parameter arg1"],
      ["vague-parameter", "parameter data"],
    ]);
    const [email] = alone(bad("email_customer"));
    expect(email).toMatchObject({ rule: "vague-parameter", where: "parameter email" });
    expect(email.fix).toContain("customer_email");
    const renamed = {
      ...bad("email_customer"),
      schema: {
        type: "object",
        properties: { customer_email: { type: "string" }, subject: { type: "string" }, body_text: { type: "string" } },
      },
    };
    expect(alone(renamed)).toEqual([]);
    // One kind of person only: a bare email is clear; next to support_email it is not.
    const one = {
      name: "subscribe_newsletter",
      description: "Subscribes a reader to the newsletter. Returns the subscription id.",
      schema: { type: "object", properties: { email: { type: "string" } } },
    };
    expect(alone(one)).toEqual([]);
    const two = {
      ...one,
      schema: { type: "object", properties: { email: { type: "string" }, support_email: { type: "string" } } },
    };
    expect(alone(two).map((f) => f.problem)).toEqual([expect.stringContaining('next to parameter "support_email"')]);
  });

  it("no-return: nothing on what comes back", () => {
    expect(alone(bad("search_kb"))).toEqual([expect.objectContaining({ rule: "no-return", where: "description" })]);
    expect(alone(good("search_internal_runbooks"))).toEqual([]);
  });

  it("side-effect-late: a charge hidden in a parameter, a delete in the second sentence", () => {
    const [charge] = alone(bad("update_subscription"));
    expect(charge.rule).toBe("side-effect-late");
    expect(charge.problem).toBe(
      `it charges, but the first clause ("Update a customer's subscription.") does not say so: charges (from parameter prorate).`,
    );
    const [deletes] = alone(bad("archive_project"));
    expect(deletes.problem).toContain('deletes (from "Deletes it with all its files.")');
    // Said first: quiet. Said as not done ("Writes are rejected", "never"): not a side effect.
    expect(
      alone({
        ...bad("archive_project"),
        description: "Deletes a project and all its files; this cannot be undone. Returns nothing.",
      }),
    ).toEqual([]);
    expect(alone(good("run_analytics_query"))).toEqual([]);
    expect(alone(good("change_subscription_plan"))).toEqual([]);
    // A boundary sentence speaks of the sibling's side effect, not this tool's.
    expect(
      alone({
        name: "create_ticket",
        description:
          "Creates a helpdesk ticket. For sending the customer a message now, use send_email instead. Returns the ticket number.",
        schema: null,
      }),
    ).toEqual([]);
    // A read tool's name is no side effect ("get_" then a noun).
    expect(
      alone({ name: "get_payment", description: "Look up one payment. Returns its amount and status.", schema: null }),
    ).toEqual([]);
    expect(firstClause("IRREVERSIBLE BILLING CHANGE: moves a customer. Then more.")).toBe(
      "IRREVERSIBLE BILLING CHANGE: moves a customer.",
    );
    // Irreversibility said late counts too.
    const late = alone({
      ...bad("archive_project"),
      description: "Deletes a project and all its files. This cannot be undone. Returns nothing.",
    });
    expect(late.map((f) => f.problem)).toEqual([expect.stringContaining("it is irreversible, but the first clause")]);
    expect(late[0].fix).toContain('"IRREVERSIBLE: …"');
  });

  it("mode-switch: an action parameter with three jobs; a type of thing is not a mode", () => {
    const [mode] = alone(bad("manage_ticket"));
    expect(mode).toMatchObject({ rule: "mode-switch", where: "parameter action" });
    expect(mode.problem).toContain("3 jobs (create, update, close)");
    expect(mode.fix).toContain("manage_ticket_create, manage_ticket_update, manage_ticket_close");
    const kinds = {
      name: "find_documents",
      description: "Finds documents by kind. Returns 10 titles.",
      schema: { type: "object", properties: { type: { type: "string", enum: ["invoice", "receipt", "contract"] } } },
    };
    expect(alone(kinds)).toEqual([]);
    const verbs = {
      ...kinds,
      schema: { type: "object", properties: { type: { type: "string", enum: ["create", "delete"] } } },
    };
    expect(rulesOf(alone(verbs))).toContain("mode-switch");
  });

  it("every bad tool fails a rule, and the count per rule is of tools", async () => {
    const report = await lintDescriptions(BAD_TOOLS);
    expect(report.tools).toBe(BAD_TOOLS.length);
    const failing = new Set(report.findings.map((f) => f.tool));
    expect([...failing].sort()).toEqual(
      BAD_TOOLS.map((t) => t.name)
        .filter((n) => n !== "query_db")
        .sort(),
    );
    expect(report.counts).toEqual({
      boundary: 2,
      "constraints-in-prose": 1,
      "vague-parameter": 2,
      "no-return": 2,
      "side-effect-late": 2,
      "mode-switch": 1,
    });
    // Deterministic: the same tools give the same report.
    expect(await lintDescriptions(BAD_TOOLS)).toEqual(report);
    expect(findingLine(report.findings[0])).toMatch(
      /^search_docs: boundary: description: routing finds it close to search_kb .* Fix: add a boundary/,
    );
  });

  it("checks only the rules asked for; refuses an unknown one", async () => {
    const report = await lintDescriptions(BAD_TOOLS, { rules: ["mode-switch"] });
    expect(report.findings.map((f) => f.tool)).toEqual(["manage_ticket"]);
    await expect(lintDescriptions(BAD_TOOLS, { rules: ["nope" as LintRule] })).rejects.toThrow(InvalidInput);
    await expect(lintDescriptions([])).rejects.toThrow(InvalidInput);
  });

  it("a chat model gives a second opinion, checked like any reply; one that does not fit is a note", async () => {
    const model = new ScriptedChatModel((messages) => {
      const asked = JSON.parse(String(messages[1].content)) as { name: string };
      if (asked.name === "get_account")
        return new AIMessage(
          '```json\n{"findings": [{"rule": "no-return", "problem": "Vague on fields.", "fix": "List the fields."}]}\n```',
        );
      if (asked.name === "search_public_docs")
        return new AIMessage('{"findings": [{"rule": "tone", "problem": "x", "fix": "y"}]}');
      if (asked.name === "search_internal_runbooks") return new AIMessage("Looks fine to me!");
      return new AIMessage('{"findings": []}');
    });
    const report = await lintDescriptions(GOOD_TOOLS, { model });
    expect(report.findings).toEqual([
      {
        tool: "get_account",
        rule: "no-return",
        where: "description",
        problem: "Vague on fields.",
        fix: "List the fields.",
        source: "model",
      },
    ]);
    expect(findingLine(report.findings[0])).toBe(
      "get_account: no-return (model): description: Vague on fields. Fix: List the fields.",
    );
    expect(report.modelNotes).toEqual([
      expect.stringMatching(/^search_public_docs: the model's reply does not fit \(findings\.0\.rule: /),
      "search_internal_runbooks: the model's reply is not a JSON object; ignored.",
    ]);
  });
});
