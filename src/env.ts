import { z } from "zod";
import { InvalidInput } from "./errors.js";

/**
 * The one place tool-lessons reads environment variables. Everything else takes explicit
 * options and falls back to {@link readEnv}, so a test or an embedding application can pass its
 * own environment and nothing reads `process.env` behind its back.
 *
 * | variable                    | field         | used by                                        |
 * |-----------------------------|---------------|------------------------------------------------|
 * | `TOOL_LESSONS_LEDGER`       | `ledgerPath`  | `openLedger`: the SQLite file (default `.tool-lessons/ledger.db`) |
 * | `TOOL_LESSONS_POSTGRES_URL` | `postgresUrl` | `openLedger`: use Postgres instead of SQLite   |
 * | `TOOL_LESSONS_CHROMA_URL`   | `chromaUrl`   | the Chroma index                               |
 * | `OPENAI_BASE_URL`           | `openaiBaseUrl` | an OpenAI-compatible server (Ollama, vLLM, a proxy) instead of the hosted API |
 * | `OPENAI_API_KEY`            | `openaiApiKey`  | the key the chat model and embeddings send     |
 * | `TOOL_LESSONS_CHAT_MODEL`   | `chatModel`     | the chat model's name (agent, augmentation, proposer) |
 * | `TOOL_LESSONS_EMBEDDINGS_MODEL` | `embeddingsModel` | the embeddings model's name (routing)     |
 * | `TOOL_LESSONS_KEY`          | `ledgerKey`     | the ledger's secret: the key of its fingerprints and word tokens (required over Postgres) |
 *
 * The model variables are read here for an application's wiring (examples/production.ts); the
 * package itself takes its chat model and embeddings as objects and reads none of them. The two
 * `OPENAI_*` names are the ones the OpenAI clients already know; read here and passed explicitly,
 * nothing else needs to read them.
 *
 * Explicit options always win over the environment. A variable set to an empty string counts
 * as unset.
 */
export interface ToolLessonsEnv {
  /** Path of the SQLite ledger file, from `TOOL_LESSONS_LEDGER`. */
  ledgerPath?: string;
  /** Postgres connection string for the ledger, from `TOOL_LESSONS_POSTGRES_URL`. */
  postgresUrl?: string;
  /** Base URL of a Chroma server, from `TOOL_LESSONS_CHROMA_URL`. */
  chromaUrl?: string;
  /** Base URL of an OpenAI-compatible API (`http://localhost:11434/v1` for Ollama), from `OPENAI_BASE_URL`. */
  openaiBaseUrl?: string;
  /** API key of the chat model and embeddings, from `OPENAI_API_KEY`. Never put in a message or a log. */
  openaiApiKey?: string;
  /** Name of the chat model, from `TOOL_LESSONS_CHAT_MODEL`. */
  chatModel?: string;
  /** Name of the embeddings model, from `TOOL_LESSONS_EMBEDDINGS_MODEL`. */
  embeddingsModel?: string;
  /**
   * The ledger's secret (the key of its fingerprints and word tokens), from `TOOL_LESSONS_KEY`:
   * at least 16 characters, the same in every process of the ledger. Never put in a message or a log.
   */
  ledgerKey?: string;
}

/** Environment variable behind each field of {@link ToolLessonsEnv}. */
export const ENV_VARIABLES = {
  ledgerPath: "TOOL_LESSONS_LEDGER",
  postgresUrl: "TOOL_LESSONS_POSTGRES_URL",
  chromaUrl: "TOOL_LESSONS_CHROMA_URL",
  openaiBaseUrl: "OPENAI_BASE_URL",
  openaiApiKey: "OPENAI_API_KEY",
  chatModel: "TOOL_LESSONS_CHAT_MODEL",
  embeddingsModel: "TOOL_LESSONS_EMBEDDINGS_MODEL",
  ledgerKey: "TOOL_LESSONS_KEY",
} as const satisfies Record<keyof ToolLessonsEnv, string>;

const blankAsUnset = (value: unknown) => (typeof value === "string" && value.trim() === "" ? undefined : value);

const EnvSchema = z.object({
  ledgerPath: z.preprocess(blankAsUnset, z.string().optional()),
  postgresUrl: z.preprocess(
    blankAsUnset,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// connection string")
      .optional(),
  ),
  chromaUrl: z.preprocess(blankAsUnset, z.url({ protocol: /^https?$/ }).optional()),
  openaiBaseUrl: z.preprocess(blankAsUnset, z.url({ protocol: /^https?$/ }).optional()),
  openaiApiKey: z.preprocess(blankAsUnset, z.string().optional()),
  chatModel: z.preprocess(blankAsUnset, z.string().optional()),
  embeddingsModel: z.preprocess(blankAsUnset, z.string().optional()),
  ledgerKey: z.preprocess(blankAsUnset, z.string().optional()),
});

/**
 * Read tool-lessons' settings from the environment.
 * @param env The environment to read.
 * @default process.env
 * @throws InvalidInput naming the variable when a value is malformed (e.g. a Postgres URL that
 *   is not a `postgres://` connection string), so a typo fails at startup, not at first write.
 */
export function readEnv(env: Record<string, string | undefined> = process.env): ToolLessonsEnv {
  const raw = Object.fromEntries(Object.entries(ENV_VARIABLES).map(([field, variable]) => [field, env[variable]]));
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const field = String(i.path[0]) as keyof ToolLessonsEnv;
      return `${ENV_VARIABLES[field] ?? field}: ${i.message}`;
    });
    throw new InvalidInput(`Invalid tool-lessons environment: ${issues.join("; ")}`, { context: { issues } });
  }
  const out: ToolLessonsEnv = {};
  for (const [field, value] of Object.entries(parsed.data) as [keyof ToolLessonsEnv, string | undefined][]) {
    if (value !== undefined) out[field] = value.trim();
  }
  return out;
}
