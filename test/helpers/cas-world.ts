/**
 * A small world for the race tests: one registered tool, a proposed revision of it, or failed
 * calls a review turns into one. Used in-process (test/ledger/cas.test.ts) and by the child
 * processes of test/ledger/race.int.test.ts (test/helpers/cas-child.ts).
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { timeOrderedId } from "../../src/ledger/keys.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { Revision } from "../../src/ledger/schema.js";
import { LessonManager, type LessonManagerOptions } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { maskArgs, maskText, valueFingerprints } from "../../src/text/mask.js";
import { proposeRevision } from "./propose-example.js";

export const P = "default";
export const TOOL = "lookup_order";

const lookupOrder = tool(async () => "ok", {
  name: TOOL,
  description: "Look up an order by its id and show its status.",
  schema: z.object({ order_id: z.string() }),
});

/** Register the tool (its card at version 1). */
export async function seedTool(ledger: Ledger): Promise<void> {
  await registerTools(ledger, [lookupOrder]);
}

/** A proposed revision of the tool adding one note, against its card as it is now. */
export function seedProposed(ledger: Ledger, note = "Pass order ids with their ORD- prefix."): Promise<Revision> {
  return proposeRevision(ledger, P, TOOL, { notesAdded: [note] });
}

/** `n` calls of the tool refused for an id without its prefix, as the recorder writes them. */
export async function seedFailures(ledger: Ledger, n = 3): Promise<void> {
  const key = await ledger.fingerprintKey(P);
  for (let i = 0; i < n; i++) {
    const id = String(48210 + i);
    const args = { order_id: id };
    const request = maskText(`where is order ${id}?`, [args]);
    const requestId = `req-${timeOrderedId()}`;
    await ledger.appendCalls([
      {
        partition: P,
        tool: TOOL,
        runId: `run-${requestId}`,
        threadId: `thread-${requestId}`,
        requestId,
        request,
        args: maskArgs(args),
        fingerprints: valueFingerprints(args, key),
        outcome: "error",
        errorClass: "validation",
        errorMessage: maskText(`order_id must start with ORD-: got ${id}`, [args]),
        source: "api",
      },
    ]);
    await ledger.appendTurns([
      {
        partition: P,
        threadId: `thread-${requestId}`,
        requestId,
        request,
        calls: [{ tool: TOOL, outcome: "error", errorClass: "validation" }],
      },
    ]);
  }
}

/** A manager over the ledger with the default in-memory index. */
export function managerOver(ledger: Ledger, options: Partial<LessonManagerOptions> = {}): LessonManager {
  return new LessonManager({ ledger, index: new ToolIndex({ ledger }), ...options });
}
