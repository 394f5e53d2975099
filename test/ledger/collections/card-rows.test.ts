import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { looksLikeCard } from "../../../src/ledger/collections/card-rows.js";
import { namespaceFor } from "../../../src/ledger/keys.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import { ToolCardSchema } from "../../../src/ledger/schema.js";
import { learnedCard } from "../../helpers/cards.js";

/** A card with every learned kind, as the ledger stores it (written and read back). */
async function storedCard() {
  const store = new InMemoryStore();
  const ledger = new Ledger(store);
  await ledger.putCard(learnedCard());
  const [item] = await store.search(namespaceFor(ledger.namespaceRoot, "default", "cards"));
  return { ledger, store, item: item!, value: item!.value as Record<string, unknown> };
}

describe("looksLikeCard (cards read on every turn without zod)", () => {
  it("takes a card the ledger wrote as it is stored, and it is what the schema would give", async () => {
    const { ledger, value } = await storedCard();
    expect(looksLikeCard(value)).toBe(true);
    expect(ToolCardSchema.parse(value)).toEqual(value);
    expect(await ledger.getCards("default", ["lookup_claim"])).toEqual([value]);
  });

  it("sends anything else through the schema: a missing default, a bad example source, a wrong type", async () => {
    const { value } = await storedCard();
    const learned = value.learned as Record<string, unknown>;
    const examples = learned.examples as Record<string, unknown>[];
    const variants: Record<string, unknown>[] = [
      { ...value, augmented: undefined },
      { ...value, learned: { ...learned, notes: undefined } },
      { ...value, learned: { ...learned, examples: [{ ...examples[0], source: "guessed" }] } },
      { ...value, learned: { ...learned, notFor: [{ text: "Not for x.", revisionId: "r1" }] } },
      { ...value, author: { ...(value.author as object), argNames: [1] } },
      { ...value, version: 0 },
      { ...value, name: "" },
      { ...value, v: 0 },
    ];
    for (const v of variants) expect(looksLikeCard(v)).toBe(false);
  });

  it("still reads an older row through the schema (a default filled in) and skips a damaged one", async () => {
    const { ledger, store, item, value } = await storedCard();
    const { augmented: _dropped, ...older } = value;
    await store.put(item.namespace, item.key, older);
    const [read] = await ledger.getCards("default", ["lookup_claim"]);
    expect(read.augmented).toBeNull();
    await store.put(item.namespace, item.key, { ...value, version: "two" });
    expect(await ledger.getCards("default", ["lookup_claim"])).toEqual([]);
    expect(ledger.skippedRows).toBeGreaterThan(0);
  });
});
