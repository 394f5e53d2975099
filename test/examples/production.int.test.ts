/**
 * examples/production.ts as CI runs it: configured only through the environment, against the
 * local OpenAI-compatible server (for the hosted model), the real Postgres at POSTGRES_URL and a
 * real Chroma server started from the `chromadb` package.
 */
import { ChromaClient } from "chromadb";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main, productionConfig, type ProductionSummary } from "../../examples/production.js";
import { InvalidInput } from "../../src/errors.js";
import { readEnv } from "../../src/env.js";
import { startChromaServer, type ChromaServer } from "../../src/routing/chroma-server.js";
import { augmentScript, byRole, proposerScript, supportAgentScript } from "../helpers/openai-scripts.js";
import { type OpenAITestServer, startOpenAIServer } from "../helpers/openai-server.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";
import { plantedIn } from "../production/wire.js";

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[production.int] skipped: ${unavailable}`);

const PLANTED = ["482913", "771204", "660981", "319870", "zelda.quackenbush@example.test", "quackenbush"];
const schema = uniqueSchema("tl_example");
const collectionName = `production-example-${process.pid}`;

let openai: OpenAITestServer;
let chroma: ChromaServer;
let summary: ProductionSummary;
let env: Record<string, string>;

beforeAll(async () => {
  if (unavailable) return;
  [openai, chroma] = await Promise.all([startOpenAIServer(), startChromaServer()]);
  openai.onChat(byRole({ agent: supportAgentScript(), augment: augmentScript(), proposer: proposerScript() }));
  env = {
    OPENAI_API_KEY: "test-key",
    OPENAI_BASE_URL: openai.baseURL,
    TOOL_LESSONS_CHAT_MODEL: "gpt-4o-mini",
    TOOL_LESSONS_EMBEDDINGS_MODEL: "text-embedding-3-small",
    TOOL_LESSONS_POSTGRES_URL: POSTGRES_URL,
    TOOL_LESSONS_CHROMA_URL: chroma.url,
    TOOL_LESSONS_KEY: "the-example-secret-0123456789",
  };
  summary = await main({ env, quiet: true, postgresSchema: schema, collectionName });
}, 60_000);

afterAll(async () => {
  await openai?.close();
  await chroma?.stop();
  if (!unavailable) await dropSchema(schema);
});

describe.skipIf(unavailable !== null)(
  "examples/production.ts (ChatOpenAI + OpenAIEmbeddings + Postgres + Chroma)",
  () => {
    it("talks to the model and embeddings only at the configured base URL", () => {
      const paths = new Set(openai.requests.map((r) => r.path));
      expect([...paths].sort()).toEqual(["/v1/chat/completions", "/v1/embeddings"]);
      expect(openai.requests.every((r) => r.headers.authorization === "Bearer test-key")).toBe(true);
      expect(summary.registered).toHaveLength(8);
      expect(summary.augmented).toHaveLength(8);
    });

    it("runs the traffic through the routed agent, records it, learns from it and gets it right the next time", () => {
      expect(summary.traffic.map((t) => t.calls)).toEqual([
        ["lookup_order:refused", "lookup_order:ok"],
        ["lookup_order:refused", "lookup_order:ok"],
        ["track_shipment:refused", "track_shipment:ok"],
        ["send_email:ok"],
      ]);
      expect(summary.applied.map((a) => a.tool)).toContain("lookup_order");
      expect(summary.lookupOrderShown).toMatch(/Learned from use:\n- order_id must look like ORD-######/);
      expect(summary.again.calls).toEqual(["lookup_order:ok"]);
      expect(summary.callRecords).toBe(8);
    });

    it("keeps the ledger in Postgres (the configured schema) and the tool vectors in Chroma", async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".store`);
        expect(Number(rows[0].n)).toBeGreaterThan(8);
      } finally {
        await client.end();
      }
      const collection = await new ChromaClient({ host: chroma.host, port: chroma.port }).getCollection({
        name: collectionName,
      });
      // One record per tool, and one per kept wording of a served request (wordings are on by default).
      const { metadatas } = await collection.get({ include: ["metadatas"] });
      const kinds = metadatas.map((m) => String(m?.kind));
      expect(kinds.filter((k) => k === "tool")).toHaveLength(8);
      expect(kinds.filter((k) => k !== "tool" && k !== "wording")).toEqual([]);
    });

    it("sends no argument value in a prompt the package wrote (augmentation, proposals, tool descriptions)", () => {
      const chats = openai.requestsTo("chat");
      for (const r of chats) {
        const body = r.body as { messages: { role: string }[]; tools?: unknown[] };
        const system = body.messages.find((m) => m.role === "system");
        const packageWritten = system !== undefined ? [body] : (body.tools ?? []);
        expect(plantedIn(JSON.stringify(packageWritten), PLANTED)).toEqual([]);
      }
    });

    it("reads its configuration from the environment alone, naming what is missing", () => {
      expect(productionConfig(readEnv(env))).toMatchObject({
        chatModel: "gpt-4o-mini",
        chroma: { host: chroma.host, port: chroma.port },
      });
      const { TOOL_LESSONS_POSTGRES_URL: _pg, ...noPostgres } = env;
      expect(() => productionConfig(readEnv(noPostgres))).toThrow(InvalidInput);
      expect(() => productionConfig(readEnv(noPostgres))).toThrow(/TOOL_LESSONS_POSTGRES_URL/);
      const { OPENAI_API_KEY: _key, OPENAI_BASE_URL: _url, ...noKey } = env;
      expect(() => productionConfig(readEnv(noKey))).toThrow(/OPENAI_API_KEY/);
      const { TOOL_LESSONS_KEY: _secret, ...noSecret } = env;
      expect(() => productionConfig(readEnv(noSecret))).toThrow(/TOOL_LESSONS_KEY/);
      // A local server needs no real key.
      const { OPENAI_API_KEY: _k, ...local } = env;
      expect(productionConfig(readEnv(local)).apiKey).toBe("unused");
    });
  },
);
