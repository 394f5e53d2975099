/**
 * A Chroma server for one integration test file: started from the `chromadb` package's bundled
 * server before the file's tests and stopped after them. When the native binding cannot load on
 * this machine, the file's tests are skipped with the reason printed, never silently; any other
 * failure to start fails the file.
 */
import { afterAll, beforeAll, type TestContext } from "vitest";
import {
  ChromaBindingUnavailable,
  startChromaServer,
  type ChromaServer,
  type StartChromaServerOptions,
} from "../../src/routing/chroma-server.js";

/** The file's Chroma server, as {@link chromaForFile} started it. */
export interface FileChroma {
  /** The running server (undefined before the file's `beforeAll`, and when skipped). */
  readonly server: ChromaServer | undefined;
  /** Why the file's tests are skipped, when the binding could not load. */
  readonly skipReason: string | undefined;
  /** The running server; when there is none, the test is skipped with the reason. */
  need(ctx: TestContext): ChromaServer;
}

/**
 * Start a Chroma server for the calling test file (its `beforeAll`), stop it after (its
 * `afterAll`). `label` names the file in the printed skip reason.
 */
export function chromaForFile(label: string, options: StartChromaServerOptions = {}): FileChroma {
  let server: ChromaServer | undefined;
  let skipReason: string | undefined;
  beforeAll(async () => {
    try {
      server = await startChromaServer(options);
    } catch (error) {
      if (!(error instanceof ChromaBindingUnavailable)) throw error;
      skipReason = error.message;
      console.warn(`[${label}] skipped: ${skipReason}`);
    }
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get server() {
      return server;
    },
    get skipReason() {
      return skipReason;
    },
    need(ctx) {
      if (!server) {
        ctx.skip(skipReason);
        throw new Error("unreachable");
      }
      return server;
    },
  };
}
