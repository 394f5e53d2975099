/**
 * A card's example requests changed as apply changes them: examples added as learned, others
 * taken out one per text, a synthetic one first. Shared by the routing "what if" (a hypothetical
 * card) and the vet (the card after a review is applied).
 */
import type { ToolCard } from "../ledger/schema.js";

/**
 * A card with examples added (as learned) and others removed: each text of `remove` takes out one
 * example with that text, a synthetic one first (as apply does).
 */
export function withExamples(card: ToolCard, add: readonly string[], remove: readonly string[] = []): ToolCard {
  const examples = [
    ...withoutExamples(card.learned.examples, remove),
    ...add.map((text) => ({ text, source: "learned" as const, addedAt: 0 })),
  ];
  return { ...card, learned: { ...card.learned, examples } };
}

/** `examples` without one example per text of `remove`, a synthetic one first, then any other. */
export function withoutExamples<E extends { text: string; source: string }>(
  examples: readonly E[],
  remove: readonly string[],
): E[] {
  const left = [...remove];
  const gone = new Set<number>();
  for (const synthetic of [true, false]) {
    examples.forEach((e, i) => {
      if (gone.has(i) || (e.source === "synthetic") !== synthetic) return;
      const at = left.indexOf(e.text);
      if (at < 0) return;
      left.splice(at, 1);
      gone.add(i);
    });
  }
  return examples.filter((_, i) => !gone.has(i));
}
