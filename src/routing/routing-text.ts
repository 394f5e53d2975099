/**
 * The text routing searches for a tool card: its name, the words of its name, its description
 * (the augmented one when there is one), its argument names and its example requests. Never the
 * usage notes, the "Not for" lines or the example call: a description that lists what a tool is
 * not for attracts exactly those requests.
 */
import type { ToolCard } from "../ledger/schema.js";
import { oneLine } from "../internal.js";
import { splitWords } from "../text/tokenize.js";

/** The parts of a card routing reads. */
export type RoutedCard = Pick<ToolCard, "name" | "author" | "augmented" | "learned">;

export interface RoutingTexts {
  /** Name, name split into words, description (augmented preferred), argument names. */
  tool: string;
  /** Example requests of every source, trimmed, duplicates dropped, in stored order. */
  examples: string[];
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
