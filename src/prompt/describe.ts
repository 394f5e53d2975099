/**
 * What the model is shown of a tool: the author's description as written, then what was
 * learned, under one heading. Byte-stable: the same card gives the same string.
 */
import { LESSON_KINDS } from "../ledger/lesson-kinds.js";
import type { Learned, ToolCard } from "../ledger/schema.js";
import type { ToolSource } from "../ledger/cards.js";
import { oneLine } from "../internal.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";

/** The heading learned lines go under in what the model is shown. */
export const LEARNED_HEADING = "Learned from use:";

/** How each learned part reads as lines under the heading. */
const LINES_OF: { readonly [F in keyof Learned]: (learned: Learned) => string[] } = {
  notes: (learned) => learned.notes.map((n) => oneLine(n.text)),
  notFor: (learned) => learned.notFor.map((n) => oneLine(n.text)),
  exampleCall: (learned) => {
    if (!learned.exampleCall) return [];
    const call = oneLine(learned.exampleCall.text);
    return [/^example call:/i.test(call) ? call : `Example call: ${call}`];
  },
  examples: (learned) => {
    const asked = learned.examples.filter((e) => e.source === "learned").map((e) => `"${oneLine(e.text)}"`);
    return asked.length > 0 ? [`Also asked for as: ${asked.join("; ")}`] : [];
  },
};

/**
 * The description the model is shown: the author's description as written (the augmented one
 * only when the author wrote none), then, when anything was learned, a "Learned from use:"
 * heading and the learned parts the lesson-kinds table says the model is shown, in its order:
 * one line per usage note, "Not for …; use …" line and the example call. Learned example
 * requests are added only with `showLearnedExamples`; synthetic ones never.
 * Byte-stable: the same card gives the same string (lines in stored order).
 */
export function modelDescription(
  card: ToolCard,
  settings: Pick<Settings, "showLearnedExamples"> = DEFAULT_SETTINGS,
): string {
  const authored = card.author.description;
  const base = authored.trim() !== "" ? authored : (card.augmented?.description ?? "");
  const learned = learnedLines(card, settings);
  if (learned.length === 0) return base;
  const head = base.trimEnd();
  return `${head === "" ? "" : `${head}\n\n`}${LEARNED_HEADING}\n${learned.map((l) => `- ${l}`).join("\n")}`;
}

/** The learned lines the model is shown of a card, in the lesson-kinds table's order. */
function learnedLines(card: ToolCard, settings: Pick<Settings, "showLearnedExamples">): string[] {
  const lines: string[] = [];
  for (const kind of LESSON_KINDS) {
    if (kind.field === null) continue;
    const shown = kind.shown === "yes" || (kind.shown === "showLearnedExamples" && settings.showLearnedExamples);
    if (shown) lines.push(...LINES_OF[kind.field](card.learned));
  }
  return lines.filter((l) => l !== "");
}

/**
 * The cards that change what the model is shown of their tool (something learned is shown, or
 * the author wrote no description and an augmented one stands in), each cut to what is shown:
 * example requests only when learned and `showLearnedExamples` is on. Small enough to keep in a
 * thread's state; {@link modelDescription} of a cut card with `showLearnedExamples: true` is the
 * full card's with `settings`. Pure.
 */
export function shownCards(
  cards: readonly ToolCard[],
  settings: Pick<Settings, "showLearnedExamples"> = DEFAULT_SETTINGS,
): ToolCard[] {
  const out: ToolCard[] = [];
  for (const card of cards) {
    const examples = settings.showLearnedExamples ? card.learned.examples.filter((e) => e.source === "learned") : [];
    const cut: ToolCard = { ...card, learned: { ...card.learned, examples } };
    const augmentedOnly = card.author.description.trim() === "" && (card.augmented?.description ?? "") !== "";
    if (augmentedOnly || learnedLines(cut, SHOW_EXAMPLES).length > 0) out.push(cut);
  }
  return out;
}

/** The settings a cut card ({@link shownCards}) is described with: its examples are already the ones shown. */
export const SHOW_EXAMPLES: Readonly<Pick<Settings, "showLearnedExamples">> = Object.freeze({
  showLearnedExamples: true,
});

/**
 * A view of `tool` with only its `description` overridden (the tool itself is left as it is):
 * what `bindTools` and `ToolNode` read, the tool's own methods unchanged.
 */
export function describedAs<T extends object>(tool: T, description: string): T {
  const view = Object.create(tool) as T;
  Object.defineProperty(view, "description", {
    value: description,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return view;
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
    return description === current ? tool : describedAs(tool, description);
  });
}
