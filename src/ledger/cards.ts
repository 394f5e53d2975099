/**
 * Pure functions over tool cards: build one from a LangChain tool, fingerprint what the author
 * wrote, and render the two texts a card feeds: the text routing searches and the description the
 * model is shown. Who reads what is fixed here and nowhere else:
 *
 * | part                          | routing searches it | model is shown it                         |
 * |-------------------------------|---------------------|-------------------------------------------|
 * | author's description          | when not augmented  | yes                                       |
 * | augmented description         | yes                 | only when the author wrote none           |
 * | example requests (all)        | yes                 | learned ones only with showLearnedExamples |
 * | usage notes, "Not for", call  | no                  | yes, under "Learned from use:"            |
 */
import { createHash } from "node:crypto";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { splitWords } from "../index/tokenize.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";
import { type ExampleSource, ExampleSourceSchema, SCHEMA_VERSION, type ToolCard, ToolCardSchema } from "./schema.js";
import { oneLine } from "../internal.js";

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

/** The per-vector parts of a card's routing text (see {@link routingTexts}). */
/** The parts of a card routing reads. */
export type RoutedCard = Pick<ToolCard, "name" | "author" | "augmented" | "learned">;

export interface RoutingTexts {
  /** Name, name split into words, description (augmented preferred), argument names. */
  tool: string;
  /** Example requests of every source, trimmed, duplicates dropped, in stored order. */
  examples: string[];
}

/** One example request with where it came from. */
export interface ExampleWithSource {
  text: string;
  /** `synthetic`: augmentation; `learned`: a revision; `unknown`: hand-edited or older rows. */
  source: ExampleSource;
  revisionId?: string;
  addedAt?: number;
}

/** The heading learned lines go under in what the model is shown. */
export const LEARNED_HEADING = "Learned from use:";

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

/**
 * The text routing searches for a card, one part per line: the tool part of
 * {@link routingTexts}, then each example request. Never the usage notes, the "Not for" lines or
 * the example call: a description that lists what a tool is not for attracts exactly those requests.
 */
export function routingText(card: RoutedCard): string {
  const { tool, examples } = routingTexts(card);
  return [tool, ...examples].join("\n");
}

/**
 * The routing text split for one-vector-per-part indexing: `tool` (name, its words, description,
 * argument names) and each example request on its own, so an index can embed one vector per tool
 * or one per example request.
 */
export function routingTexts(card: RoutedCard): RoutingTexts {
  const nameWords = splitWords(card.name).join(" ");
  const description = oneLine(card.augmented?.description ?? "") || oneLine(card.author.description);
  const args = card.author.argNames.map((arg) => splitWords(arg).join(" ")).filter((a) => a !== "");
  const toolParts = [card.name, nameWords === card.name ? "" : nameWords, description, args.join(" ")];
  const seen = new Set<string>();
  const examples: string[] = [];
  for (const example of card.learned.examples) {
    const text = oneLine(example.text);
    const key = text.toLowerCase();
    if (text === "" || seen.has(key)) continue;
    seen.add(key);
    examples.push(text);
  }
  return { tool: toolParts.filter((p) => p !== "").join("\n"), examples };
}

/**
 * The description the model is shown: the author's description as written (the augmented one
 * only when the author wrote none), then, when anything was learned, a "Learned from use:"
 * heading and one line per usage note, "Not for …; use …" line and the example call. Learned
 * example requests are added only with `showLearnedExamples`; synthetic ones never.
 * Byte-stable: the same card gives the same string (lines in stored order).
 */
export function modelDescription(
  card: ToolCard,
  settings: Pick<Settings, "showLearnedExamples"> = DEFAULT_SETTINGS,
): string {
  const authored = card.author.description;
  const base = authored.trim() !== "" ? authored : (card.augmented?.description ?? "");
  const lines: string[] = [];
  for (const note of card.learned.notes) lines.push(oneLine(note.text));
  for (const notFor of card.learned.notFor) lines.push(oneLine(notFor.text));
  if (card.learned.exampleCall) {
    const call = oneLine(card.learned.exampleCall.text);
    lines.push(/^example call:/i.test(call) ? call : `Example call: ${call}`);
  }
  if (settings.showLearnedExamples) {
    const asked = card.learned.examples.filter((e) => e.source === "learned").map((e) => `"${oneLine(e.text)}"`);
    if (asked.length > 0) lines.push(`Also asked for as: ${asked.join("; ")}`);
  }
  const learned = lines.filter((l) => l !== "");
  if (learned.length === 0) return base;
  const head = base.trimEnd();
  return `${head === "" ? "" : `${head}\n\n`}${LEARNED_HEADING}\n${learned.map((l) => `- ${l}`).join("\n")}`;
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
    author: z.object({ description: z.string().catch("") }).loose().catch({ description: "" }),
    augmented: z.object({ description: z.string() }).loose().nullable().optional().catch(null),
    learned: z.object({ examples: z.array(z.unknown()).catch([]) }).loose().catch({ examples: [] }),
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
    augmented != null && augmented.description.trim() !== "" && augmented.description.trim() !== author.description.trim();
  const out: ExampleWithSource[] = [];
  for (const raw of learned.examples) {
    const example = LenientExampleSchema.safeParse(raw);
    if (!example.success) continue;
    const marker = "source" in example.data ? ExampleSourceSchema.safeParse(example.data.source) : undefined;
    const source: ExampleSource = marker?.success ? marker.data : augmentedRow ? "synthetic" : "unknown";
    const entry: ExampleWithSource = { text: example.data.text, source };
    if ("revisionId" in example.data && example.data.revisionId !== undefined) entry.revisionId = example.data.revisionId;
    if ("addedAt" in example.data && example.data.addedAt !== undefined) entry.addedAt = example.data.addedAt;
    out.push(entry);
  }
  return out;
}

/**
 * The user's tools re-described for binding to the model: each tool that has a card and whose
 * {@link modelDescription} differs from its own description is replaced by a view of the original
 * (`Object.create(tool)`) with only `description` overridden. Everything else is the original,
 * live: name, schema, function, `invoke`, `instanceof`. So `ToolNode` runs the original code, the
 * callbacks see one tool run under the original name, and `bindTools` sends the new description.
 * Tools without a card, or with nothing to add, are returned as they are.
 *
 * The author's description is taken from the tool itself, so a card registered from an older
 * docstring still shows the current one.
 */
export function withDescriptions<T extends ToolSource & object>(
  tools: readonly T[],
  cards: readonly ToolCard[] | ReadonlyMap<string, ToolCard>,
  settings: Pick<Settings, "showLearnedExamples"> = DEFAULT_SETTINGS,
): T[] {
  const byName: ReadonlyMap<string, ToolCard> = Array.isArray(cards)
    ? new Map((cards as readonly ToolCard[]).map((c) => [c.name, c]))
    : (cards as ReadonlyMap<string, ToolCard>);
  return tools.map((tool) => {
    const card = byName.get(tool.name);
    if (!card) return tool;
    const current = tool.description ?? "";
    const description = modelDescription({ ...card, author: { ...card.author, description: current } }, settings);
    if (description === current) return tool;
    const view = Object.create(tool) as T;
    Object.defineProperty(view, "description", {
      value: description,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return view;
  });
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

