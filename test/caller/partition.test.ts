import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { partitionKey, resolvePartition } from "../../src/caller/partition.js";

describe("partitionKey", () => {
  it("is 'default' when empty, else the present parts in a fixed order", () => {
    expect(partitionKey({})).toBe("default");
    expect(partitionKey()).toBe("default");
    expect(partitionKey({ userId: "42" })).toBe("u:42");
    expect(partitionKey({ agentId: "desk", tenantId: "acme", userId: "42" })).toBe("t:acme/u:42/a:desk");
    expect(partitionKey({ tenantId: "acme", agentId: "desk" })).toBe("t:acme/a:desk");
    expect(() => partitionKey({ tenantId: "  " })).toThrow(InvalidInput);
  });

  it("keeps parts unambiguous", () => {
    expect(partitionKey({ tenantId: "a/u:b" })).toBe("t:a%2Fu%3Ab");
    expect(partitionKey({ tenantId: "a/u:b" })).not.toBe(partitionKey({ tenantId: "a", userId: "b" }));
  });
});

describe("resolvePartition", () => {
  it("reads tenant_id, user_id, agent_id from configurable first, then metadata", () => {
    expect(resolvePartition({ user_id: "42", thread_id: "t" })).toBe("u:42");
    expect(resolvePartition({ user_id: 42 })).toBe("u:42");
    expect(resolvePartition({ user_id: "42" }, { user_id: "7", tenant_id: "acme" })).toBe("t:acme/u:7");
    expect(resolvePartition({ user_id: "42", tenant_id: "evil" }, { user_id: "7" })).toBe("t:evil/u:7");
    expect(resolvePartition({}, { agent_id: "desk" })).toBe("a:desk");
    expect(resolvePartition({})).toBe("default");
    expect(resolvePartition({ user_id: undefined })).toBe("default");
  });

  it("refuses what is not an id, naming the key and never the value", () => {
    for (const value of [
      "",
      " ",
      null,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      7n,
      { nested: 1 },
      ["x"],
      "a\u0007b",
      "\uDC00",
    ]) {
      expect(() => resolvePartition({ user_id: value }), String(value)).toThrow(InvalidInput);
    }
    expect(() => resolvePartition({ tenant_id: { secret: "Margaret Whitfield" } })).toThrow(/"tenant_id" is a object/);
    try {
      resolvePartition({ user_id: { secret: "Margaret Whitfield" } });
    } catch (error) {
      expect(String(error)).not.toContain("Margaret");
    }
    expect(() => resolvePartition({}, undefined, () => "  ")).toThrow(InvalidInput);
  });

  it("never merges two different non-blank ids", () => {
    const ids = ["acme", " acme", "acme ", "Acme", "ａｃｍｅ", "ac\u200bme"];
    const keys = ids.map((tenant_id) => resolvePartition({ tenant_id }));
    expect(new Set(keys).size).toBe(ids.length);
    expect(resolvePartition({ user_id: 42 })).toBe(resolvePartition({ user_id: "42" }));
  });

  it("lets a resolver decide, falling back to the ids when it returns nothing", () => {
    expect(resolvePartition({ user_id: "42" }, undefined, () => "team-blue")).toBe("team-blue");
    expect(resolvePartition({ org: "acme" }, undefined, ({ metadata }) => ({ tenantId: String(metadata.org) }))).toBe(
      "t:acme",
    );
    expect(resolvePartition({ user_id: "42" }, undefined, () => undefined)).toBe("u:42");
  });
});
