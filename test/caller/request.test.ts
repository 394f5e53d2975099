import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { latestHumanTurn, messagesOf, requestIdFor } from "../../src/caller/request.js";

describe("latestHumanTurn", () => {
  it("finds the newest human message among message instances", () => {
    const messages = [
      new SystemMessage("be brief"),
      new HumanMessage({ content: "first", id: "h1" }),
      new AIMessage("ok"),
      new HumanMessage({ content: "refund my order", id: "h2" }),
      new ToolMessage({ content: "x", tool_call_id: "c" }),
    ];
    expect(latestHumanTurn(messages)).toEqual({ text: "refund my order", index: 3, id: "h2" });
  });

  it("reads every message form LangChain accepts", () => {
    expect(latestHumanTurn([{ role: "user", content: "plain" }])).toEqual({ text: "plain", index: 0 });
    expect(
      latestHumanTurn([{ type: "human", content: [{ type: "text", text: "a" }, { type: "image_url" }, "b"] }])?.text,
    ).toBe("a b");
    expect(latestHumanTurn([["user", "tuple"]])).toEqual({ text: "tuple", index: 0 });
    expect(latestHumanTurn(["bare"])).toEqual({ text: "bare", index: 0 });
    const serialized = JSON.parse(JSON.stringify(new HumanMessage({ content: "ser", id: "s1" })));
    expect(latestHumanTurn([serialized])).toEqual({ text: "ser", index: 0, id: "s1" });
    expect(latestHumanTurn([new AIMessage("no human")])).toBeUndefined();
  });

  it("takes messages from a state, a list or nothing", () => {
    expect(messagesOf({ messages: [1] })).toEqual([1]);
    expect(messagesOf([1])).toEqual([1]);
    expect(messagesOf({ other: 1 })).toBeUndefined();
  });
});

describe("requestIdFor", () => {
  it("uses the human message's id when set", () => {
    expect(requestIdFor("t1", [new HumanMessage({ content: "hi", id: "m-1" })])).toBe("m-1");
  });

  it("is a deterministic hash of thread, index and text otherwise", () => {
    const a = requestIdFor("t1", [{ role: "user", content: "hi" }]);
    expect(a).toMatch(/^r_[0-9a-f]{16}$/);
    expect(requestIdFor("t1", [{ role: "user", content: "hi" }])).toBe(a);
    expect(requestIdFor("t2", [{ role: "user", content: "hi" }])).not.toBe(a);
    expect(requestIdFor("t1", [new AIMessage("x"), { role: "user", content: "hi" }])).not.toBe(a);
    expect(requestIdFor("t1", [{ role: "user", content: "hello" }])).not.toBe(a);
    expect(requestIdFor("t1", [new AIMessage("x")])).toBeUndefined();
  });
});
