/** The benchmarks' reader of JSON Lines data files (MetaTool's tools and requests). */
import { readFileSync } from "node:fs";

/** Every non-blank line of `file`, parsed as JSON (trusted benchmark data: no validation). */
export function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}
