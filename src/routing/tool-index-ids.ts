/**
 * Ids and hashes of the routing index's vectors (`tool-index.ts`): which store record holds which
 * card part or wording, and when a card must be embedded again.
 */
import { createHash } from "node:crypto";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { encodeLabel } from "../ledger/keys.js";
import type { ToolCard } from "../ledger/schema.js";
import { LexicalEmbeddings } from "./lexical-embeddings.js";
import { routingTexts } from "./routing-text.js";

/**
 * True for the package's lexical embeddings as they are (a subclass overriding how it embeds gets
 * its own methods called, densely).
 */
export function ownLexical(embeddings: EmbeddingsInterface): embeddings is LexicalEmbeddings {
  return embedsAs(embeddings, LexicalEmbeddings);
}

/** True for an instance of `kind` that embeds with `kind`'s own `embedDocuments` and `embedQuery`. */
export function embedsAs<T extends EmbeddingsInterface>(
  embeddings: EmbeddingsInterface,
  kind: abstract new (...args: never[]) => T,
): embeddings is T {
  const own = kind.prototype as EmbeddingsInterface;
  return (
    embeddings instanceof kind &&
    embeddings.embedDocuments === own.embedDocuments &&
    embeddings.embedQuery === own.embedQuery
  );
}

export function hashCard(card: ToolCard): string {
  const parts = routingTexts(card);
  return createHash("sha1").update(parts.tool).update("\u0000").update(parts.examples.join("\u0000")).digest("hex");
}

/** Stable id of one vector: partition, tool and part number. */
export function docId(partition: string, tool: string, part: number): string {
  return `${encodeLabel(partition)}/${encodeLabel(tool)}/${part}`;
}

/**
 * The `partition` metadata of a partition's wordings: apart from its cards' vectors, so that a
 * search by the one-key `{ partition }` filter the store contract asks for reads one or the other.
 */
export function wordingPartition(partition: string): string {
  return `\uE000wordings\uE000${partition}`;
}

/** Stable id of one wording's vector. */
export function wordingId(partition: string, tool: string, key: string): string {
  return `${encodeLabel(partition)}/${encodeLabel(tool)}/w${key}`;
}
