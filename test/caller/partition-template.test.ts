import { describe, expect, it } from "vitest";
import { InvalidInput, PartitionUnresolved } from "../../src/errors.js";
import {
  callerOf,
  partitionKey,
  partitionOf,
  partitionTemplate,
  resolveCaller,
  resolvePartition,
} from "../../src/caller/partition.js";

describe("partitionOf: one order", () => {
  it("reads each id from configurable, then v1 context, then metadata", () => {
    expect(partitionOf({ metadata: { user_id: "m" } })).toBe("u:m");
    expect(partitionOf({ configurable: { user_id: "c" } })).toBe("u:c");
    expect(partitionOf({ context: { user_id: "x" } })).toBe("u:x");
    expect(partitionOf({ metadata: { user_id: "m" }, configurable: { user_id: "c" }, context: { user_id: "x" } })).toBe(
      "u:c",
    );
    expect(partitionOf({ metadata: { user_id: "m" }, context: { user_id: "x" } })).toBe("u:x");
    expect(partitionOf({ configurable: { user_id: "c" }, context: { user_id: "x" } })).toBe("u:c");
    // Per id: a tenant only in context joins a user only in metadata.
    expect(partitionOf({ metadata: { user_id: "m" }, context: { tenant_id: "acme" } })).toBe("t:acme/u:m");
    expect(partitionOf(undefined)).toBe("default");
  });

  it("says where the answer came from", () => {
    expect(callerOf({ metadata: { thread_id: "t" } }).from).toBe("none");
    expect(callerOf({ context: { user_id: 1 } })).toEqual({ partition: "u:1", from: "ids" });
    expect(callerOf({}, () => "fixed")).toEqual({ partition: "fixed", from: "resolver" });
    expect(callerOf({ metadata: { user_id: "a" } }, () => undefined)).toEqual({ partition: "u:a", from: "ids" });
    expect(resolveCaller({ tenant_id: "acme" }, undefined, "t:{tenant_id}").from).toBe("resolver");
  });
});

describe("partitionTemplate", () => {
  it("fills each {key} from metadata, configurable or context, the same key partitionKey builds", () => {
    const template = "t:{tenant_id}/u:{user_id}";
    expect(partitionOf({ metadata: { tenant_id: "acme" }, context: { user_id: 42 } }, template)).toBe("t:acme/u:42");
    expect(partitionOf({ configurable: { tenant_id: "acme", user_id: "42" } }, template)).toBe(
      partitionKey({ tenantId: "acme", userId: "42" }),
    );
    expect(resolvePartition({ org: "o1", langgraph_user_id: "u1" }, undefined, "{org}:{langgraph_user_id}")).toBe(
      "o1:u1",
    );
    // No placeholder: one fixed partition.
    expect(partitionOf({ metadata: { user_id: "x" } }, "support-desk")).toBe("support-desk");
  });

  it("escapes values so one cannot forge another part", () => {
    const template = "t:{tenant_id}/u:{user_id}";
    const forged = partitionOf({ metadata: { tenant_id: "a/u:b", user_id: "c" } }, template);
    expect(forged).toBe("t:a%2Fu%3Ab/u:c");
    expect(forged).not.toBe(partitionOf({ metadata: { tenant_id: "a", user_id: "b/u:c" } }, template));
    expect(partitionOf({ metadata: { tenant_id: "100%", user_id: "c" } }, template)).toBe("t:100%25/u:c");
  });

  it("applies the id rules to every value", () => {
    for (const user_id of ["", "  ", null, Number.NaN, true, { a: 1 }, "a\u0007b"]) {
      expect(() => partitionOf({ metadata: { user_id } }, "u:{user_id}"), String(user_id)).toThrow(InvalidInput);
    }
  });

  it("refuses a run that lacks a named id with PartitionUnresolved, naming the key and not guessing", () => {
    let caught: unknown;
    try {
      partitionOf({ metadata: { tenant_id: "acme" } }, "t:{tenant_id}/u:{user_id}");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PartitionUnresolved);
    expect(caught).toBeInstanceOf(InvalidInput);
    expect((caught as PartitionUnresolved).context.key).toBe("user_id");
    expect(String(caught)).toMatch(/needs "user_id"/);
  });

  it("refuses a malformed template at once", () => {
    for (const bad of ["", "  ", "t:{tenant_id", "u:{user id}", "u:}x{", "{{user_id}}", "a\u0007{user_id}"]) {
      expect(() => partitionTemplate(bad), JSON.stringify(bad)).toThrow(InvalidInput);
    }
    expect(() => partitionTemplate("t:{tenant_id}/u:{user_id}")).not.toThrow();
  });
});
