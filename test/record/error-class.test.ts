import { ToolInputParsingException } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { classifyError, cleanErrorText, errorInfo } from "../../src/record/error-class.js";

describe("classifyError", () => {
  it("classifies schema failures as validation, whatever they say", () => {
    expect(
      classifyError(new ToolInputParsingException("Received tool input did not match expected schema", "{}")),
    ).toBe("validation");
    const zodError = z.object({ n: z.number() }).safeParse({ n: "x" }).error;
    expect(classifyError(zodError)).toBe("validation");
    // What ToolNode puts in the ToolMessage when a schema check fails.
    expect(
      classifyError(
        "Error: Received tool input did not match expected schema\n\n✖ Invalid input\n Please fix your mistakes.",
      ),
    ).toBe("validation");
  });

  it.each([
    ["Order ORD-1 not found", "not_found"],
    ['Tool "refund_v2" not found.', "not_found"],
    ["customer does not exist", "not_found"],
    ["Permission denied for this account", "permission"],
    ["403 Forbidden", "permission"],
    ["Unauthorized", "permission"],
    ["Rate limit exceeded, retry later", "rate_limit"],
    ["Too Many Requests", "rate_limit"],
    ["Request timed out after 30s", "timeout"],
    ["connect ETIMEDOUT 10.0.0.1:443", "timeout"],
    ["Service Unavailable", "upstream"],
    ["request failed with status code 502", "upstream"],
    ["connect ECONNREFUSED 127.0.0.1:5432", "upstream"],
    ["date must be in YYYY-MM-DD format", "validation"],
    ["Invalid order id", "validation"],
    ["amount is required", "validation"],
    ["something odd happened", "unknown"],
  ])("%j → %s", (message, expected) => {
    expect(classifyError(new Error(message))).toBe(expected);
  });

  it("does not read an amount as a status code", () => {
    expect(classifyError(new Error("cannot ship 500 units at once"))).toBe("unknown");
  });

  it("uses numeric statuses on the error object", () => {
    expect(classifyError(Object.assign(new Error("nope"), { status: 429 }))).toBe("rate_limit");
    expect(classifyError(Object.assign(new Error("nope"), { statusCode: 404 }))).toBe("not_found");
    expect(classifyError(Object.assign(new Error("nope"), { response: { status: 503 } }))).toBe("upstream");
  });

  it("tries extra rules first", () => {
    const rules = [{ errorClass: "permission" as const, test: /account is frozen/i }];
    expect(classifyError(new Error("Account is frozen: invalid state"), rules)).toBe("permission");
    expect(classifyError(new Error("Account is frozen: invalid state"))).toBe("validation");
    const byCode = [{ errorClass: "upstream" as const, test: (e: { code?: string }) => e.code === "E_BACKEND" }];
    expect(classifyError(Object.assign(new Error("x"), { code: "E_BACKEND" }), byCode)).toBe("upstream");
  });

  it("is not tripped by a global regular expression's lastIndex", () => {
    const rules = [{ errorClass: "timeout" as const, test: /slow/g }];
    expect(classifyError("too slow", rules)).toBe("timeout");
    expect(classifyError("too slow", rules)).toBe("timeout");
  });
});

describe("errorInfo", () => {
  it("reads content strings, content parts and errors", () => {
    expect(errorInfo("Error: boom\n Please fix your mistakes.")).toEqual({ name: "Error", message: "boom" });
    expect(errorInfo([{ type: "text", text: "Error: part one" }, "two"]).message).toBe("part one two");
    expect(errorInfo(Object.assign(new TypeError("bad"), { code: "E1" }))).toEqual({
      name: "TypeError",
      message: "bad",
      code: "E1",
    });
  });

  it("cleans ToolNode's wrapping and collapses whitespace", () => {
    expect(cleanErrorText("Error: a\n\n  b\n Please fix your mistakes.")).toBe("a b");
  });

  it("reads a schema refusal the same from createAgent's tool node as from LangGraph's ToolNode", () => {
    const message = "Received tool input did not match expected schema\n\n✖ Invalid input\n  → at order_id";
    const graph = `Error: ${message}\n Please fix your mistakes.`;
    // langchain's createAgent: the arguments as JSON (a value may hold the joining words) and the stack.
    const agent =
      `Error invoking tool 'lookup_order' with kwargs {"order_id":95,"note":"} with error: {x"} with error: ` +
      `Error: ${message}\n    at DynamicStructuredTool.call (file:///app/node_modules/@langchain/core/dist/tools/index.js:113:10)` +
      "\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)" +
      "\n    at async Promise.all (index 0)\n Please fix the error and try again.";
    const expected = "Received tool input did not match expected schema ✖ Invalid input → at order_id";
    expect(cleanErrorText(graph)).toBe(expected);
    expect(cleanErrorText(agent)).toBe(expected);
    expect(classifyError(agent)).toBe("validation");
  });

  it("cuts an error's stack where it begins, in an Error's message, a ToolMessage's text or a joined line", () => {
    const error = new TypeError("order ORD-1 is archived");
    expect(errorInfo(error.stack)).toEqual({ name: "TypeError", message: "order ORD-1 is archived" });
    expect(errorInfo(new Error(`wrapped: ${error.stack}`)).message).toBe("wrapped: TypeError: order ORD-1 is archived");
    expect(errorInfo([{ type: "text", text: String(error.stack) }]).message).toBe("order ORD-1 is archived");
    expect(cleanErrorText("boom at run (/srv/app/tool.js:12:7) at next (/srv/app/x.js:1:1)")).toBe("boom");
    expect(cleanErrorText("boom\n    at Array.map (<anonymous>)\n    at <anonymous>")).toBe("boom");
  });

  it("keeps a message's own 'at' that is no stack frame", () => {
    expect(cleanErrorText("Meet at noon (UTC)\n  at the front desk (left)")).toBe(
      "Meet at noon (UTC) at the front desk (left)",
    );
    expect(cleanErrorText("✖ Expected string\n  → at order_id")).toBe("✖ Expected string → at order_id");
  });
});
