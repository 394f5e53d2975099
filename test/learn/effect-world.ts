import { tool } from "@langchain/core/tools";
import { expect } from "vitest";
import { z } from "zod";
import type { Ledger } from "../../src/ledger/ledger.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { maskArgs, maskText } from "../../src/text/mask.js";

/**
 * A world for measuring a lesson's effect: lookup_order is refused for an id without its prefix
 * in half its calls; `learnAndApply` has a review propose a note and applies it; `lookup` writes
 * the traffic after it (refused again, or not), as the recorder writes it.
 */
export const P = "default";
const ok = async () => "ok";
const TOOLS = [
  tool(ok, {
    name: "lookup_order",
    description: "Look up an order by its id and show its status.",
    schema: z.object({ order_id: z.string() }),
  }),
  tool(ok, {
    name: "track_parcel",
    description: "Track a parcel shipment with the carrier.",
    schema: z.object({ tracking_no: z.string() }),
  }),
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function effectWorld(ledger: Ledger) {
  await registerTools(ledger, TOOLS);
  const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
  let seq = 0;
  /** One turn of lookup_order: refused first (an id without its prefix) when `refused`, then right. */
  async function lookup(refused: boolean): Promise<void> {
    seq += 1;
    const id = String(48000 + seq);
    const requestId = `req-${seq}`;
    const threadId = `thread-${seq}`;
    const request = maskText(`where is order ${id}?`, [{ order_id: id }]);
    const calls: { args: { order_id: string }; error?: string }[] = [
      ...(refused ? [{ args: { order_id: id }, error: `order_id must start with ORD-: got ${id}` }] : []),
      { args: { order_id: `ORD-${id}` } },
    ];
    await ledger.appendCalls(
      calls.map((c) => ({
        partition: P,
        tool: "lookup_order",
        runId: `run-${seq}`,
        threadId,
        requestId,
        request,
        args: maskArgs(c.args),
        fingerprints: [],
        outcome: c.error !== undefined ? ("error" as const) : ("success" as const),
        ...(c.error !== undefined
          ? { errorClass: "validation" as const, errorMessage: maskText(c.error, [c.args]) }
          : {}),
        source: "api" as const,
      })),
    );
    await ledger.appendTurns([
      {
        partition: P,
        threadId,
        requestId,
        request,
        calls: calls.map((c) =>
          c.error !== undefined
            ? { tool: "lookup_order", outcome: "error" as const, errorClass: "validation" as const }
            : { tool: "lookup_order", outcome: "success" as const },
        ),
        servedBy: "lookup_order",
      },
    ]);
  }
  /** Twelve refused turns (24 calls, half refused), reviewed and applied. */
  async function learnAndApply() {
    for (let i = 0; i < 12; i++) await lookup(true);
    const review = await manager.review();
    const [revision] = review.revisions.filter((r) => r.tool === "lookup_order");
    expect(revision.baseline).toEqual([
      { target: { kind: "failure", errorClass: "validation" }, before: { opportunities: 24, events: 12 } },
    ]);
    await sleep(3);
    const applied = await manager.apply(revision.id, { approvedBy: "ops" });
    await sleep(3);
    return applied;
  }
  return { ledger, manager, lookup, learnAndApply };
}
