import type { BaseStore, Operation } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidInput, NotFound, RevisionConflict } from "../../src/errors.js";
import { type Collection, DEFAULT_NAMESPACE_ROOT, encodeLabel, timeOrderedId } from "../../src/ledger/keys.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { Ledger, type LedgerOptions } from "../../src/ledger/ledger.js";
import type {
  CallRecord,
  EvaluatedCall,
  Guideline,
  NewRecord,
  Revision,
  RevisionStatus,
  RouteRecord,
  ToolCard,
  TurnRecord,
} from "../../src/ledger/schema.js";
import { DEFAULT_SETTINGS, type SettingsInput } from "../../src/settings.js";

/** A store for one test, and how to dispose of it. */
export interface ContractStore {
  store: BaseStore;
  cleanup(): Promise<void>;
}

const ROOT = DEFAULT_NAMESPACE_ROOT;

/**
 * Names that look alike to a string-prefix match (`p1`/`p10`, `a`/`ab`), that are SQL `LIKE`
 * wildcards (`%`, `_`), that stores refuse in labels (`.`, `:`), that our own encoding uses
 * (`~`, `%2E`), that look like the ledger's metadata label, and non-ASCII text.
 */
const TRICKY_PARTITIONS = ["p1", "p10", "p%", "p_1", "p.1", "p:1", "p/1", "p%2E1", "p~2E1", "_meta", "~meta", "ünï 😀"];
const TRICKY_TOOLS = ["a", "ab", "a_b", "a%", "a.b", "a:b", "a/b", "server.tool/x", "~", "名前"];

function call(partition: string, tool: string, extra: Partial<NewRecord<CallRecord>> = {}): NewRecord<CallRecord> {
  return {
    partition,
    tool,
    runId: "run",
    args: [{ name: "id", kind: "string", shape: "ORD-####" }],
    fingerprints: ["f1"],
    outcome: "success",
    source: "callback",
    ...extra,
  };
}

function turn(partition: string, requestId: string, extra: Partial<NewRecord<TurnRecord>> = {}): NewRecord<TurnRecord> {
  return { partition, requestId, request: `request ${requestId}`, calls: [], ...extra };
}

function route(partition: string, requestId: string): NewRecord<RouteRecord> {
  return {
    partition,
    requestId,
    request: `request ${requestId}`,
    offered: [{ tool: "search", rank: 1, score: 0.9 }],
    allSent: false,
    k: 5,
  };
}

