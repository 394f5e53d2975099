import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { CallRecord, ErrorClass } from "../../src/ledger/schema.js";
import type { ToolIndex } from "../../src/routing/tool-index.js";
import { maskArgs, maskText, valueFingerprints } from "../../src/text/mask.js";

/**
 * The shop the review and effect tests learn in: five order tools, and one user turn written to
 * a ledger as the recorder writes it (its route, its calls with masked arguments and value
 * fingerprints, its turn record). One copy for the review's stage tests, the manager's and the
 * effect check's.
 */

const ok = async () => "ok";

/** lookup_order, refund_order, send_email, track_parcel, cancel_order: the shop's tools. */
export const SHOP_TOOLS = [
  tool(ok, {
    name: "lookup_order",
    description: "Look up an order by its id and show its status.",
    schema: z.object({ order_id: z.string() }),
  }),
  tool(ok, {
    name: "refund_order",
    description: "Refund an order to the customer's card.",
    schema: z.object({ order_id: z.string(), amount: z.number() }),
  }),
  tool(ok, {
    name: "send_email",
    description: "Send an email to a customer.",
    schema: z.object({ to: z.string(), body: z.string() }),
  }),
  tool(ok, {
    name: "track_parcel",
    description: "Track a parcel shipment with the carrier.",
    schema: z.object({ tracking_no: z.string() }),
  }),
  tool(ok, {
    name: "cancel_order",
    description: "Cancel an order that has not shipped yet.",
    schema: z.object({ order_id: z.string() }),
  }),
];

/** These of the shop's tools, in the order named. */
export function shopTools(...names: string[]) {
  return names.map((name) => {
    const found = SHOP_TOOLS.find((t) => t.name === name);
    if (!found) throw new Error(`no shop tool ${name}`);
    return found;
  });
}

/** A tool call as the agent made it: raw arguments, and the error it got, if any. */
export interface ShopCall {
  tool: string;
  args: Record<string, unknown>;
  error?: string;
  /** @default "validation" when `error` is set */
  errorClass?: ErrorClass;
}

/** Options of one turn: its thread and how it was routed. */
export interface ShopTurnOptions {
  /** @default `thread-<n>` */
  threadId?: string;
  /** Whether routing chose the tools (false: every tool was sent, no route record). @default true when an index is given */
  routed?: boolean;
  /** The offered tools, in rank order, instead of asking the index. */
  offered?: string[];
}

/**
 * A writer of user turns for one partition: `turn(request, calls, options)` writes the turn's
 * route (asked of `index` with `k`, unless `routed` is false or no index is given), its calls
 * and its turn record, with request ids `req-<n>` and run ids `run-<n>` from `seq`.
 */
export function shopTurns(
  ledger: Ledger,
  options: {
    partition: string;
    index?: Pick<ToolIndex, "route">;
    k?: number;
    fingerprintKey?: string;
    seq?: () => number;
  },
) {
  let own = 0;
  const next = options.seq ?? (() => (own += 1));
  const { partition, index, fingerprintKey } = options;
  return async function turn(
    request: string,
    calls: ShopCall[],
    opts: ShopTurnOptions = {},
  ): Promise<{ requestId: string; calls: CallRecord[]; offered: string[] }> {
    const n = next();
    const requestId = `req-${n}`;
    const threadId = opts.threadId ?? `thread-${n}`;
    const values = calls.map((c) => c.args);
    const masked = maskText(request, values);
    let offered: string[] = [];
    if (opts.routed !== false && (index || opts.offered)) {
      const k = options.k ?? 2;
      const offers = opts.offered
        ? opts.offered.map((tool, i) => ({ tool, rank: i + 1, score: 1 - i / 10 }))
        : await index!.route(partition, request, { k });
      offered = offers.map((o) => o.tool);
      await ledger.appendRoutes([
        { partition, threadId, requestId, request: masked, offered: offers, allSent: false, k },
      ]);
    }
    const records = await ledger.appendCalls(
      calls.map((c) => ({
        partition,
        tool: c.tool,
        runId: `run-${n}`,
        threadId,
        requestId,
        request: masked,
        args: maskArgs(c.args),
        fingerprints: fingerprintKey === undefined ? [] : valueFingerprints(c.args, fingerprintKey),
        outcome: c.error === undefined ? ("success" as const) : ("error" as const),
        ...(c.error !== undefined
          ? { errorClass: c.errorClass ?? "validation", errorMessage: maskText(c.error, values) }
          : {}),
        source: "api" as const,
      })),
    );
    const servedBy = [...calls].reverse().find((c) => c.error === undefined)?.tool;
    await ledger.appendTurns([
      {
        partition,
        threadId,
        requestId,
        request: masked,
        calls: calls.map((c) => ({
          tool: c.tool,
          outcome: c.error === undefined ? ("success" as const) : ("error" as const),
          ...(c.error !== undefined ? { errorClass: c.errorClass ?? "validation" } : {}),
        })),
        ...(servedBy !== undefined ? { servedBy } : {}),
      },
    ]);
    return { requestId, calls: records, offered };
  };
}
