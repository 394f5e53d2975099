import { expect } from "vitest";
import type { Ledger } from "../../src/ledger/ledger.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { shopTools, shopTurns } from "../helpers/shop-world.js";

/**
 * A world for measuring a lesson's effect: lookup_order is refused for an id without its prefix
 * in half its calls; `learnAndApply` has a review propose a note and applies it; `lookup` writes
 * the traffic after it (refused again, or not), as the recorder writes it.
 */
export const P = "default";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function effectWorld(ledger: Ledger) {
  await registerTools(ledger, shopTools("lookup_order", "track_parcel"));
  const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
  // Not routed (no index): every tool sent, as a graph without routing would.
  const turn = shopTurns(ledger, { partition: P });
  let seq = 0;
  /** One turn of lookup_order: refused first (an id without its prefix) when `refused`, then right. */
  async function lookup(refused: boolean): Promise<void> {
    seq += 1;
    const id = String(48000 + seq);
    await turn(`where is order ${id}?`, [
      ...(refused
        ? [{ tool: "lookup_order", args: { order_id: id }, error: `order_id must start with ORD-: got ${id}` }]
        : []),
      { tool: "lookup_order", args: { order_id: `ORD-${id}` } },
    ]);
  }
  /** Twelve refused turns (24 calls, half refused), reviewed and applied. */
  async function learnAndApply() {
    for (let i = 0; i < 12; i++) await lookup(true);
    const review = await manager.review();
    const [revision] = review.revisions.filter((r) => r.tool === "lookup_order");
    expect(revision.baseline).toMatchObject([
      { target: { kind: "failure", errorClass: "validation" }, before: { opportunities: 24, events: 12 } },
    ]);
    await sleep(3);
    const applied = await manager.apply(revision.id, { partition: P, approvedBy: "ops" });
    await sleep(3);
    return applied;
  }
  return { ledger, manager, lookup, learnAndApply };
}
