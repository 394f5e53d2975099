/**
 * The Chroma forms of the index's metadata and filters: flat metadata checked on the way in, and a
 * metadata equality filter as a Chroma `where` clause. Pure, and without chromadb, so the
 * translation is tested without a server.
 */
import { InvalidInput } from "../errors.js";
import type { MetadataFilter, MetadataScalar } from "./memory-vector-store.js";

/**
 * A `where` clause as {@link toChromaWhere} writes it (a subset of chromadb's `Where`): one
 * `$eq`/`$in` per key, several joined by `$and`.
 */
export type ChromaWhere =
  { [key: string]: { $eq: MetadataScalar } | { $in: MetadataScalar[] } } | { $and: ChromaWhere[] };

/** What a Chroma metadata value may be here: a flat scalar. `null` and `undefined` values are dropped. */
export type FlatMetadata = Record<string, MetadataScalar>;

/**
 * Checks that metadata is flat (string, finite number or boolean values) and returns the Chroma
 * form (`null`/`undefined` values dropped). Pure.
 * @throws InvalidInput for nested objects, arrays, non-finite numbers and other value types.
 */
export function toFlatMetadata(metadata: Readonly<Record<string, unknown>>, id?: string): FlatMetadata {
  const out: FlatMetadata = {};
  for (const key of Object.keys(metadata)) {
    const value = metadata[key];
    if (value === null || value === undefined) continue;
    if (
      typeof value === "string" ||
      typeof value === "boolean" ||
      (typeof value === "number" && Number.isFinite(value))
    ) {
      out[key] = value;
      continue;
    }
    const kind = Array.isArray(value)
      ? "an array"
      : typeof value === "number"
        ? "a non-finite number"
        : `a value of type ${typeof value}`;
    throw new InvalidInput(
      `Metadata key "${key}"${id === undefined ? "" : ` of document ${id}`} holds ${kind}; the Chroma index stores flat metadata only (string, number, boolean). Flatten it (e.g. "${key}_field": value) or JSON-encode it into a string.`,
      { context: { key, id, kind } },
    );
  }
  return out;
}

/**
 * Translates a metadata equality filter into a Chroma `where` clause: one key becomes
 * `{ key: { $eq: value } }`, several become `{ $and: [...] }` (keys sorted), an array value becomes
 * `$in`. Returns `undefined` for an empty filter and `null` when the filter can match nothing (an
 * empty any-of array). Pure.
 * @throws InvalidInput for a predicate function or a value that is not a flat scalar.
 */
export function toChromaWhere(filter: MetadataFilter | undefined): ChromaWhere | undefined | null {
  if (filter === undefined) return undefined;
  if (typeof filter === "function") {
    throw new InvalidInput(
      'The Chroma index takes metadata equality filters only (e.g. { partition: "p1" }); predicate functions work with the in-memory index.',
    );
  }
  const isScalar = (v: unknown): v is MetadataScalar =>
    typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
  const clauses: ChromaWhere[] = [];
  for (const key of Object.keys(filter).sort()) {
    const value: unknown = filter[key];
    if (Array.isArray(value)) {
      if (!value.every(isScalar)) {
        throw new InvalidInput(`Filter key "${key}" must list strings, numbers or booleans.`, { context: { key } });
      }
      if (value.length === 0) return null;
      clauses.push({ [key]: { $in: value as MetadataScalar[] } });
    } else if (isScalar(value)) {
      clauses.push({ [key]: { $eq: value } });
    } else {
      throw new InvalidInput(`Filter key "${key}" must be a string, number or boolean (or an array of them).`, {
        context: { key },
      });
    }
  }
  if (clauses.length === 0) return undefined;
  if (clauses.length === 1) return clauses[0];
  return { $and: clauses };
}
