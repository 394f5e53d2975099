import { describe, expect, it } from "vitest";
import { usageFlags } from "../../src/routing/usage-flags.js";
import type { RouteRecord } from "../../src/ledger/schema.js";
import { DEFAULT_SETTINGS } from "../../src/settings.js";

let n = 0;
function route(offered: string[], options: { allSent?: boolean; requestId?: string; at?: number } = {}): RouteRecord {
  n += 1;
  return {
    v: 1,
    id: `route-${n}`,
    partition: "default",
    requestId: options.requestId ?? `req-${n}`,
    request: "some request",
    offered: offered.map((tool, i) => ({ tool, rank: i + 1, score: 1 - i / 10 })),
    allSent: options.allSent ?? false,
    k: 3,
    at: options.at ?? n,
  };
}

const times = <T>(count: number, make: () => T): T[] => Array.from({ length: count }, make);

describe("usageFlags", () => {
  it("flags a tool offered in minOffers routed turns and never called", () => {
    const routes = [...times(5, () => route(["set_rvf", "lookup"])), ...times(3, () => route(["lookup"]))];
    const flags = usageFlags({ routes, calls: [{ tool: "lookup" }], tools: ["set_rvf", "lookup"] });
    expect(flags).toEqual([
      { tool: "set_rvf", flag: "retrieved_never_called", offeredTurns: 5, calls: 0, routedTurns: 8 },
    ]);
  });

  it("does not flag below minOffers, or once the tool was called", () => {
    const four = times(4, () => route(["set_rvf"]));
    expect(usageFlags({ routes: four, tools: ["set_rvf"] })).toEqual([]);
    const five = times(5, () => route(["set_rvf"]));
    expect(usageFlags({ routes: five, calls: [{ tool: "set_rvf" }], tools: ["set_rvf"] })).toEqual([]);
    expect(
      usageFlags({ routes: five, turns: [{ calls: [{ tool: "set_rvf", outcome: "error" }] }], tools: ["set_rvf"] }),
    ).toEqual([]);
  });

  it("flags a tool never offered and never called over minTurns routed turns", () => {
    const nineteen = times(19, () => route(["lookup"]));
    expect(usageFlags({ routes: nineteen, tools: ["request_cat_export"] })).toEqual([]);
    const twenty = [...nineteen, route(["lookup"])];
    expect(
      usageFlags({ routes: twenty, calls: [{ tool: "lookup" }], tools: ["request_cat_export", "lookup"] }),
    ).toEqual([{ tool: "request_cat_export", flag: "never_retrieved", offeredTurns: 0, calls: 0, routedTurns: 20 }]);
  });

  it("counts nothing on turns where every tool was sent", () => {
    const allSent = times(50, () => route(["set_rvf", "request_cat_export"], { allSent: true }));
    expect(usageFlags({ routes: allSent, tools: ["set_rvf", "request_cat_export", "idle"] })).toEqual([]);
    const mixed = [...allSent, ...times(4, () => route(["set_rvf"]))];
    expect(usageFlags({ routes: mixed, tools: ["set_rvf"] })).toEqual([]);
  });

  it("counts a request routed several times as one turn", () => {
    const routes = times(6, () => route(["set_rvf"], { requestId: "same" }));
    expect(usageFlags({ routes, tools: ["set_rvf"] })).toEqual([]);
  });

  it("honours the settings and when each tool was registered", () => {
    const routes = times(10, () => route(["lookup"]));
    const settings = { ...DEFAULT_SETTINGS, minTurns: 10, minOffers: 2 };
    expect(usageFlags({ routes, tools: ["new_tool"], settings })).toHaveLength(1);
    const registeredAt = { new_tool: routes[5].at };
    expect(usageFlags({ routes, tools: ["new_tool"], settings, registeredAt })).toEqual([]);
    expect(usageFlags({ routes, tools: ["lookup"], settings })[0]).toMatchObject({
      flag: "retrieved_never_called",
      offeredTurns: 10,
    });
  });

  it("reports the larger call count when calls and turns disagree, and flags only listed tools", () => {
    const routes = times(5, () => route(["a", "b"]));
    expect(
      usageFlags({ routes, calls: [], turns: [{ calls: [{ tool: "a", outcome: "success" }] }], tools: ["a"] }),
    ).toEqual([]);
    expect(usageFlags({ routes, tools: ["b"] }).map((f) => f.tool)).toEqual(["b"]);
  });
});
