import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInput } from "../../src/errors.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";

const make = (name: string, description: string) =>
  tool(async () => `${name} ok`, { name, description, schema: z.object({ q: z.string() }) });

const TOOLS: StructuredToolInterface[] = [
  make("reset_password", "Send a password reset link to an account's email address."),
  make("track_shipment", "Track a parcel with the carrier's tracking number."),
  make("refund_order", "Refund an order to the original payment method."),
  make("search_public_docs", "Search the published product documentation."),
];

async function setup(partitions: string[], options: Partial<ConstructorParameters<typeof ToolRouter>[0]> = {}) {
  const ledger = new Ledger(new InMemoryStore());
  for (const partition of partitions) await registerTools(ledger, TOOLS, { partition });
  const index = new ToolIndex({ ledger });
  const warnings: ToolLessonsFailure[] = [];
  const router = new ToolRouter({
    index,
    maxTools: 2,
    failureSink: (failure) => warnings.push(failure),
    ...options,
  });
  return { ledger, index, router, warnings };
}

describe("ToolRouter.invoke resolves the caller's partition from its config", () => {
  it("routes the partition named in metadata, configurable or v1 context, not a fixed one", async () => {
    // Only u:ann has tools: a call routed anywhere else falls back (and says so).
    const { router, warnings } = await setup(["u:ann"], { fallbackPartition: null });
    for (const config of [
      { metadata: { user_id: "ann" } },
      { configurable: { user_id: "ann" } },
      { context: { user_id: "ann" } },
    ]) {
      const docs = await router.invoke("I forgot my password", config);
      expect(
        docs.map((d) => d.metadata.tool),
        JSON.stringify(config),
      ).toContain("reset_password");
    }
    expect(warnings).toEqual([]);
    expect(await router.invoke("I forgot my password", { metadata: { user_id: "bob" } })).toEqual([]);
    expect(warnings.map((w) => [w.stage, w.kind, w.context])).toEqual([
      ["serve", "routing_skipped", { partition: "u:bob", reason: "no_tools" }],
    ]);
  });

  it("takes a template, and a fixed partition string as before", async () => {
    const { router } = await setup(["t:acme/u:ann", "desk"], { partition: "t:{tenant_id}/u:{user_id}" });
    expect(router.partitionFor({ metadata: { tenant_id: "acme" }, context: { user_id: "ann" } })).toBe("t:acme/u:ann");
    const docs = await router.invoke("reset my password", { configurable: { tenant_id: "acme", user_id: "ann" } });
    expect(docs[0].metadata.tool).toBe("reset_password");
    const fixed = new ToolRouter({ index: router.index, partition: "desk" });
    expect(fixed.partition).toBe("desk");
    expect(fixed.partitionFor({ metadata: { user_id: "ann" } })).toBe("desk");
    expect(() => new ToolRouter({ index: router.index, partition: "u:{user" })).toThrow(InvalidInput);
  });

  it("refuses ids that are not ids instead of guessing a partition", async () => {
    const { router } = await setup(["default"]);
    await expect(router.invoke("x", { metadata: { user_id: "" } })).rejects.toThrow(InvalidInput);
  });
});

describe("ToolRouter.route for a partition with no tools", () => {
  it("routes the fallback partition's tools and warns once per partition", async () => {
    const { router, warnings } = await setup(["default"]);
    const first = await router.route("where is my parcel", { partition: "u:nobody" });
    expect(first.offered[0].tool).toBe("track_shipment");
    expect(first.routedFrom).toBe("default");
    expect(first.skipped).toBeUndefined();
    expect(first.allSent).toBe(false);
    await router.route("refund please", { partition: "u:nobody" });
    await router.route("refund please", { partition: "u:other" });
    expect(warnings.map((w) => [w.kind, w.context])).toEqual([
      ["routing_fallback", { partition: "u:nobody", routedFrom: "default" }],
      ["routing_fallback", { partition: "u:other", routedFrom: "default" }],
    ]);
    expect(warnings[0].message).toMatch(/has no tools of its own/);
  });

  it("without a fallback (or an empty one) skips routing and says why, never silently", async () => {
    const { router, warnings } = await setup([], { fallbackPartition: "default" });
    const routed = await router.route("where is my parcel", { partition: "u:nobody", sticky: ["track_shipment"] });
    expect(routed).toMatchObject({ offered: [], tools: [], allSent: true, skipped: { reason: "no_tools" } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      kind: "routing_skipped",
      context: { reason: "no_tools", partition: "u:nobody" },
    });
  });
});

describe("ToolRouter.route degrades, never breaks", () => {
  it("sends every tool when the embeddings fail, says why by kind only, and warns once per router", async () => {
    const { router, index, warnings } = await setup(["default"]);
    await router.route("warm up the index");
    index.embedQuery = async () => {
      throw new Error("embeddings service 503 for sarah@example.com");
    };
    const routed = await router.route("where is my parcel", { sticky: ["refund_order"] });
    expect(routed).toMatchObject({
      offered: [],
      tools: [],
      allSent: true,
      sticky: ["refund_order"],
      skipped: { reason: "embeddings_failed", errorName: "Error" },
    });
    expect(JSON.stringify(routed)).not.toContain("503");
    await router.route("and again");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ stage: "serve", kind: "routing_skipped" });
    expect(warnings[0].context).toEqual({ partition: "default", reason: "embeddings_failed", errorName: "Error" });
    expect(warnings[0].message).not.toContain("sarah@example.com");
    expect(warnings[0].message).not.toContain("503");
    // Through the retriever path too: no documents, no throw.
    expect(await router.invoke("anything")).toEqual([]);
  });

  it("reports a failing vector search as index_failed", async () => {
    const { router, index } = await setup(["default"]);
    index.routeVector = async () => {
      throw new TypeError("connection reset");
    };
    const routed = await router.route("where is my parcel");
    expect(routed.skipped).toEqual({ reason: "index_failed", errorName: "TypeError" });
  });

  it("survives a warning sink that throws", async () => {
    const { router, index } = await setup(["default"], {
      failureSink: () => {
        throw new Error("sink down");
      },
    });
    index.embedQuery = async () => {
      throw new Error("down");
    };
    await expect(router.route("x")).resolves.toMatchObject({ skipped: { reason: "embeddings_failed" } });
  });
});
