import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appliedLine, renderWaiting, undoneLine } from "../../src/cli/format.js";
import { registerTools } from "../../src/learn/register.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { openLedger } from "../../src/ledger/open.js";
import type { ArgShape, Revision, ToolCard } from "../../src/ledger/schema.js";
import { runCli, tempDir } from "./run-cli.js";

const TOOLS = [
  {
    name: "search_flights",
    description: "Search airline flights between two airports on a date.",
    schema: { type: "object", properties: { to: { type: "string" }, date: { type: "string" } } },
  },
  { name: "book_hotel", description: "Reserve a hotel room in a city for a number of nights." },
  { name: "get_weather", description: "Current weather forecast for a location." },
];

const dateArg = (shape: string): ArgShape[] => [{ name: "date", kind: "string", shape }];

/**
 * search_flights: two requests it served that routing did not offer it ("plane ticket" wording,
 * sent to get_weather by the word "weather"), two calls refused for the date format, two accepted
 * ones.
 */
async function seed(ledger: Ledger): Promise<void> {
  await registerTools(ledger, TOOLS);
  const partition = "default";
  // Routing offers one tool, as the route records say.
  await ledger.configure(partition, { routingK: 1 });
  const missed = [
    "any cheap plane ticket to lisbon, weather permitting",
    "a plane ticket to oslo for friday, whatever the weather",
  ];
  for (const [i, request] of missed.entries()) {
    const requestId = `miss-${i}`;
    const threadId = `thread-${i}`;
    await ledger.appendRoutes([
      {
        partition,
        threadId,
        requestId,
        request,
        offered: [{ tool: "get_weather", rank: 1, score: 0.4 }],
        allSent: false,
        k: 1,
      },
    ]);
    await ledger.appendCalls([
      {
        partition,
        tool: "search_flights",
        runId: `run-${i}`,
        threadId,
        requestId,
        args: dateArg("####-##-##"),
        fingerprints: [],
        outcome: "success",
        source: "api",
      },
    ]);
    await ledger.appendTurns([
      {
        partition,
        threadId,
        requestId,
        request,
        calls: [{ tool: "search_flights", outcome: "success" }],
        servedBy: "search_flights",
      },
    ]);
  }
  await ledger.appendCalls(
    [0, 1].map((i) => ({
      partition,
      tool: "search_flights",
      runId: `bad-${i}`,
      args: dateArg("##/##/####"),
      fingerprints: [],
      outcome: "error" as const,
      errorClass: "validation" as const,
      errorMessage: "date must be an ISO date",
      source: "api" as const,
    })),
  );
}

async function card(path: string, tool: string): Promise<ToolCard> {
  const ledger = await openLedger({ path });
  try {
    const found = await ledger.getCard("default", tool);
    if (!found) throw new Error(`no card ${tool}`);
    return found;
  } finally {
    await ledger.close();
  }
}

