import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { tool } from "@langchain/core/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInput, KeyRequired, StoreUnavailable } from "../../../src/errors.js";
import { encodeLabel } from "../../../src/ledger/keys.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import { openLedger } from "../../../src/ledger/open.js";
import { PostgresLedger } from "../../../src/ledger/postgres.js";
import { SqliteStore } from "../../../src/ledger/sqlite-store.js";
import { ToolLessonsCallbackHandler } from "../../../src/record/handler.js";
import { valueFingerprints } from "../../../src/text/fingerprint.js";
import { wordHash } from "../../../src/text/free-text.js";
import { buildAgent, planScript, ScriptedChatModel } from "../../helpers/record-agent.js";

/**
 * The ledger's key (issue 44, item 4): never a row of the store it keys; an app secret, else a
 * 0600 key file beside a SQLite ledger, else a per-process key for an in-memory store, else a
 * typed refusal; and the partition is part of every MAC.
 */

const quiet = { failureSink: () => undefined };
/** No environment: what a ledger does when the app gives nothing. */
const bare = { ...quiet, env: {} };
const SECRET = "an-app-secret-0123456789";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tl-key-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A store of one's own: neither a file nor in this process only (as Postgres is to the ledger). */
class OwnStore extends InMemoryStore {}
function ownStore(): BaseStore {
  // Not an InMemoryStore to the ledger: its prototype chain hides it, as any BaseStore of one's own would.
  const inner = new OwnStore();
  return new Proxy(inner, {
    getPrototypeOf: () => Object.prototype,
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as BaseStore;
}

describe("a SQLite ledger without a secret keeps its key in a 0600 file beside it", () => {
  it("makes <ledger>.key (mode 0600, 32 random bytes as hex) and reads the same key when reopened", async () => {
    const path = join(dir, "ledger.db");
    const first = await openLedger({ path, ...bare });
    const key = await first.fingerprintKey("u:alice");
    await first.close();
    const file = `${path}.key`;
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
    const second = await openLedger({ path, ...bare });
    expect(await second.fingerprintKey("u:alice")).toBe(key);
    await second.close();
    // No temporary file is left beside it.
    expect(readdirSync(dir).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("every ledger opened on the file at once agrees (the file is linked whole, never read half-written)", async () => {
    const path = join(dir, "ledger.db");
    const ledgers = await Promise.all(Array.from({ length: 4 }, () => openLedger({ path, ...bare })));
    const keys = await Promise.all(ledgers.map((l) => l.fingerprintKey("p")));
    expect(new Set(keys).size).toBe(1);
    await Promise.all(ledgers.map((l) => l.close()));
  });

  it("the ledger file holds neither the secret nor any partition's key, after recording", async () => {
    const path = join(dir, "ledger.db");
    const ledger = await openLedger({ path, ...bare });
    const secret = readFileSync(`${path}.key`, "utf8").trim();
    await recordRefusals(ledger, [{ user: "alice", thread: "t1" }]);
    const key = await ledger.fingerprintKey("u:alice");
    await ledger.close();
    const bytes = Buffer.concat(
      readdirSync(dir)
        .filter((f) => f.startsWith("ledger.db") && !f.endsWith(".key"))
        .map((f) => readFileSync(join(dir, f))),
    ).toString("latin1");
    expect(bytes).not.toContain(secret);
    expect(bytes).not.toContain(key);
    expect(bytes).not.toMatch(/[0-9a-f]{64}/);
  });

  it("refuses a key file other users can read, and one that holds no key, saying how to fix it", async () => {
    const path = join(dir, "ledger.db");
    writeFileSync(`${path}.key`, `${"ab".repeat(32)}\n`, { mode: 0o644 });
    chmodSync(`${path}.key`, 0o644);
    const open = openLedger({ path, ...bare });
    await expect(open).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(open).rejects.toThrow(/chmod 600/);
    chmodSync(`${path}.key`, 0o600);
    expect(await (await openLedger({ path, ...bare })).fingerprintKey("p")).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(`${path}.key`, "not a key\n", { mode: 0o600 });
    await expect(openLedger({ path, ...bare })).rejects.toThrow(/does not hold a key/);
  });

  it("a secret given makes no key file", async () => {
    const path = join(dir, "ledger.db");
    const ledger = await openLedger({ path, ...quiet, secret: SECRET });
    await ledger.fingerprintKey("p");
    await ledger.close();
    expect(existsSync(`${path}.key`)).toBe(false);
  });
});

describe("the secret: an option, or TOOL_LESSONS_KEY", () => {
  it("the option and the environment variable give the same keys; the option wins", async () => {
    const byOption = new Ledger(ownStore(), { ...quiet, secret: SECRET });
    const byEnv = new Ledger(ownStore(), { ...quiet, env: { ledgerKey: SECRET } });
    const both = new Ledger(ownStore(), { ...quiet, secret: SECRET, env: { ledgerKey: "another-secret-0123456789" } });
    const key = await byOption.fingerprintKey("p");
    expect(await byEnv.fingerprintKey("p")).toBe(key);
    expect(await both.fingerprintKey("p")).toBe(key);
    expect(
      await new Ledger(ownStore(), { ...quiet, secret: "another-secret-0123456789" }).fingerprintKey("p"),
    ).not.toBe(key);
  });

  it("refuses a secret too short to be one", () => {
    for (const secret of ["", "short", "x".repeat(15)]) {
      expect(() => new Ledger(ownStore(), { ...quiet, secret })).toThrow(InvalidInput);
    }
    expect(() => new Ledger(ownStore(), { ...quiet, secret: 42 as unknown as string })).toThrow(InvalidInput);
  });

  it("is never printed: not by inspect, not by JSON, not in an error", () => {
    const ledger = new Ledger(ownStore(), { ...quiet, secret: SECRET });
    expect(inspect(ledger, { depth: 10, showHidden: true })).not.toContain(SECRET);
    expect(() => new Ledger(ownStore(), { ...quiet, secret: SECRET.slice(0, 10) })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(SECRET.slice(0, 10)) }),
    );
  });
});

describe("a store with no file and no secret refuses to open (Postgres, a store of one's own)", () => {
  it("new Ledger over a store of one's own: KeyRequired naming the variable and the option", () => {
    let thrown: unknown;
    try {
      new Ledger(ownStore(), bare);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KeyRequired);
    expect(thrown).toBeInstanceOf(InvalidInput);
    expect((thrown as Error).message).toMatch(/TOOL_LESSONS_KEY/);
    expect((thrown as Error).message).toMatch(/\{ secret \}/);
  });

  it("openLedger over Postgres refuses before connecting; PostgresLedger.fromConnString likewise", async () => {
    // Nothing listens at this address: a connection attempt would fail with StoreUnavailable instead.
    const url = "postgresql://nobody@127.0.0.1:1/none";
    await expect(openLedger({ postgresUrl: url, ...bare })).rejects.toBeInstanceOf(KeyRequired);
    await expect(openLedger({ ...bare, env: { postgresUrl: url } })).rejects.toBeInstanceOf(KeyRequired);
    expect(() => PostgresLedger.fromConnString(url, bare)).toThrow(KeyRequired);
    const given = PostgresLedger.fromConnString(url, { ...quiet, secret: SECRET });
    expect(await given.fingerprintKey("p")).toMatch(/^[0-9a-f]{64}$/);
    await given.close();
  });

  it("the getting-started defaults need nothing: an in-memory store keys with the process's key", async () => {
    const store = new InMemoryStore();
    const a = new Ledger(store, bare);
    const b = new Ledger(store, bare);
    expect(await a.fingerprintKey("p")).toBe(await b.fingerprintKey("p"));
    const sqliteMemory = new Ledger(await SqliteStore.open(":memory:"), bare);
    expect(await sqliteMemory.fingerprintKey("p")).toMatch(/^[0-9a-f]{64}$/);
    await sqliteMemory.store.stop();
  });
});

describe("the partition is part of every MAC", () => {
  it("one value fingerprints, and one word tokenizes, differently in two partitions", async () => {
    const ledger = new Ledger(new InMemoryStore(), { ...quiet, secret: SECRET });
    const [a, b] = await Promise.all([ledger.fingerprintKey("u:alice"), ledger.fingerprintKey("u:bob")]);
    expect(a).not.toBe(b);
    const values = { customer: "Quillfeather", order: "ORD-4821" };
    const fa = new Set(valueFingerprints(values, a));
    expect(valueFingerprints(values, b).some((f) => fa.has(f))).toBe(false);
    expect(wordHash("Quillfeather", a)).not.toBe(wordHash("Quillfeather", b));
    // Partitions whose keys look alike still differ (the key is a MAC of the whole partition key).
    expect(await ledger.fingerprintKey("u:alice ")).not.toBe(a);
    expect(await ledger.fingerprintKey("u:alic")).not.toBe(a);
  });

  it("through the recorder: a word one partition stored as a token is another token in another partition", async () => {
    const ledger = new Ledger(new InMemoryStore(), { ...quiet, secret: SECRET });
    await recordRefusals(ledger, [
      { user: "alice", thread: "t1" },
      { user: "bob", thread: "t2" },
    ]);
    const tokenOf = async (partition: string): Promise<string[]> => {
      const rows = await ledger.store.search(["tool-lessons", encodeLabel(partition), "calls"], { limit: 100 });
      return rows.flatMap((r) => String(r.value.errorMessage ?? "").match(/<w:[a-p]+>/g) ?? []);
    };
    const [alice, bob] = await Promise.all([tokenOf("u:alice"), tokenOf("u:bob")]);
    expect(alice.length).toBeGreaterThan(0);
    expect(bob.length).toBeGreaterThan(0);
    expect(alice.filter((t) => bob.includes(t))).toEqual([]);
  });
});

/**
 * Runs of a real agent whose tool refuses with an uncommon surname in its error, one per caller
 * and thread, recorded through the callback handler.
 */
async function recordRefusals(ledger: Ledger, runs: { user: string; thread: string }[]): Promise<void> {
  const lookup = tool(
    async () => {
      throw new Error("Account holder Quillfeather has no such record");
    },
    { name: "lookup_account", description: "Look up an account.", schema: z.object({ account: z.string() }) },
  );
  const agent = buildAgent({
    model: new ScriptedChatModel(
      planScript((step) => (step === 0 ? [{ name: "lookup_account", args: { account: "A-1" } }] : undefined)),
    ),
    tools: [lookup],
  });
  const handler = new ToolLessonsCallbackHandler({ ledger, ...quiet });
  for (const { user, thread } of runs) {
    await agent.invoke(
      { messages: [{ role: "user", content: "check the account please" }] },
      { callbacks: [handler], metadata: { user_id: user }, configurable: { thread_id: thread } },
    );
  }
  await handler.flush();
}
