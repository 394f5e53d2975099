import { once } from "node:events";
import net from "node:net";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore, type PostgresStore } from "../../src/ledger/postgres.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { echoTwiceAgent } from "../helpers/record-agent.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

/**
 * Postgres going away under a recording agent, and coming back. The machine's shared cluster is
 * never stopped (other suites use it): the recorder reaches it through a TCP proxy on loopback
 * that the test cuts (every connection reset, new ones refused, as a server that went down) and
 * opens again on the same port (as the server back after a restart).
 */
const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[skip] record/postgres-fault: ${unavailable}`);

/** A loopback TCP proxy to the test Postgres that can be cut and restored. */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    server.listen(this.port, "127.0.0.1");
    await once(server, "listening");
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Postgres "down": connections reset, new ones refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(): string {
    const url = new URL(POSTGRES_URL);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }
}

describe.skipIf(unavailable !== null)("recording while Postgres goes down and comes back", () => {
  const schema = uniqueSchema("tl_fault");
  const target = new URL(POSTGRES_URL);
  const proxy = new CuttableProxy(target.hostname, Number(target.port || 5432));
  let store: PostgresStore;
  let direct: PostgresStore;
  let ledger: Ledger;
  let handler: ToolLessonsCallbackHandler;
  const errors: ToolLessonsFailure[] = [];
  const graph = echoTwiceAgent();
  let runs = 0;
  /** n runs of 2 calls and a turn each (3 records), all of which must succeed. */
  const burst = async (n: number) => {
    const states = await Promise.all(
      Array.from({ length: n }, () => {
        const i = runs++;
        return graph.invoke(
          { messages: [new HumanMessage(`go ${i}`)] },
          { configurable: { thread_id: `t${i}` }, metadata: { user_id: "fault" }, callbacks: [handler] },
        );
      }),
    );
    for (const state of states) expect(state.messages.at(-1)?.content).toBe("done");
  };
  /** Rows in the database, read past the proxy. */
  const stored = async () => {
    const reader = new Ledger(direct, { failureSink: () => undefined });
    return { calls: (await reader.listCalls("u:fault")).length, turns: (await reader.listTurns("u:fault")).length };
  };

  beforeAll(async () => {
    await proxy.open();
    store = await openPostgresStore(proxy.url(), { schema, connectionTimeoutMs: 2_000, onIdleError: () => undefined });
    direct = await openPostgresStore(POSTGRES_URL, { schema });
    ledger = new Ledger(store, { failureSink: () => undefined });
    await ledger.configure("u:fault", { retainCallsPerTool: 5_000 });
    handler = new ToolLessonsCallbackHandler({
      ledger,
      maxBuffer: 60,
      maxRetryDelayMs: 100,
      failureSink: (f) => errors.push(f),
    });
  });

  afterAll(async () => {
    await proxy.cut();
    await store?.stop().catch(() => undefined);
    await direct?.stop();
    await dropSchema(schema);
  }, 30_000);

  it("writes while Postgres is up", async () => {
    await burst(5);
    expect(await handler.flush()).toMatchObject({ written: 15, inFlight: 0, lost: 0 });
    expect(await stored()).toEqual({ calls: 10, turns: 5 });
  });

  it("Postgres down: the runs succeed, their records are buffered, and written by the retries once it is back", async () => {
    await proxy.cut();
    await burst(10);
    const during = await handler.flush({ timeoutMs: 5_000 });
    expect(during).toMatchObject({ written: 0, inFlight: 30, lost: 0 });
    expect(handler.stats()).toMatchObject({ storeFailing: true, dropped: 0, failed: 0 });
    expect(errors.filter((f) => f.kind === "store_write")).toHaveLength(1);

    await proxy.open();
    // No flush: the handler's own retries find the server back.
    await vi.waitFor(() => expect(handler.stats()).toMatchObject({ storeFailing: false, buffered: 0 }), {
      timeout: 15_000,
      interval: 100,
    });
    expect(handler.stats()).toMatchObject({ written: { calls: 30, turns: 15 }, dropped: 0, failed: 0 });
    expect(await stored()).toEqual({ calls: 30, turns: 15 });
  }, 30_000);

  it("an outage longer than the buffer: the drops are counted and said to be the store's, the rest written after", async () => {
    errors.length = 0;
    await proxy.cut();
    // 90 records into a 60-record buffer while the store fails: 60 kept, 30 dropped, no run fails.
    await burst(10);
    await handler.flush({ timeoutMs: 5_000 });
    await burst(20);
    const stats = handler.stats();
    expect(stats).toMatchObject({
      buffered: 60,
      waiting: 0,
      dropped: 30,
      droppedBy: { storeFailed: 30, slowStore: 0 },
    });
    const drops = errors.filter((f) => f.kind.startsWith("dropped_"));
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ kind: "dropped_store_failed", context: { reason: "store_failed", records: 3 } });
    expect(drops[0].message).toMatch(/while the ledger's store fails/);

    await proxy.open();
    const after = await handler.flush({ timeoutMs: 15_000 });
    expect(after).toMatchObject({ written: 60, inFlight: 0, lost: 0 });
    expect(await stored()).toEqual({ calls: 30 + 40, turns: 15 + 20 });
  }, 30_000);
});