describe("tool-lessons operator commands on a SQLite ledger", () => {
  const tmp = tempDir();
  const path = join(tmp.dir, "ledger.db");

  beforeAll(async () => {
    const ledger = await openLedger({ path });
    try {
      await seed(ledger);
    } finally {
      await ledger.close();
    }
  });
  afterAll(() => tmp.cleanup());

  it("review --dry-run shows the revision and stores nothing", async () => {
    const run = await runCli("review", "--ledger", path, "--dry-run");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('partition "default": 1 revision would be proposed (dry run: nothing stored)');
    expect(run.stdout).toMatch(/revision \S+ {2}search_flights {2}\[proposed\]/);
    const history = await runCli("history", "search_flights", "--ledger", path, "--json");
    expect(JSON.parse(history.stdout)).toEqual([]);
  });

  it("review, apply, undo and history round trip", async () => {
    // Wordings off: the subject is the examples a review adds (the wordings would cover the misses).
    const review = await runCli("review", "--ledger", path, "--wordings", "off");
    expect(review.code, review.stderr).toBe(0);
    const out = review.stdout;
    expect(out).toContain('partition "default": 1 revision proposed');
    const id = /revision (\S+) {2}search_flights {2}\[proposed\]/.exec(out)?.[1];
    expect(id).toBeDefined();
    expect(out).toMatch(
      /examples added:\n {4}\+ "(any cheap plane ticket to <word>, weather permitting|a plane ticket to <word> for friday, whatever the weather)"/,
    );
    expect(out).toMatch(
      /notes added:\n {4}\+ "date must look like ####-##-##; calls with ##\/##\/#### were refused \(validation\)\."/,
    );
    expect(out).toContain("evidence:       2 failed calls, 2 missed requests, 0 confused requests");
    // A city only one request names is not an allowed word of a lesson: the gate masks it.
    expect(out).not.toMatch(/\+ "[^"]*(lisbon|oslo)/);
    expect(out).toContain('validation x2: "date must be an ISO date" (args: date)');
    expect(out).toMatch(/routing rank of missed requests \(before -> after\):\n {4}not offered {2}-> {2}#\d/);
    expect(out).toContain("proposed by:    deterministic");
    // The ID apply takes, under the tool, with the command.
    expect(out.trimEnd().split("\n").slice(-2)).toEqual([
      "waiting for apply: tool-lessons apply ID --by NAME   (or dismiss ID)",
      `  search_flights  ${id}`,
    ]);

    // A review while it waits proposes nothing for the tool, and still names the ID apply needs.
    const again = await runCli("review", "--ledger", path, "--wordings", "off");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('partition "default": 0 revisions proposed');
    expect(again.stdout).toMatch(/\n {2}search_flights +revision waiting\n/);
    expect(again.stdout).toMatch(new RegExp(`\\n {2}search_flights  ${id}  \\(from an earlier review\\)\\n?$`));
    const waitingJson = JSON.parse((await runCli("review", "--ledger", path, "--dry-run", "--json")).stdout);
    expect(waitingJson.waiting).toEqual([{ id, tool: "search_flights", createdAt: expect.any(Number) }]);

    const cards = await runCli("cards", "--ledger", path);
    expect(cards.stdout).toMatch(/search_flights\s+1\s+0\s+0\s+0\s+0\s+-\s+1/);

    const apply = await runCli("apply", id!, "--by", "alice", "--ledger", path);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout.split("\n")[0]).toBe(
      `applied revision ${id} to search_flights (partition "default"); running agents serve it from their next turn.`,
    );
    expect(apply.stdout).toMatch(/\[applied\]/);
    expect(apply.stdout).toContain("approved by:    alice");
    expect(apply.stdout).toMatch(/card search_flights \(version 2\)\n {2}learned examples:\n {4}"/);
    const applied = await card(path, "search_flights");
    expect(applied.learned.examples.filter((e) => e.source === "learned").length).toBeGreaterThan(0);
    expect(applied.learned.notes.map((n) => n.text)).toEqual([
      "date must look like ####-##-##; calls with ##/##/#### were refused (validation).",
    ]);
    expect(applied.learned.exampleCall?.text).toContain("####-##-##");

    const twice = await runCli("apply", id!, "--by", "alice", "--ledger", path);
    expect(twice.code).toBe(1);
    expect(twice.stderr.trim()).toBe(
      `tool-lessons apply: Revision ${id} is applied (by alice); only a proposed revision can be applied.`,
    );

    const undo = await runCli("undo", "search_flights", "--by", "bob", "--ledger", path);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout.split("\n")[0]).toBe(
      `undid revision ${id} of search_flights (partition "default", by bob); the card is back to what it learned ` +
        "before, and running agents serve it from their next turn.",
    );
    // Nothing waits any more: the review's list is gone.
    expect((await runCli("review", "--ledger", path, "--dry-run")).stdout).not.toContain("waiting for apply");
    expect(undo.stdout).toMatch(/learned examples: none\n {2}notes: none/);
    const undone = await card(path, "search_flights");
    expect(undone.learned).toEqual({ examples: [], notes: [], notFor: [], exampleCall: null });

    const history = await runCli("history", "search_flights", "--ledger", path);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain(`revision ${id}  search_flights  [undone]`);
    expect(history.stdout).toContain("approved by:    alice");
    expect(history.stdout).toContain("undone by:      bob");
    expect(history.stdout).toContain("card version:   1 -> 2");
    const revisions: Revision[] = JSON.parse(
      (await runCli("history", "search_flights", "--ledger", path, "--json")).stdout,
    );
    expect(revisions.map((r) => [r.id, r.status, r.approvedBy, r.closedBy])).toEqual([[id, "undone", "alice", "bob"]]);

    const nothing = await runCli("undo", "search_flights", "--by", "bob", "--ledger", path);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('"search_flights" has no applied revision to undo.');
  });

  it("dismiss, cards, flags, partitions and configure", async () => {
    let run = await runCli("dismiss", "01NOSUCHREVISION", "--ledger", path);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('tool-lessons dismiss: No revision "01NOSUCHREVISION" in partition "default".');

    run = await runCli("cards", "--ledger", path, "--json");
    expect(run.code).toBe(0);
    const cards = JSON.parse(run.stdout);
    expect(cards.map((c: { name: string }) => c.name)).toEqual(["book_hotel", "get_weather", "search_flights"]);
    expect(cards[2]).toMatchObject({ version: 3, examples: { learned: 0, synthetic: 0 }, notes: 0, proposed: 0 });

    run = await runCli("flags", "--ledger", path, "--set", "minOffers=1", "--json");
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      expect.objectContaining({ tool: "get_weather", flag: "retrieved_never_called", offeredTurns: 2, calls: 0 }),
    ]);
    run = await runCli("flags", "--ledger", path, "--set", "minOffers=1");
    expect(run.stdout).toMatch(
      /^tool\s+flag\s+offered\s+calls\s+routed turns\nget_weather\s+retrieved_never_called\s+2\s+0\s+2\n$/,
    );

    run = await runCli("partitions", "--ledger", path);
    expect(run.stdout.trim()).toBe("default");

    run = await runCli("configure", "minMisses=3", "maxNewQueries=2", "--ledger", path, "--partition", "acme");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('stored for partition "acme": minMisses=3 maxNewQueries=2');
    run = await runCli("configure", "--show", "--json", "--ledger", path, "--partition", "acme");
    expect(JSON.parse(run.stdout)).toMatchObject({ minMisses: 3, maxNewQueries: 2, minCalls: 3 });
    run = await runCli("configure", "--show", "--ledger", path, "--partition", "acme");
    expect(run.stdout).toMatch(/minMisses\s+3\s+\(default 2\)/);
    expect((await runCli("partitions", "--ledger", path, "--json")).stdout).toContain('"acme"');
  });
});

