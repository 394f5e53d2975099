import { existsSync, readFileSync } from "node:fs";
import Database from "better-sqlite3";

/** Token sequence of a text: runs of letters and digits, lower case (as the masker normalises). */
export function tokens(text: string): string {
  return ` ${(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ")} `;
}

/** Every string leaf of a JSON value except the keyed fingerprints (hashes, not values). */
export function stringLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) if (key !== "fingerprints") stringLeaves(v, out);
  }
  return out;
}

/** What a SQLite ledger file holds that a planted value could hide in. */
export interface StoredTexts {
  /** Rows of the store. */
  rows: number;
  /** For each planted value, the stored texts (namespace, key, string leaves) holding its tokens. */
  hits: (value: string) => string[];
  /** The raw bytes of the file and its WAL, lower case (latin1). */
  raw: string;
}

/** Read every row of a SQLite ledger file, for checks that no planted value was stored. */
export function storedTexts(path: string): StoredTexts {
  const db = new Database(path, { readonly: true });
  const rows = db.prepare("SELECT namespace, key, value FROM store").all() as {
    namespace: string;
    key: string;
    value: string;
  }[];
  db.close();
  const texts = rows.flatMap((r) => [r.namespace, r.key, ...stringLeaves(JSON.parse(r.value))]).map(tokens);
  const files = [path, `${path}-wal`].filter((f) => existsSync(f));
  return {
    rows: rows.length,
    hits: (value) => texts.filter((t) => t.includes(tokens(value))),
    raw: files.map((f) => readFileSync(f).toString("latin1").toLowerCase()).join("\n"),
  };
}
