/**
 * Near-duplicate tool names: several versions of one function (`get_weather`, `get_weather_v2`,
 * `getWeather`, `GetWeather2`, `get-weather-legacy`). Their names differ only in case, separators
 * or a version suffix. Routing cannot tell such tools apart from traffic alone, so the wordings of
 * one version must never take the requests another version served (`review/guard.ts`), and the
 * harness names them (`evaluate/duplicates.ts`). Pure.
 */

/** Words a version suffix is made of, besides digits and `v2`-style markers. */
const VERSION_WORDS: ReadonlySet<string> = new Set([
  "new",
  "old",
  "legacy",
  "beta",
  "alpha",
  "latest",
  "next",
  "deprecated",
  "copy",
  "final",
]);

/** A version marker as one word: `v2`, `v10`, `2`, `version3`, `ver2`. */
const VERSION_MARK = /^(v|ver|version)?\d+$/;

/**
 * The stem a tool name shares with its other versions: its words in lower case (split at case
 * changes, digits runs and any character that is not a letter or digit), version words and
 * markers taken off the end (at least one word is always kept), joined with no separator.
 */
export function versionStem(name: string): string {
  const words = name
    .normalize("NFKC")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])(\d)/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "");
  // "v 2" (split from "v2") is one marker.
  const merged: string[] = [];
  for (const w of words) {
    const last = merged.at(-1);
    if (/^\d+$/.test(w) && last !== undefined && /^(v|ver|version)$/.test(last)) merged[merged.length - 1] = last + w;
    else merged.push(w);
  }
  while (merged.length > 1 && (VERSION_MARK.test(merged.at(-1)!) || VERSION_WORDS.has(merged.at(-1)!))) merged.pop();
  return merged.join("");
}

/**
 * Groups of two or more tool names that share a {@link versionStem} (each sorted by name; groups
 * by their first name). A name whose stem is empty is never grouped.
 */
export function nearDuplicateNames(names: Iterable<string>): string[][] {
  const groups = new Map<string, Set<string>>();
  for (const name of names) {
    const stem = versionStem(name);
    if (stem === "") continue;
    let group = groups.get(stem);
    if (!group) groups.set(stem, (group = new Set()));
    group.add(name);
  }
  return [...groups.values()]
    .filter((g) => g.size > 1)
    .map((g) => [...g].sort((a, b) => a.localeCompare(b)))
    .sort((a, b) => a[0].localeCompare(b[0]));
}

/** For each name of a near-duplicate group, the other names of its group (see {@link nearDuplicateNames}). */
export function nearDuplicatesOf(names: Iterable<string>): Map<string, ReadonlySet<string>> {
  const out = new Map<string, ReadonlySet<string>>();
  for (const group of nearDuplicateNames(names))
    for (const name of group) out.set(name, new Set(group.filter((other) => other !== name)));
  return out;
}
