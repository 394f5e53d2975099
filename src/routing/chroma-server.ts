/**
 * Starts the Chroma server that ships inside the `chromadb` npm package, as a child process, for
 * tests, benchmarks and users who want a local server without installing anything else.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { StoreUnavailable } from "../errors.js";

/** Options of {@link startChromaServer}. */
export interface StartChromaServerOptions {
  /**
   * Directory the server keeps its data in. When absent a fresh temporary directory is made and
   * removed again by `stop()`.
   * @default a new directory under the OS temp dir
   */
  path?: string;
  /**
   * Port to listen on.
   * @default a free port chosen by the OS
   */
  port?: number;
  /**
   * Address to listen on.
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * How long to wait for `/api/v2/heartbeat` to answer before giving up, in milliseconds.
   * @default 30000
   */
  startTimeoutMs?: number;
}

/** How long `stop()` waits after SIGINT before it sends SIGKILL, in milliseconds. */
const STOP_TIMEOUT_MS = 5_000;

/** The defaults applied to every {@link StartChromaServerOptions} field left unset (path and port excepted). */
export const DEFAULT_CHROMA_SERVER: Readonly<Required<Omit<StartChromaServerOptions, "path" | "port">>> = Object.freeze(
  {
    host: "127.0.0.1",
    startTimeoutMs: 30_000,
  },
);

/** A running Chroma server started by {@link startChromaServer}. */
export interface ChromaServer {
  /** Address it listens on. */
  host: string;
  /** Port it listens on. */
  port: number;
  /** `http://host:port`. */
  url: string;
  /** Its data directory. */
  path: string;
  /** Stops it (SIGINT, then SIGKILL after 5 s) and removes a temporary data directory. Idempotent. */
  stop(): Promise<void>;
}

/** The server's native binding does not load on this machine (wrong libc, platform or a missing package). */
export class ChromaBindingUnavailable extends StoreUnavailable {
  override name = "ChromaBindingUnavailable";
}

/**
 * Runs in the intermediate process (plain CommonJS, `node -e`): starts the Chroma CLI, forwards
 * SIGINT/SIGTERM to it, and stops it when its own stdin closes, which happens however the parent
 * ends (even SIGKILL), so a server is never left holding its port.
 */
const SUPERVISOR = `
const { spawn } = require("node:child_process");
const [killAfter, cli, ...args] = process.argv.slice(1);
const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "inherit", "inherit"] });
let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  child.kill("SIGINT");
  setTimeout(() => child.kill("SIGKILL"), Number(killAfter)).unref();
}
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
child.on("error", (e) => { console.error(String(e)); process.exit(1); });
child.on("exit", (code, signal) => process.exit(code === null ? (signal === "SIGINT" ? 0 : 1) : code));
`;

const BINDING_FAILURE =
  /GLIBC_|ERR_DLOPEN_FAILED|Cannot find module '?chromadb-js-bindings|Unsupported (platform|architecture|Windows)/;

/** Path of the `cli.mjs` the `chromadb` package ships (next to its resolved entry point). */
export function chromaCliPath(): string {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve("chromadb");
  } catch (cause) {
    throw new StoreUnavailable(
      "The chromadb package is not installed, so no Chroma server can be started. Install it with `npm install chromadb`.",
      { cause },
    );
  }
  // The CommonJS entry is dist/cjs/chromadb.cjs; the ESM one dist/chromadb.mjs. cli.mjs is in dist/.
  const dist = dirname(entry).endsWith("cjs") ? dirname(dirname(entry)) : dirname(entry);
  return join(dist, "cli.mjs");
}

/** Asks the OS for a free TCP port on `host`. */
export async function freePort(host = DEFAULT_CHROMA_SERVER.host): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function heartbeat(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(1_000) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts the Chroma server bundled in the `chromadb` package (`node .../chromadb/dist/cli.mjs run
 * --path DIR --host HOST --port PORT`) and resolves once `/api/v2/heartbeat` answers.
 *
 * The server runs under a small supervisor process that stops it when this process ends in any
 * way, so a crashed test run does not leave a server behind.
 *
 * @example
 * const server = await startChromaServer();
 * const index = await ChromaVectorIndex.create({ host: server.host, port: server.port, collectionName: "tools", embeddings });
 * // ...
 * await server.stop();
 *
 * @throws ChromaBindingUnavailable when the server's native binding cannot load on this machine.
 * @throws StoreUnavailable when the server does not start or answer in time.
 */
export async function startChromaServer(options: StartChromaServerOptions = {}): Promise<ChromaServer> {
  const host = options.host ?? DEFAULT_CHROMA_SERVER.host;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_CHROMA_SERVER.startTimeoutMs;

  const cli = chromaCliPath();
  const port = options.port ?? (await freePort(host));
  const ownsPath = options.path === undefined;
  const path = options.path ?? (await mkdtemp(join(tmpdir(), "tool-lessons-chroma-")));
  const url = `http://${host}:${port}`;

  const child = spawn(
    process.execPath,
    [
      "-e",
      SUPERVISOR,
      String(Math.max(100, STOP_TIMEOUT_MS - 500)),
      cli,
      "run",
      "--path",
      path,
      "--host",
      host,
      "--port",
      String(port),
    ],
    { stdio: ["pipe", "pipe", "pipe"], detached: true },
  );
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
  });
  // Neither the child nor its pipes keep this process alive; the supervisor notices our exit.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined || exited) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const onParentExit = () => killGroup("SIGINT");
  process.once("exit", onParentExit);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      process.removeListener("exit", onParentExit);
      if (!exited && child.pid !== undefined) {
        try {
          process.kill(child.pid, "SIGINT");
        } catch {
          // Already gone.
        }
        const timer = sleep(STOP_TIMEOUT_MS).then(() => "timeout" as const);
        if ((await Promise.race([exitedPromise.then(() => "exited" as const), timer])) === "timeout") {
          killGroup("SIGKILL");
          await Promise.race([exitedPromise, sleep(1_000)]);
        }
      }
      child.stdin?.destroy();
      if (ownsPath) await rm(path, { recursive: true, force: true });
    })();
    return stopped;
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (await heartbeat(url)) break;
    if (exited || Date.now() > deadline) {
      await stop();
      const tail = output.trim().split("\n").slice(-15).join("\n");
      const context = { host, port, path, cli };
      if (BINDING_FAILURE.test(output)) {
        throw new ChromaBindingUnavailable(
          `The Chroma server bundled in chromadb cannot load its native binding on this machine. On Linux with glibc < 2.38 pin "chromadb-js-bindings-linux-x64-gnu": "1.0.5" in package.json "overrides". Output:\n${tail}`,
          { context },
        );
      }
      throw new StoreUnavailable(
        exited
          ? `The Chroma server exited before answering on ${url}. Output:\n${tail}`
          : `The Chroma server did not answer on ${url}/api/v2/heartbeat within ${startTimeoutMs} ms. Output:\n${tail}`,
        { context },
      );
    }
    await sleep(50);
  }
  return { host, port, url, path, stop };
}
