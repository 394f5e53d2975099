import type { ArgShape, CallRecord, RouteRecord, ToolCard, TurnRecord } from "../../src/ledger/schema.js";

let seq = 0;
const nextId = (prefix: string): string => `${prefix}${String(++seq).padStart(6, "0")}`;

export function resetIds(): void {
  seq = 0;
}

export function call(
  tool: string,
  outcome: "success" | "error",
  args: ArgShape[] = [],
  extra: Partial<CallRecord> = {},
): CallRecord {
  return {
    v: 1,
    id: extra.id ?? nextId("c"),
    partition: "p",
    tool,
    runId: "run",
    args,
    fingerprints: [],
    outcome,
    source: "callback",
    at: 0,
    ...extra,
  };
}

export const str = (name: string, shape: string): ArgShape => ({ name, kind: "string", shape });
export const num = (name: string): ArgShape => ({ name, kind: "number", shape: "<number>" });

export function turn(
  requestId: string,
  request: string,
  calls: { tool: string; outcome?: "success" | "error" }[],
  extra: Partial<TurnRecord> = {},
): TurnRecord {
  const full = calls.map((c) => ({ tool: c.tool, outcome: c.outcome ?? "success" }));
  const served = [...full].reverse().find((c) => c.outcome === "success")?.tool;
  return {
    v: 1,
    id: extra.id ?? nextId("t"),
    partition: "p",
    threadId: "th1",
    requestId,
    request,
    calls: full,
    ...(served !== undefined ? { servedBy: served } : {}),
    at: 0,
    ...extra,
  };
}

export function route(requestId: string, offered: string[], extra: Partial<RouteRecord> = {}): RouteRecord {
  return {
    v: 1,
    id: extra.id ?? nextId("r"),
    partition: "p",
    threadId: "th1",
    requestId,
    request: "",
    offered: offered.map((tool, i) => ({ tool, rank: i + 1, score: 1 - i / 10 })),
    allSent: false,
    k: offered.length,
    at: 0,
    ...extra,
  };
}

export function card(
  name: string,
  learned: Partial<ToolCard["learned"]> = {},
  description = `The ${name} tool.`,
): ToolCard {
  return {
    v: 1,
    partition: "p",
    name,
    author: { description, argNames: [], schema: null },
    augmented: null,
    learned: { examples: [], notes: [], notFor: [], exampleCall: null, ...learned },
    version: 1,
    createdAt: 0,
    updatedAt: 0,
  };
}
