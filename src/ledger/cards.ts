/**
 * Pure functions over tool cards as the ledger keeps them: build one from a LangChain tool,
 * fingerprint what the author wrote, and read the example sources of older rows. What a card
 * feeds is rendered elsewhere: the text routing searches in `index/routing-text.ts`, the
 * description the model is shown in `prompt/describe.ts`.
 */
import { createHash } from "node:crypto";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { type ExampleSource, ExampleSourceSchema, SCHEMA_VERSION, type ToolCard, ToolCardSchema } from "./schema.js";

/**
 * What a card is built from: any LangChain tool (`StructuredTool`, `tool()`,
 * `DynamicStructuredTool`, MCP-adapter tools) has these. `schema` may be a zod schema (zod 3 or 4)
 * or a plain JSON schema object.
 */
export interface ToolSource {
  name: string;
  description?: string;
  schema?: unknown;
}

/** One example request with where it came from. */
export interface ExampleWithSource {
  text: string;
  /** `synthetic`: augmentation; `learned`: a revision; `unknown`: hand-edited or older rows. */
  source: ExampleSource;
  revisionId?: string;
  addedAt?: number;
}

/**
 * A card for `tool` in `partition`, from the tool itself: its name, the author's description as
 * written, and the argument JSON schema (zod 3 or zod 4 converted the way LangChain converts it
 * when binding tools, so the card holds what the model is sent; a plain JSON schema is kept as
 * is). Nothing learned yet, no augmentation. Never from a model.
 * @throws InvalidInput for a blank name or partition, or a schema that cannot be converted.
 */
export function cardFromTool(tool: ToolSource, partition: string, now: number = Date.now()): ToolCard {
  if (typeof tool.name !== "string" || tool.name.trim() === "") {
    throw new InvalidInput("A tool needs a non-empty name to be registered.");
  }
  if (partition === "") throw new InvalidInput(`Tool "${tool.name}": the partition cannot be empty.`);
  const schema = jsonSchemaOf(tool.name, tool.schema);
  const properties = schema?.properties;
  const argNames =
    properties !== null && typeof properties === "object" && !Array.isArray(properties) ? Object.keys(properties) : [];
  return ToolCardSchema.parse({
    v: SCHEMA_VERSION,
    partition,
    name: tool.name,
    author: { description: tool.description ?? "", argNames, schema },
    augmented: null,
    learned: { examples: [], notes: [], notFor: [], exampleCall: null },
    version: 1,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * A hash of what the author wrote (description and argument schema, keys in canonical order).
 * Equal fingerprints mean re-registering the tool changes nothing.
 */
export function authorFingerprint(card: Pick<ToolCard, "author">): string {
  const canonical = canonicalJson({ description: card.author.description, schema: card.author.schema });
  return createHash("sha256").update(canonical).digest("hex");
}

const LenientExampleSchema = z.union([
  z.string().transform((text) => ({ text })),
  z
    .object({
      text: z.string(),
      source: z.unknown().optional(),
      revisionId: z.string().optional().catch(undefined),
      addedAt: z.number().optional().catch(undefined),
    })
    .loose(),
]);

/** A card row read leniently: older or hand-edited rows may lack example sources. */
const LenientCardSchema = z
  .object({
    author: z
      .object({ description: z.string().catch("") })
      .loose()
      .catch({ description: "" }),
    augmented: z.object({ description: z.string() }).loose().nullable().optional().catch(null),
    learned: z
      .object({ examples: z.array(z.unknown()).catch([]) })
      .loose()
      .catch({ examples: [] }),
  })
  .loose();

/**
 * Each example request of a card with where it came from. Parses leniently, so it also reads
 * older or hand-edited rows: an example with no (or an unknown) `source` marker counts as
 * `synthetic` when the card's augmented description differs from the author's (the row was
 * augmented), else as `unknown`. Malformed entries are skipped.
 */
export function exampleSources(card: ToolCard | Record<string, unknown>): ExampleWithSource[] {
  const parsed = LenientCardSchema.safeParse(card);
  if (!parsed.success) return [];
  const { author, augmented, learned } = parsed.data;
  const augmentedRow =
    augmented != null &&
    augmented.description.trim() !== "" &&
    augmented.description.trim() !== author.description.trim();
  const out: ExampleWithSource[] = [];
  for (const raw of learned.examples) {
    const example = LenientExampleSchema.safeParse(raw);
    if (!example.success) continue;
    const marker = "source" in example.data ? ExampleSourceSchema.safeParse(example.data.source) : undefined;
    const source: ExampleSource = marker?.success ? marker.data : augmentedRow ? "synthetic" : "unknown";
    const entry: ExampleWithSource = { text: example.data.text, source };
    if ("revisionId" in example.data && example.data.revisionId !== undefined)
      entry.revisionId = example.data.revisionId;
    if ("addedAt" in example.data && example.data.addedAt !== undefined) entry.addedAt = example.data.addedAt;
    out.push(entry);
  }
  return out;
}

// ------------------------------------------------------------------ internals

function jsonSchemaOf(name: string, schema: unknown): Record<string, unknown> | null {
  if (schema === undefined || schema === null) return null;
  let plain: unknown;
  try {
    const converted = toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]);
    // A JSON round trip: the card is stored as JSON, and the converter's result is cached and shared.
    plain = JSON.parse(JSON.stringify(converted));
  } catch (error) {
    throw new InvalidInput(
      `Tool "${name}": its argument schema could not be converted to JSON schema. Give the tool a zod object schema or a plain JSON schema.`,
      { cause: error, context: { tool: name } },
    );
  }
  if (plain === null || typeof plain !== "object" || Array.isArray(plain)) {
    throw new InvalidInput(`Tool "${name}": its argument schema is not a JSON schema object.`, {
      context: { tool: name },
    });
  }
  return plain as Record<string, unknown>;
}

/** JSON with object keys sorted at every level, so equal values give equal strings. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

/**
 * The texts of a card whose words a lesson may use (the gate's allowed words): its name, the
 * author's description, the argument names, and every string of the argument schema (property
 * names, descriptions, enum and const values, formats, patterns). Never what was learned, and
 * not the augmented description (a model wrote it).
 */
export function cardWords(card: Pick<ToolCard, "name" | "author">): string[] {
  const out = [card.name, card.author.description, ...card.author.argNames];
  const visit = (node: unknown, depth: number): void => {
    if (depth > 32 || node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const item of node)
        if (typeof item === "string") out.push(item);
        else visit(item, depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (typeof value === "string" && SCHEMA_TEXT_KEYS.has(key)) out.push(value);
      else if (key === "properties" && value !== null && typeof value === "object") out.push(...Object.keys(value));
      visit(value, depth + 1);
    }
  };
  visit(card.author.schema, 0);
  return out;
}

/** JSON schema keys whose string values are the author's words. */
const SCHEMA_TEXT_KEYS: ReadonlySet<string> = new Set([
  "description",
  "title",
  "const",
  "format",
  "pattern",
  "default",
  "examples",
]);
