/**
 * What the model is shown of a tool: the author's description as written, then what was
 * learned, under one heading. Byte-stable: the same card gives the same string.
 */
import type { ToolCard } from "../ledger/schema.js";
import type { ToolSource } from "../ledger/cards.js";
import { oneLine } from "../internal.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";

/** The heading learned lines go under in what the model is shown. */
export const LEARNED_HEADING = "Learned from use:";

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