describe("what review, apply and undo tell the operator to do next", () => {
  const revision = { id: "0mxrev1", tool: "lookup_order" } as Revision;

  it("names the partition a follow-up command needs (quoted only when the shell needs it)", () => {
    expect(renderWaiting([revision], "u:alice", new Set(["0mxrev1"]))).toEqual([
      "waiting for apply: tool-lessons apply ID --partition u:alice --by NAME   (or dismiss ID --partition u:alice)",
      "  lookup_order  0mxrev1",
    ]);
    expect(renderWaiting([revision], "team a")[0]).toContain('apply ID --partition "team a" --by NAME');
    expect(renderWaiting([], "default")).toEqual([]);
  });

  it("review --auto-apply says running agents serve what it applied from their next turn, and nothing waits", async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, "auto.db");
      const ledger = await openLedger({ path });
      try {
        await seed(ledger);
      } finally {
        await ledger.close();
      }
      const run = await runCli("review", "--auto-apply", "--ledger", path, "--wordings", "off");
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.split("\n")[0]).toBe(
        'partition "default": 1 revision applied; running agents serve it from their next turn.',
      );
      expect(run.stdout).not.toContain("waiting for apply");
    } finally {
      tmp.cleanup();
    }
  });

  it("apply and undo say where the change went and that running agents serve it from their next turn", () => {
    expect(appliedLine(revision, "u:alice")).toBe(
      'applied revision 0mxrev1 to lookup_order (partition "u:alice"); running agents serve it from their next turn.',
    );
    expect(undoneLine(revision, "u:alice", "bob")).toMatch(
      /^undid revision 0mxrev1 of lookup_order \(partition "u:alice", by bob\); .* running agents serve it from their next turn\.$/,
    );
  });
});
