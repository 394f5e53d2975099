/**
 * A fleet over one shared Chroma collection: the running agent's routing index and the operator's
 * (another ledger over the same SQLite file, another index and Chroma client over the same
 * collection) share the vectors. What the operator applies is routed on the agent's next turn,
 * even for a request the agent already routed (and kept), and the operator's index never empties
 * the partition under the agent while it searches.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { LessonManager } from "../../src/learn/manager.js";
import { ChromaVectorIndex } from "../../src/routing/chroma.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { DeskModel, deskTools, human } from "../graph/desk.js";
import { chromaForFile } from "../helpers/chroma.js";
import { proposeExample } from "../helpers/propose-example.js";

const chroma = chromaForFile("fleet-chroma.int");
const tmp = mkdtempSync(join(tmpdir(), "tool-lessons-fleet-chroma-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const WORDING = "whereabouts of my stuff right now";

describe("a fleet over one shared Chroma collection", () => {
  it("routes the operator's example on the agent's next turn, a kept route included, and never empties the partition", async (ctx) => {
    const server = chroma.need(ctx);
    const collectionName = `fleet-${process.pid}`;
    const deletes: unknown[] = [];
    const chromaStore = (watch: boolean) => (embeddings: EmbeddingsInterface) => {
      const store = new ChromaVectorIndex({ embeddings, collectionName, host: server.host, port: server.port });
      if (watch) {
        const remove = store.delete.bind(store);
        store.delete = async (params) => {
          deletes.push(params);
          return remove(params);
        };
      }
      return store;
    };
    const path = join(tmp, "ledger.db");
    const agentStore = await SqliteStore.open(path);
    const operatorStore = await SqliteStore.open(path);
    const failures: ToolLessonsFailure[] = [];
    const model = new DeskModel();
    const agent = createToolLessonsAgent({
      model,
      tools: deskTools(),
      store: agentStore,
      index: new ToolIndex({ ledger: new Ledger(agentStore), vectorStore: chromaStore(false) }),
      maxTools: 2,
      // What is tested is what is served, not how fast: a loaded machine must not skip routing.
      timeoutMs: 15_000,
      failureSink: (f) => failures.push(f),
    });
    let turns = 0;
    const routed = async () => {
      const state = await agent.invoke(
        { messages: [human(WORDING)] },
        { configurable: { thread_id: `chroma-${++turns}`, user_id: "alice" }, metadata: { user_id: "alice" } },
      );
      return state.routedTools as string[];
    };
    try {
      // The first turn registers the tools and fills the collection: on a loaded machine it may pass the turn's bound.
      await routed();
      failures.length = 0;
      const before = await routed();
      expect(before[0]).not.toBe("track_parcel");
      const operatorLedger = new Ledger(operatorStore);
      const manager = new LessonManager({
        ledger: operatorLedger,
        index: new ToolIndex({ ledger: operatorLedger, vectorStore: chromaStore(true) }),
      });
      const revision = await proposeExample(operatorLedger, "u:alice", "track_parcel", WORDING);
      await manager.apply(revision.id, { approvedBy: "ops", partition: "u:alice" });
      expect((await routed())[0]).toBe("track_parcel");
      // The operator's index wrote by id; it deleted nothing by partition.
      expect(deletes.filter((d) => (d as { filter?: unknown } | undefined)?.filter !== undefined)).toEqual([]);
      expect(failures).toEqual([]);
    } finally {
      await agent.recorder.flush();
      await operatorStore.close();
      await agentStore.close();
    }
  }, 120_000);
});