/** A card as registration would write it. */
export function card(partition: string, name: string, overrides: Partial<ToolCard> = {}): ToolCard {
  return {
    v: 1,
    partition,
    name,
    author: { description: `Does ${name}.`, argNames: ["id"], schema: null },
    augmented: null,
    learned: { examples: [], notes: [], notFor: [], exampleCall: null },
    version: 1,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

/** A revision with one usage note. */
export function revision(
  partition: string,
  tool: string,
  status: RevisionStatus,
  id = timeOrderedId(),
  overrides: Partial<Revision> = {},
): Revision {
  return {
    v: 1,
    id,
    partition,
    tool,
    status,
    notesAdded: ["Pass ids with their ORD- prefix."],
    queriesAdded: [],
    avoidAdded: [],
    callExample: null,
    queriesWithdrawn: [],
    displaced: [],
    queriesDisplaced: [],
    evidence: [],
    ranks: [],
    refused: [],
    proposer: "deterministic",
    cardVersionBefore: 1,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

/** An evaluated call of a tool's memory window. */
export function evaluated(
  partition: string,
  tool: string,
  id = timeOrderedId(),
  overrides: Partial<EvaluatedCall> = {},
): EvaluatedCall {
  return {
    v: 1,
    id,
    partition,
    tool,
    at: 1,
    success: true,
    latencyMs: 12,
    args: [{ name: "query", kind: "string", shape: "<text>" }],
    fingerprints: ["f1"],
    summary: "Succeeded in 12 ms but returned no results.",
    evaluation: "Executed without error, but found nothing for the request.",
    score: 0.5,
    signals: ["no_results"],
    evaluator: "deterministic",
    key: `key-${id}`,
    evaluatedAt: 2,
    ...overrides,
  };
}

/** A guideline as a summary stores it. */
export function guideline(through: string, overrides: Partial<Guideline> = {}): Guideline {
  return {
    coreFunction: "Searches the documentation.",
    whatWorks: ["Specific requests found results in 3 of 4 recent calls."],
    commonIssues: ["Vague requests returned no results."],
    bestPractices: ["Name what to look for.", "Add the product name."],
    stats: {
      totalCalls: 4,
      recentCalls: 4,
      successRate: 1,
      recentSuccessRate: 1,
      avgScore: 0.875,
      recentAvgScore: 0.875,
      avgLatencyMs: 12,
      avgTokens: null,
    },
    through,
    calls: 4,
    synthesizer: "deterministic",
    refused: [],
    at: 3,
    ...overrides,
  };
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
const sorted = (values: string[]) => [...values].sort();

/**
 * The store as the ledger sees it, with `batch` and `get` called through the given overrides
 * (every other method runs on the store itself), to make one kind of request fail.
 */
function intercepted(store: BaseStore, overrides: { batch?: BaseStore["batch"]; get?: BaseStore["get"] }): BaseStore {
  return new Proxy(store, {
    get(target, property) {
      const own = property === "batch" ? overrides.batch : property === "get" ? overrides.get : undefined;
      if (own) return own;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The ledger's behaviour on a real store, end to end. Every backend (InMemoryStore, SqliteStore,
 * PostgresStore) runs the same suite; each test gets a fresh, empty store from `makeStore`.
 */
export function ledgerContract(name: string, makeStore: () => Promise<ContractStore>): void {
  describe(`Ledger contract: ${name}`, () => {
    let store: BaseStore;
    let cleanup: (() => Promise<void>) | undefined;
    let warnings: string[];
    let failures: ToolLessonsFailure[];
    /** Collects what the ledger reports: the failure, and its message in `warnings`. */
    const collect = (failure: ToolLessonsFailure) => {
      failures.push(failure);
      warnings.push(failure.message);
    };

    /** A ledger on this test's store; failures are collected, not printed. */
    const open = (options: LedgerOptions = {}) => new Ledger(store, { failureSink: collect, ...options });

    beforeEach(async () => {
      warnings = [];
      failures = [];
      ({ store, cleanup } = await makeStore());
    });

    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });

    describe("append-only records", () => {
      it("lists call records oldest first, per tool and across tools, as written", async () => {
        const ledger = open();
        const t0 = Date.now();
        const written = await ledger.appendCalls([
          call("p", "search", {
            at: t0 + 2,
            outcome: "error",
            errorClass: "validation",
            errorMessage: "bad id ORD-####",
            latencyMs: 12,
            tokens: 40,
            threadId: "t1",
            requestId: "r1",
          }),
          call("p", "search", { at: t0 }),
          call("p", "email", { at: t0 + 1 }),
        ]);
        await ledger.appendCalls([call("p", "search", { at: t0 + 3 })]);

        const search = await ledger.listCalls("p", { tool: "search" });
        expect(search.map((c) => c.at)).toEqual([t0, t0 + 2, t0 + 3]);
        expect(search[1]).toEqual(written[0]);
        expect((await ledger.listCalls("p")).map((c) => c.at)).toEqual([t0, t0 + 1, t0 + 2, t0 + 3]);
        expect(await ledger.listCalledTools("p")).toEqual(["email", "search"]);
        expect(await ledger.listCalls("p", { tool: "never-called" })).toEqual([]);
      });

      it("pages with `after` and keeps the newest `limit`, oldest first", async () => {
        const ledger = open();
        const rows = await ledger.appendCalls(
          Array.from({ length: 6 }, (_, i) => call("p", "search", { runId: `r${i}` })),
        );
        const all = ids(rows);
        expect(ids(await ledger.listCalls("p", { tool: "search" }))).toEqual(all);
        expect(ids(await ledger.listCalls("p", { tool: "search", after: all[2] }))).toEqual(all.slice(3));
        expect(ids(await ledger.listCalls("p", { tool: "search", limit: 2 }))).toEqual(all.slice(4));
        expect(ids(await ledger.listCalls("p", { after: all[1], limit: 3 }))).toEqual(all.slice(3));
        expect(await ledger.listCalls("p", { after: all[5] })).toEqual([]);
      });

      it("lists turns and routes oldest first with `after` and `limit`", async () => {
        const ledger = open();
        const t0 = Date.now();
        const turns = await ledger.appendTurns([
          turn("p", "r2", { at: t0 + 2, servedBy: "search", calls: [{ tool: "search", outcome: "success" }] }),
          turn("p", "r0", { at: t0 }),
          turn("p", "r1", { at: t0 + 1, threadId: "th" }),
        ]);
        expect((await ledger.listTurns("p")).map((t) => t.requestId)).toEqual(["r0", "r1", "r2"]);
        expect((await ledger.listTurns("p")).at(-1)).toEqual(turns[0]);
        expect((await ledger.listTurns("p", { after: turns[2].id })).map((t) => t.requestId)).toEqual(["r2"]);
        expect((await ledger.listTurns("p", { limit: 2 })).map((t) => t.requestId)).toEqual(["r1", "r2"]);

        const routes = await ledger.appendRoutes(["q0", "q1", "q2"].map((r) => route("p", r)));
        expect(await ledger.listRoutes("p")).toEqual(routes);
        expect(ids(await ledger.listRoutes("p", { after: routes[0].id, limit: 1 }))).toEqual([routes[2].id]);
      });

      it("refuses records that do not match their schema, writing nothing", async () => {
        const ledger = open();
        await expect(ledger.appendCalls([call("p", "search"), call("", "search")])).rejects.toBeInstanceOf(
          InvalidInput,
        );
        await expect(
          ledger.appendCalls([call("p", "search", { outcome: "maybe" as CallRecord["outcome"] })]),
        ).rejects.toBeInstanceOf(InvalidInput);
        await expect(ledger.appendCalls([call("p", "")])).rejects.toBeInstanceOf(InvalidInput);
        expect(await ledger.listCalls("p")).toEqual([]);
      });

      it("lists every record when a listing takes many pages", async () => {
        const ledger = open({ pageSize: 7 });
        await ledger.appendCalls(
          Array.from({ length: 40 }, (_, i) => call("p", i % 2 ? "a" : "ab", { runId: `r${i}` })),
        );
        await ledger.appendTurns(Array.from({ length: 30 }, (_, i) => turn("p", `r${i}`)));
        for (let i = 0; i < 15; i += 1) await ledger.putCard(card("p", `tool-${String(i).padStart(2, "0")}`));
        for (let i = 0; i < 9; i += 1) await ledger.appendTurns([turn(`q${i}`, "r")]);

        const calls = await ledger.listCalls("p");
        expect(new Set(calls.map((c) => c.runId)).size).toBe(40);
        expect(await ledger.listCalls("p", { tool: "a" })).toHaveLength(20);
        expect(await ledger.listTurns("p")).toHaveLength(30);
        expect(await ledger.listCards("p")).toHaveLength(15);
        expect(await ledger.listPartitions()).toEqual(["p", ...Array.from({ length: 9 }, (_, i) => `q${i}`)]);
      });
    });

    describe("partitions and names", () => {
      it("shows nothing written in one partition to another", async () => {
        const ledger = open();
        await ledger.appendCalls([call("p1", "search")]);
        await ledger.appendTurns([turn("p1", "r")]);
        await ledger.appendRoutes([route("p1", "r")]);
        await ledger.putCard(card("p1", "search"));
        await ledger.putRevision(revision("p1", "search", "proposed"));
        await ledger.putRule("p1", {
          tool: "search",
          rule: "Never search for people.",
          priority: "critical",
          source: "user_explicit",
        });
        await ledger.configure("p1", { minCalls: 9 });

        expect(await ledger.listCalls("p2")).toEqual([]);
        expect(await ledger.listCalledTools("p2")).toEqual([]);
        expect(await ledger.listTurns("p2")).toEqual([]);
        expect(await ledger.listRoutes("p2")).toEqual([]);
        expect(await ledger.getCard("p2", "search")).toBeNull();
        expect(await ledger.listCards("p2")).toEqual([]);
        expect(await ledger.listRevisions("p2")).toEqual([]);
        expect(await ledger.listRules("p2")).toEqual([]);
        expect((await ledger.getSettings("p2")).minCalls).toBe(DEFAULT_SETTINGS.minCalls);
        expect(await open().getSettings("p2")).toEqual(DEFAULT_SETTINGS);
      });

      it("keeps prefix lookalikes, LIKE wildcards and encoded-looking names apart", async () => {
        const ledger = open();
        for (const partition of TRICKY_PARTITIONS) {
          await ledger.appendCalls(
            TRICKY_TOOLS.map((tool) => call(partition, tool, { runId: `${partition}|${tool}` })),
          );
          await ledger.appendTurns([turn(partition, partition)]);
          await ledger.appendRoutes([route(partition, partition)]);
          await ledger.putCard(card(partition, partition));
          await ledger.putRevision(revision(partition, partition, "proposed"));
          await ledger.putRule(partition, { tool: partition, rule: "r", priority: "high", source: "programmatic" });
        }
        expect(await ledger.listPartitions()).toEqual(sorted(TRICKY_PARTITIONS));
        for (const partition of TRICKY_PARTITIONS) {
          expect(await ledger.listCalledTools(partition)).toEqual(sorted(TRICKY_TOOLS));
          const calls = await ledger.listCalls(partition);
          expect(sorted(calls.map((c) => c.runId))).toEqual(sorted(TRICKY_TOOLS.map((t) => `${partition}|${t}`)));
          for (const tool of ["a", "a%", "a_b"]) {
            expect((await ledger.listCalls(partition, { tool })).map((c) => c.runId)).toEqual([`${partition}|${tool}`]);
          }
          expect((await ledger.listTurns(partition)).map((t) => t.requestId)).toEqual([partition]);
          expect((await ledger.listRoutes(partition)).map((t) => t.requestId)).toEqual([partition]);
          expect((await ledger.listCards(partition)).map((c) => c.name)).toEqual([partition]);
          expect((await ledger.listRevisions(partition)).map((r) => r.tool)).toEqual([partition]);
          expect((await ledger.listRules(partition)).map((r) => r.tool)).toEqual([partition]);
        }
        expect(ledger.skippedRows).toBe(0);
      });

      it("round-trips tool names with dots, slashes, colons and percent signs", async () => {
        const ledger = open();
        const tools = [
          "github.create_issue",
          "fs/read.file",
          "mcp:server.tool",
          "100%",
          "x~7E",
          "%2E",
          "a b",
          "emoji🙂",
        ];
        await ledger.appendCalls(tools.map((tool) => call("p", tool)));
        expect(await ledger.listCalledTools("p")).toEqual(sorted(tools));
        for (const tool of tools) {
          const [only] = await ledger.listCalls("p", { tool });
          expect(only.tool).toBe(tool);
          await ledger.putCard(card("p", tool));
          expect((await ledger.getCard("p", tool))?.name).toBe(tool);
        }
      });

      it("keeps ledgers with different namespace roots apart on one store", async () => {
        const a = open();
        const b = open({ namespaceRoot: `${ROOT}-b` });
        await a.appendCalls([call("p", "search")]);
        await b.appendCalls([call("q", "search")]);
        expect(await a.listPartitions()).toEqual(["p"]);
        expect(await b.listPartitions()).toEqual(["q"]);
        expect(await b.listCalls("p")).toEqual([]);
      });
    });

    describe("retention", () => {
      it("keeps exactly the newest retainCallsPerTool calls of a tool, appended one by one", async () => {
        const ledger = open();
        await ledger.configure("p", { retainCallsPerTool: 20 });
        const all: string[] = [];
        for (let i = 0; i < 100; i += 1)
          all.push(...ids(await ledger.appendCalls([call("p", "search", { runId: `r${i}` })])));
        await ledger.appendCalls([call("p", "other")]);

        expect(ids(await ledger.listCalls("p", { tool: "search" }))).toEqual(all.slice(80));
        expect(await ledger.listCalls("p", { tool: "other" })).toHaveLength(1);
      });

      it("prunes a large batch to retainCallsPerTool and turns to retainTurns", async () => {
        const ledger = open();
        await ledger.configure("p", { retainCallsPerTool: 20, retainTurns: 30 });
        const calls = await ledger.appendCalls(Array.from({ length: 100 }, () => call("p", "search")));
        expect(ids(await ledger.listCalls("p", { tool: "search" }))).toEqual(ids(calls).slice(80));
        const turns = await ledger.appendTurns(Array.from({ length: 150 }, (_, i) => turn("p", `r${i}`)));
        expect(ids(await ledger.listTurns("p"))).toEqual(ids(turns).slice(120));
      });

      it("prunes by the settings configured on the same ledger after it started appending", async () => {
        const ledger = open();
        await ledger.appendCalls([call("p", "search")]);
        await ledger.appendTurns([turn("p", "first")]);
        await ledger.appendRoutes([route("p", "first")]);
        await ledger.configure("p", { retainCallsPerTool: 20, retainTurns: 30 });

        const calls = await ledger.appendCalls(Array.from({ length: 100 }, () => call("p", "search")));
        expect(ids(await ledger.listCalls("p", { tool: "search" }))).toEqual(ids(calls).slice(80));
        const turns = await ledger.appendTurns(Array.from({ length: 150 }, (_, i) => turn("p", `r${i}`)));
        expect(ids(await ledger.listTurns("p"))).toEqual(ids(turns).slice(120));
        const routes = await ledger.appendRoutes(Array.from({ length: 150 }, (_, i) => route("p", `r${i}`)));
        expect(ids(await ledger.listRoutes("p"))).toEqual(ids(routes).slice(120));
      });

      it("pruneCalls deletes all but the newest `keep` calls of one tool and says how many", async () => {
        const ledger = open();
        const search = await ledger.appendCalls(Array.from({ length: 10 }, () => call("p", "search")));
        await ledger.appendCalls([call("p", "ab"), call("p", "a")]);

        expect(await ledger.pruneCalls("p", "search", 4)).toBe(6);
        expect(ids(await ledger.listCalls("p", { tool: "search" }))).toEqual(ids(search).slice(6));
        expect(await ledger.pruneCalls("p", "search", 4)).toBe(0);
        expect(await ledger.pruneCalls("p", "a", 0)).toBe(1);
        expect(await ledger.listCalls("p", { tool: "a" })).toEqual([]);
        expect(await ledger.listCalls("p", { tool: "ab" })).toHaveLength(1);
      });

      it("reports a failed prune through failureSink, keeps the append, and prunes at the next threshold", async () => {
        let failDeletes = true;
        const flaky = intercepted(store, {
          batch: (async (ops: Operation[]) => {
            if (failDeletes && ops.some((op) => "value" in op && op.value === null)) throw new Error("disk full");
            return store.batch(ops);
          }) as BaseStore["batch"],
        });
        const ledger = new Ledger(flaky, { failureSink: collect });
        await ledger.configure("p", { retainCallsPerTool: 20 });

        const first = await ledger.appendCalls(Array.from({ length: 30 }, () => call("p", "search")));
        expect(first).toHaveLength(30);
        expect(warnings).toEqual(["Pruning old records failed; they will be pruned later."]);
        expect(failures[0]).toMatchObject({ stage: "ledger", kind: "prune_failed" });
        expect(failures[0].context?.namespace).toMatch(/\/calls\//);
        expect(failures[0].error).toBeInstanceOf(Error);
        expect(failures[0].error?.message).toContain("disk full");
        expect(await ledger.listCalls("p", { tool: "search" })).toHaveLength(30);

        failDeletes = false;
        const second = await ledger.appendCalls(Array.from({ length: 10 }, () => call("p", "search")));
        expect(ids(await ledger.listCalls("p", { tool: "search" }))).toEqual(ids([...first, ...second]).slice(20));
      });
    });

    describe("cards", () => {
      it("puts, gets and lists cards, bumping the version and keeping createdAt", async () => {
        const ledger = open();
        const first = await ledger.putCard(card("p", "search", { version: 7, createdAt: 5 }));
        expect(first.version).toBe(1);
        expect(await ledger.getCard("p", "search")).toEqual(first);

        const notes = [{ text: "Pass ids with their ORD- prefix.", revisionId: "rev1" }];
        const second = await ledger.putCard({ ...first, learned: { ...first.learned, notes } });
        expect(second.version).toBe(2);
        expect(second.createdAt).toBe(first.createdAt);
        expect((await ledger.getCard("p", "search"))?.learned.notes).toEqual(notes);

        await ledger.putCard(card("p", "email"));
        expect((await ledger.listCards("p")).map((c) => [c.name, c.version])).toEqual([
          ["email", 1],
          ["search", 2],
        ]);
        expect(await ledger.getCard("p", "missing")).toBeNull();
        // Several at once, in the order asked, a tool with no card left out.
        expect((await ledger.getCards("p", ["search", "missing", "email"])).map((c) => [c.name, c.version])).toEqual([
          ["search", 2],
          ["email", 1],
        ]);
        expect(await ledger.getCards("p", [])).toEqual([]);
      });

      it("refuses a write whose expectVersion is stale with RevisionConflict", async () => {
        const ledger = open();
        await ledger.putCard(card("p", "search"), { expectVersion: 0 });
        const v2 = await ledger.putCard(card("p", "search"), { expectVersion: 1 });
        expect(v2.version).toBe(2);

        const stale = ledger.putCard(
          { ...v2, learned: { ...v2.learned, notes: [{ text: "lost", revisionId: "x" }] } },
          { expectVersion: 1 },
        );
        await expect(stale).rejects.toBeInstanceOf(RevisionConflict);
        await expect(ledger.putCard(card("p", "search"), { expectVersion: 0 })).rejects.toBeInstanceOf(
          RevisionConflict,
        );
        await expect(ledger.putCard(card("p", "new"), { expectVersion: 3 })).rejects.toBeInstanceOf(RevisionConflict);

        const stored = await ledger.getCard("p", "search");
        expect(stored?.version).toBe(2);
        expect(stored?.learned.notes).toEqual([]);
        expect(await ledger.getCard("p", "new")).toBeNull();
      });
    });

    describe("revisions", () => {
      it("lists revisions newest first, filtered by tool and status", async () => {
        const ledger = open();
        const r1 = revision("p", "search", "applied");
        const r2 = revision("p", "email", "proposed");
        const r3 = revision("p", "search", "proposed");
        const r4 = revision("p", "search", "dismissed");
        for (const r of [r3, r1, r4, r2]) await ledger.putRevision(r);

        expect(ids(await ledger.listRevisions("p"))).toEqual([r4.id, r3.id, r2.id, r1.id]);
        expect(ids(await ledger.listRevisions("p", { tool: "search" }))).toEqual([r4.id, r3.id, r1.id]);
        expect(ids(await ledger.listRevisions("p", { status: "proposed" }))).toEqual([r3.id, r2.id]);
        expect(ids(await ledger.listRevisions("p", { tool: "search", status: "applied" }))).toEqual([r1.id]);
        expect(await ledger.getRevision("p", r2.id)).toEqual(r2);

        await ledger.putRevision({ ...r2, status: "dismissed", approvedBy: "ops" });
        expect((await ledger.requireRevision("p", r2.id)).status).toBe("dismissed");
        await expect(ledger.requireRevision("p", "nope")).rejects.toBeInstanceOf(NotFound);
        expect(await ledger.getRevision("p", "nope")).toBeNull();
      });

      it("commits cards and revisions together, or nothing when a card moved on", async () => {
        const ledger = open();
        const applied = { ...revision("p", "search", "applied"), cardVersionAfter: 1 };
        const saved = await ledger.commit("p", {
          cards: [card("p", "search"), card("p", "email")],
          revisions: [applied],
        });
        expect(saved.map((c) => c.version)).toEqual([1, 1]);
        expect(await ledger.getRevision("p", applied.id)).toEqual(applied);
        expect((await ledger.listCards("p")).map((c) => c.name)).toEqual(["email", "search"]);

        const late = revision("p", "search", "applied");
        await expect(
          ledger.commit("p", { cards: [card("p", "search")], revisions: [late], expectVersion: 0 }),
        ).rejects.toBeInstanceOf(RevisionConflict);
        await expect(ledger.commit("p", { cards: [card("q", "search")], revisions: [late] })).rejects.toBeInstanceOf(
          InvalidInput,
        );
        expect(await ledger.getRevision("p", late.id)).toBeNull();
        expect((await ledger.getCard("p", "search"))?.version).toBe(1);
        expect(await ledger.listCards("q")).toEqual([]);
      });
    });

    it("refuses a card, revision or rule that does not match its schema with InvalidInput, writing nothing", async () => {
      const ledger = open();
      const bad = { ...revision("p", "search", "applied"), status: "maybe" } as unknown as Revision;
      await expect(ledger.commit("p", { cards: [card("p", "search")], revisions: [bad] })).rejects.toBeInstanceOf(
        InvalidInput,
      );
      await expect(ledger.putRevision(bad)).rejects.toBeInstanceOf(InvalidInput);
      await expect(ledger.putCard(card("p", ""))).rejects.toBeInstanceOf(InvalidInput);
      await expect(
        ledger.putRule("p", { tool: "search", rule: "x", priority: "urgent" as "high", source: "programmatic" }),
      ).rejects.toBeInstanceOf(InvalidInput);
      expect(await ledger.getCard("p", "search")).toBeNull();
      expect(await ledger.listCards("p")).toEqual([]);
      expect(await ledger.listRevisions("p")).toEqual([]);
      expect(await ledger.listRules("p")).toEqual([]);
    });

    describe("rules", () => {
      it("upserts rules, keeping createdAt and tags, and deletes them", async () => {
        const ledger = open();
        const rule = await ledger.putRule("p", {
          tool: "send_email",
          rule: "Never email Sarah.",
          priority: "critical",
          source: "user_explicit",
          tags: ["people"],
        });
        expect(rule.createdAt).toBe(rule.updatedAt);
        await new Promise((r) => setTimeout(r, 5));
        const updated = await ledger.putRule("p", {
          id: rule.id,
          tool: "send_email",
          rule: "Never email Sarah or Sam.",
          priority: "critical",
          source: "user_explicit",
        });
        expect(updated.createdAt).toBe(rule.createdAt);
        expect(updated.updatedAt).toBeGreaterThan(rule.updatedAt);
        expect(updated.tags).toEqual(["people"]);
        await ledger.putRule("p", {
          tool: "search",
          rule: "Prefer exact matches.",
          priority: "normal",
          source: "post_turn",
        });

        expect((await ledger.listRules("p")).map((r) => r.rule)).toEqual([
          "Never email Sarah or Sam.",
          "Prefer exact matches.",
        ]);
        expect(await ledger.listRules("p", { tool: "send_email" })).toEqual([updated]);
        expect(await ledger.deleteRule("p", rule.id)).toBe(true);
        expect(await ledger.deleteRule("p", rule.id)).toBe(false);
        expect(await ledger.getRule("p", rule.id)).toBeNull();
      });

      it("refuses a blank tool or blank text with InvalidInput", async () => {
        const ledger = open();
        const base = { priority: "high", source: "programmatic" } as const;
        await expect(ledger.putRule("p", { ...base, tool: "", rule: "x" })).rejects.toBeInstanceOf(InvalidInput);
        await expect(ledger.putRule("p", { ...base, tool: "  ", rule: "x" })).rejects.toBeInstanceOf(InvalidInput);
        await expect(ledger.putRule("p", { ...base, tool: "search", rule: " \n" })).rejects.toBeInstanceOf(
          InvalidInput,
        );
        expect(await ledger.listRules("p")).toEqual([]);
      });

      it("skips corrupt rule rows, counts them, and never fails the listing", async () => {
        const ledger = open();
        const good = await ledger.putRule("p", {
          tool: "search",
          rule: "Prefer exact matches.",
          priority: "high",
          source: "programmatic",
        });
        const ns = [ROOT, encodeLabel("p"), "rules"];
        await store.put(ns, "garbage", { nonsense: true });
        await store.put(ns, "blank", { ...good, id: "blank", rule: "" });
        await store.put(ns, "future", { ...good, id: "future", v: 99 });
        await store.put(ns, "priority", { ...good, id: "priority", priority: "urgent" });

        expect(await ledger.listRules("p")).toEqual([good]);
        expect(ledger.skippedRows).toBe(4);
        expect(await ledger.getRule("p", "garbage")).toBeNull();
        expect(ledger.skippedRows).toBe(5);
        // One report per corrupt row (the one dedup policy: once per kind and what it is about), every skip counted.
        expect(warnings).toHaveLength(4);
        const replaced = await ledger.putRule("p", {
          id: "garbage",
          tool: "search",
          rule: "Repaired.",
          priority: "normal",
          source: "programmatic",
        });
        expect(await ledger.getRule("p", "garbage")).toEqual(replaced);
      });
    });

    describe("review marks", () => {
      it("keeps the newest mark of each tool per partition, apart from the cards", async () => {
        const ledger = open();
        const searchCard = await ledger.putCard(card("p", "search"));
        expect(await ledger.reviewMarks("p")).toEqual(new Map());

        await ledger.markReviewed("p", new Map(TRICKY_TOOLS.map((tool, i) => [tool, `id-${i}`])));
        await ledger.markReviewed("p", new Map([["search", "id-s1"]]));
        await ledger.markReviewed("p", new Map([["search", "id-s2"]]));
        await ledger.markReviewed("q", new Map([["search", "id-q"]]));

        expect(await open().reviewMarks("p")).toEqual(
          new Map([...TRICKY_TOOLS.map((tool, i): [string, string] => [tool, `id-${i}`]), ["search", "id-s2"]]),
        );
        expect(await ledger.reviewMarks("q")).toEqual(new Map([["search", "id-q"]]));
        expect(await ledger.getCard("p", "search")).toEqual(searchCard);
      });

      it("writes nothing for an empty set of marks", async () => {
        const ledger = open();
        await ledger.markReviewed("p", new Map());
        expect(await ledger.listPartitions()).toEqual([]);
      });

      it("skips a corrupt mark and keeps the others", async () => {
        const ledger = open();
        await ledger.markReviewed("p", new Map([["search", "id-1"]]));
        await store.put([ROOT, encodeLabel("p"), "reviews"], "broken", { through: 42 });
        expect(await ledger.reviewMarks("p")).toEqual(new Map([["search", "id-1"]]));
        expect(ledger.skippedRows).toBe(1);
        expect(warnings).toEqual(["Skipped a ledger row that does not match its schema."]);
        expect(failures[0]).toMatchObject({ stage: "ledger", kind: "row_skipped", context: { key: "broken" } });
        expect(failures[0].context?.issues).toMatch(/^through: /);
        await ledger.markReviewed("p", new Map([["broken", "id-2"]]));
        expect(await ledger.reviewMarks("p")).toEqual(
          new Map([
            ["search", "id-1"],
            ["broken", "id-2"],
          ]),
        );
      });
    });

    describe("tool memory", () => {
      it("keeps a window of evaluated calls per tool and partition, oldest first, a call once", async () => {
        const ledger = open();
        const rows = TRICKY_TOOLS.map((tool) => evaluated("p", tool));
        await ledger.putEvaluatedCalls(rows);
        const [a1, a2] = [evaluated("p", "a"), evaluated("p", "a")];
        await ledger.putEvaluatedCalls([a2, a1]);
        await ledger.putEvaluatedCalls([{ ...a1, score: 1, signals: [] }]);
        await ledger.putEvaluatedCalls([evaluated("q", "a")]);

        const fresh = open();
        expect(await fresh.listEvaluatedCalls("p", "a")).toEqual([rows[0], { ...a1, score: 1, signals: [] }, a2]);
        for (const [i, tool] of TRICKY_TOOLS.entries()) {
          if (tool !== "a") expect(await fresh.listEvaluatedCalls("p", tool), tool).toEqual([rows[i]]);
        }
        expect(await fresh.listMemoryTools("p")).toEqual([...TRICKY_TOOLS].sort());
        expect(await fresh.listMemoryTools("q")).toEqual(["a"]);
        expect(ids(await fresh.listEvaluatedCalls("p", "a", { limit: 2 }))).toEqual([a1.id, a2.id]);
        expect(ids(await fresh.listEvaluatedCalls("p", "a", { after: a1.id }))).toEqual([a2.id]);
      });

      it("slides a window to its newest `keep` rows, the oldest out first", async () => {
        const ledger = open();
        const rows = Array.from({ length: 7 }, () => evaluated("p", "search"));
        await ledger.putEvaluatedCalls(rows);
        expect(await ledger.slideMemoryWindow("p", "search", 3)).toBe(4);
        expect(await ledger.slideMemoryWindow("p", "search", 3)).toBe(0);
        expect(ids(await ledger.listEvaluatedCalls("p", "search"))).toEqual(ids(rows.slice(4)));
      });

      it("keeps one memory state per tool: evaluation watermark and guideline, written whole", async () => {
        const ledger = open();
        expect(await ledger.getToolMemory("p", "search")).toBeNull();
        const first = await ledger.putToolMemory({
          partition: "p",
          tool: "search",
          evaluatedThrough: "id-1",
          guideline: null,
        });
        expect(first).toMatchObject({ v: 1, evaluatedThrough: "id-1", guideline: null });
        const g = guideline("id-2");
        await ledger.putToolMemory({ partition: "p", tool: "search", evaluatedThrough: "id-2", guideline: g });
        for (const tool of TRICKY_TOOLS) await ledger.putToolMemory({ partition: "p", tool, guideline: null });
        await ledger.putToolMemory({ partition: "q", tool: "search", guideline: null });

        const fresh = open();
        expect(await fresh.getToolMemory("p", "search")).toMatchObject({ evaluatedThrough: "id-2", guideline: g });
        expect((await fresh.listToolMemories("p")).map((s) => s.tool)).toEqual([...TRICKY_TOOLS, "search"].sort());
        expect((await fresh.listToolMemories("q")).map((s) => s.tool)).toEqual(["search"]);
        // Many tools in one read: in the order asked, null where a tool has none, the partition's own only.
        const many = await fresh.getToolMemories("p", ["nothing", "search", TRICKY_TOOLS[0]]);
        expect(many.map((s) => s?.tool ?? null)).toEqual([null, "search", TRICKY_TOOLS[0]]);
        expect(many[1]).toMatchObject({ evaluatedThrough: "id-2", guideline: g });
        expect((await fresh.getToolMemories("q", ["search", TRICKY_TOOLS[0]])).map((s) => s?.tool ?? null)).toEqual([
          "search",
          null,
        ]);
        expect(await fresh.getToolMemories("p", [])).toEqual([]);
      });

      it("refuses an evaluated call or a state that does not match its schema, writing nothing", async () => {
        const ledger = open();
        const bad = { ...evaluated("p", "search"), score: 0.7 } as unknown as EvaluatedCall;
        await expect(ledger.putEvaluatedCalls([evaluated("p", "search"), bad])).rejects.toBeInstanceOf(InvalidInput);
        expect(await ledger.listEvaluatedCalls("p", "search")).toEqual([]);
        await expect(
          ledger.putToolMemory({
            partition: "p",
            tool: "search",
            guideline: { ...guideline("x"), through: 3 } as never,
          }),
        ).rejects.toBeInstanceOf(InvalidInput);
        expect(await ledger.getToolMemory("p", "search")).toBeNull();
      });
    });

    it("get… returns null for a corrupt row and counts it", async () => {
      const ledger = open();
      const goodCard = await ledger.putCard(card("p", "search"));
      const goodRevision = revision("p", "search", "proposed");
      await ledger.putRevision(goodRevision);
      const p = encodeLabel("p");
      await store.put([ROOT, p, "cards"], "broken", { ...goodCard, name: "broken", author: null });
      await store.put([ROOT, p, "revisions"], "broken", { ...goodRevision, id: "broken", evidence: "none" });

      expect(await ledger.getRevision("p", "broken")).toBeNull();
      await expect(ledger.requireRevision("p", "broken")).rejects.toBeInstanceOf(NotFound);
      expect(await ledger.getRevision("p", goodRevision.id)).toEqual(goodRevision);
      expect(await ledger.getCards("p", ["broken", "search"])).toEqual([goodCard]);
      expect(ledger.skippedRows).toBe(3);
      // The broken revision read twice is one report; the broken card another.
      expect(warnings).toHaveLength(2);
    });

    it("skips corrupt rows in every collection", async () => {
      const ledger = open();
      const [goodCall] = await ledger.appendCalls([call("p", "search")]);
      const [goodTurn] = await ledger.appendTurns([turn("p", "r")]);
      const [goodRoute] = await ledger.appendRoutes([route("p", "r")]);
      const goodCard = await ledger.putCard(card("p", "search"));
      const goodRevision = revision("p", "search", "proposed");
      await ledger.putRevision(goodRevision);
      const p = encodeLabel("p");
      const bad = { v: 1, id: "zzz", partition: "p", junk: [1, 2] };
      await store.put([ROOT, p, "calls", encodeLabel("search")], "zzz", bad);
      await store.put([ROOT, p, "calls", encodeLabel("broken")], "zzz", { tool: 42 });
      await store.put([ROOT, p, "turns"], "zzz", bad);
      await store.put([ROOT, p, "routes"], "zzz", { ...goodRoute, offered: [{ tool: "x", rank: 0, score: 1 }] });
      await store.put([ROOT, p, "cards"], "zzz", { ...goodCard, name: "zzz", version: 0 });
      await store.put([ROOT, p, "revisions"], "zzz", { ...goodRevision, id: "zzz", status: "maybe" });
      await store.put([ROOT, p, "settings"], "current", { minCalls: "lots" });

      expect(await ledger.listCalls("p")).toEqual([goodCall]);
      expect(await ledger.listTurns("p")).toEqual([goodTurn]);
      expect(await ledger.listRoutes("p")).toEqual([goodRoute]);
      expect(await ledger.listCards("p")).toEqual([goodCard]);
      expect(await ledger.getCard("p", "zzz")).toBeNull();
      expect(await ledger.listRevisions("p")).toEqual([goodRevision]);
      const fresh = open();
      expect(await fresh.getSettings("p")).toEqual(DEFAULT_SETTINGS);
      expect(fresh.skippedRows).toBe(1);
      expect(ledger.skippedRows).toBe(7);
    });

    it("skips and counts one corrupt row in each collection, and the read still answers", async () => {
      const seed = open();
      const p = encodeLabel("p");
      const [goodCall] = await seed.appendCalls([call("p", "search")]);
      const [goodTurn] = await seed.appendTurns([turn("p", "r")]);
      const [goodRoute] = await seed.appendRoutes([route("p", "r")]);
      const goodCard = await seed.putCard(card("p", "search"));
      const goodRevision = revision("p", "search", "proposed");
      await seed.putRevision(goodRevision);
      const goodRule = await seed.putRule("p", {
        tool: "search",
        rule: "Prefer exact matches.",
        priority: "high",
        source: "programmatic",
      });
      await seed.configure("p", { minCalls: 5 });
      await seed.markReviewed("p", new Map([["search", goodCall.id]]));
      await seed.releaseWords("p", new Map([["abcdefghijkl", "Springfield"]]));
      const [goodEvaluated] = await seed.putEvaluatedCalls([evaluated("p", "search", goodCall.id)]);
      const goodState = await seed.putToolMemory({
        partition: "p",
        tool: "search",
        evaluatedThrough: goodCall.id,
        guideline: guideline(goodCall.id),
      });

      // Typed by collection: a new collection does not compile until it has its row here.
      const cases: Record<
        Collection,
        { row: [string[], string, Record<string, unknown>]; read: (l: Ledger) => Promise<unknown>; expected: unknown }
      > = {
        calls: {
          row: [[ROOT, p, "calls", encodeLabel("search")], "zzz", { ...goodCall, id: "zzz", args: "none" }],
          read: (l) => l.listCalls("p"),
          expected: [goodCall],
        },
        turns: {
          row: [[ROOT, p, "turns"], "zzz", { ...goodTurn, id: "zzz", calls: [{ tool: 1 }] }],
          read: (l) => l.listTurns("p"),
          expected: [goodTurn],
        },
        routes: {
          row: [[ROOT, p, "routes"], "zzz", { ...goodRoute, id: "zzz", k: "five" }],
          read: (l) => l.listRoutes("p"),
          expected: [goodRoute],
        },
        cards: {
          row: [[ROOT, p, "cards"], "zzz", { ...goodCard, name: "zzz", learned: null }],
          read: (l) => l.listCards("p"),
          expected: [goodCard],
        },
        revisions: {
          row: [[ROOT, p, "revisions"], "zzz", { ...goodRevision, id: "zzz", ranks: {} }],
          read: (l) => l.listRevisions("p"),
          expected: [goodRevision],
        },
        rules: {
          row: [[ROOT, p, "rules"], "zzz", { ...goodRule, id: "zzz", source: "rumour" }],
          read: (l) => l.listRules("p"),
          expected: [goodRule],
        },
        settings: {
          row: [[ROOT, p, "settings"], "current", { minCalls: -3 }],
          read: (l) => l.getSettings("p"),
          expected: DEFAULT_SETTINGS,
        },
        reviews: {
          row: [[ROOT, p, "reviews"], "zzz", { through: null }],
          read: (l) => l.reviewMarks("p"),
          expected: new Map([["search", goodCall.id]]),
        },
        memory: {
          row: [[ROOT, p, "memory", encodeLabel("search")], "zzz", { ...goodEvaluated, id: "zzz", score: "high" }],
          read: (l) => l.listEvaluatedCalls("p", "search"),
          expected: [goodEvaluated],
        },
        guidelines: {
          row: [[ROOT, p, "guidelines"], "zzz", { ...goodState, tool: "zzz", guideline: { coreFunction: 1 } }],
          read: (l) => l.listToolMemories("p"),
          expected: [goodState],
        },
        version: {
          row: [[ROOT, p, "version"], "current", { seq: "many", log: [] }],
          read: async (l) => (await l.readVersions(["p"]))[0],
          expected: { seq: 0, log: [] },
        },
        words: {
          row: [[ROOT, p, "words"], "mnopabcdefgh", { word: 42 }],
          read: (l) => l.releasedWords("p"),
          expected: new Map([["abcdefghijkl", "Springfield"]]),
        },
      };
      for (const { row } of Object.values(cases)) await store.put(...row);

      for (const [collection, { read, expected }] of Object.entries(cases)) {
        warnings = [];
        failures = [];
        const ledger = open();
        expect(await read(ledger), collection).toEqual(expected);
        expect(ledger.skippedRows, collection).toBe(1);
        expect(
          failures.map((f) => [f.stage, f.kind]),
          collection,
        ).toEqual([["ledger", collection === "settings" ? "settings_unparsed" : "row_skipped"]]);
      }
    });

    describe("partition versions", () => {
      it("announces every card, rule, setting and guideline write, naming the tools, to every ledger on the store", async () => {
        const writer = open();
        const reader = open();
        expect((await reader.readVersions(["p"]))[0].seq).toBe(0);
        await writer.putCard(card("p", "search"));
        await writer.putRule("p", {
          tool: "search",
          rule: "Prefer exact matches.",
          priority: "high",
          source: "programmatic",
        });
        await writer.configure("p", { minCalls: 5 });
        await writer.putToolMemory({ partition: "p", tool: "search", guideline: null });
        await writer.appendTurns([turn("p", "r")]);
        const [p, q] = await reader.readVersions(["p", "q"]);
        expect(p.seq).toBe(4);
        expect(p.log.map((e) => [e.seq, e.kinds, e.tools])).toEqual([
          [1, ["cards"], ["search"]],
          [2, ["rules"], []],
          [3, ["settings"], []],
          [4, ["guidelines"], ["search"]],
        ]);
        expect(q.seq).toBe(0);
        // An evaluation watermark moved alone is not what serving reads: no announcement.
        await writer.putToolMemory(
          { partition: "p", tool: "search", evaluatedThrough: "zzz", guideline: null },
          { guidelineChanged: false },
        );
        expect((await reader.readVersions(["p"]))[0].seq).toBe(4);
      });

      it("loses no announcement when ledgers race", async () => {
        const ledgers = Array.from({ length: 5 }, () => open());
        await Promise.all(
          ledgers.map((l, i) =>
            l.putRule("p", {
              tool: `tool_${i}`,
              rule: "Prefer exact matches.",
              priority: "high",
              source: "programmatic",
            }),
          ),
        );
        const [version] = await open().readVersions(["p"]);
        expect(version.seq).toBe(5);
        expect(version.log.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      });

      it("has a ledger read settings another ledger configured once it reads the partition's version", async () => {
        const agent = open();
        expect((await agent.getSettings("p")).minCalls).toBe(DEFAULT_SETTINGS.minCalls);
        await open().configure("p", { minCalls: 9 });
        expect((await agent.getSettings("p")).minCalls).toBe(DEFAULT_SETTINGS.minCalls);
        await agent.readVersions(["p"]);
        expect((await agent.getSettings("p")).minCalls).toBe(9);
        // A rule changes nothing of the settings; a second configure does, and is followed too.
        await open().putRule("p", {
          tool: "search",
          rule: "Prefer exact matches.",
          priority: "high",
          source: "programmatic",
        });
        await open().configure("p", { minCalls: 11 });
        await agent.readVersions(["p"]);
        expect((await agent.getSettings("p")).minCalls).toBe(11);
      });
    });

    describe("settings", () => {
      it("stores settings per partition, merged over what is stored", async () => {
        const ledger = open();
        expect(await ledger.getSettings("p")).toEqual(DEFAULT_SETTINGS);
        await ledger.configure("p", { minCalls: 5 });
        const merged = await ledger.configure("p", { routingK: 3 });
        expect(merged).toEqual({ ...DEFAULT_SETTINGS, minCalls: 5, routingK: 3 });
        expect(await open().getSettings("p")).toEqual(merged);
        expect(await open().getSettings("q")).toEqual(DEFAULT_SETTINGS);
      });

      it("refuses invalid values and unknown keys with InvalidInput, storing nothing", async () => {
        const ledger = open();
        await ledger.configure("p", { minCalls: 5 });
        await expect(ledger.configure("p", { minCalls: -1 })).rejects.toBeInstanceOf(InvalidInput);
        await expect(ledger.configure("p", { routingK: 2.5 })).rejects.toBeInstanceOf(InvalidInput);
        await expect(ledger.configure("p", { minCall: 4 } as SettingsInput)).rejects.toBeInstanceOf(InvalidInput);
        expect(await open().getSettings("p")).toEqual({ ...DEFAULT_SETTINGS, minCalls: 5 });
      });
    });

    describe("ledger metadata", () => {
      it("agrees on each partition's key across ledgers on the store, one key per partition", async () => {
        const racing = await Promise.all(Array.from({ length: 6 }, () => open().fingerprintKey("p")));
        expect(racing[0]).toMatch(/^[0-9a-f]{64}$/);
        expect(new Set(racing).size).toBe(1);
        expect(await open().fingerprintKey("p")).toBe(racing[0]);
        // The partition is part of the MAC: another partition's key differs.
        expect(await open().fingerprintKey("q")).not.toBe(racing[0]);
      });

      it("keeps no key in the store, and deletes the key rows an older ledger kept there", async () => {
        const meta = [DEFAULT_NAMESPACE_ROOT, "~meta"];
        const candidates = [...meta, "fingerprint-key-candidates"];
        await store.put(meta, "fingerprint-key", { key: "a".repeat(64) }, false);
        await store.put(candidates, timeOrderedId(), { key: "b".repeat(64) }, false);
        const ledger = open();
        const key = await ledger.fingerprintKey("p");
        expect(key).not.toContain("a".repeat(64));
        expect(await store.get(meta, "fingerprint-key")).toBeNull();
        expect((await store.search(candidates)).filter((i) => i.namespace.length === candidates.length)).toEqual([]);
        const everything = await store.search([DEFAULT_NAMESPACE_ROOT]);
        expect(JSON.stringify(everything.map((i) => i.value))).not.toContain(key);
      });

      it("does not list its own metadata as a partition", async () => {
        const ledger = open();
        await ledger.fingerprintKey("p");
        expect(await ledger.listPartitions()).toEqual([]);
        await ledger.appendCalls([call("p1", "search")]);
        await ledger.configure("p2", { minCalls: 1 });
        expect(await ledger.listPartitions()).toEqual(["p1", "p2"]);
      });

      it("close() leaves a store it does not own open", async () => {
        const ledger = open();
        await ledger.close();
        await ledger.close();
        await open().appendCalls([call("p", "search")]);
        expect(await open().listCalls("p")).toHaveLength(1);
      });
    });

    it("keeps every record when 4 ledgers append 250 calls each at once", async () => {
      await open().configure("p", { retainCallsPerTool: 1000 });
      const writers = Array.from({ length: 4 }, () => open());
      await Promise.all(
        writers.map(async (ledger, w) => {
          for (let batch = 0; batch < 50; batch += 1) {
            await ledger.appendCalls(
              Array.from({ length: 5 }, (_, i) =>
                call("p", (batch + i) % 2 ? "alpha" : "beta", { runId: `w${w}-${batch * 5 + i}` }),
              ),
            );
          }
        }),
      );
      const calls = await open().listCalls("p");
      expect(calls).toHaveLength(1000);
      expect(new Set(ids(calls)).size).toBe(1000);
      expect(new Set(calls.map((c) => c.runId)).size).toBe(1000);
      expect(ids(calls)).toEqual(sorted(ids(calls)));
    });
  });
}
