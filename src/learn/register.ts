/**
 * Registering tools: one card per tool in the ledger, written from the tool itself. Re-registering
 * an unchanged tool writes nothing and calls no model; a changed docstring or schema updates the
 * author's part and keeps everything learned; augmentation (one model call) runs only for new
 * tools, or for every tool when `reaugment` is asked for.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidInput, RevisionConflict } from "../errors.js";
import { authorFingerprint, cardFromTool, type ToolSource } from "../ledger/cards.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import { isPrintedAsIs, nameSkeleton } from "../text/normalize.js";
import { augmentTool } from "./augment.js";

/** Options of {@link registerTools}. */
export interface RegisterToolsOptions {
  /**
   * The partition (tenant / user / agent) the cards belong to.
   * @default "default"
   */
  partition?: string;
  /**
   * Augment new tools: one call to `model` per tool for a description in users' words and six
   * example requests (routing keys only; the model is shown the author's text).
   * @default false
   */
  augment?: boolean;
  /**
   * The chat model augmentation calls. Required when `augment` is true.
   * @default none
   */
  model?: BaseChatModel;
  /**
   * With `augment`, also augment tools already registered (one call each), replacing their
   * synthetic examples; learned ones are kept.
   * @default false
   */
  reaugment?: boolean;
  /**
   * What to do with a tool whose name a person would read as another's: its skeleton (NFKC,
   * invisible, bidi and tag characters removed, confusables folded, lower case) equals a registered
   * tool's or an earlier one's of the batch (`send_еmail` with a Cyrillic е beside `send_email`),
   * or it holds a character that is not printed as it is (zero-width, bidi, tag, full-width).
   * `"refuse"`: it is not registered; `"report"`: it is registered. Either way it is listed in
   * {@link RegisterResult.lookalikes}.
   * @default "refuse"
   */
  lookalikes?: "refuse" | "report";
  /**
   * Clock for card timestamps.
   * @default Date.now
   */
  now?: () => number;
}

/** The defaults of {@link RegisterToolsOptions} (`model` has none). */
export const DEFAULT_REGISTER_TOOLS_OPTIONS: Readonly<Required<Omit<RegisterToolsOptions, "model">>> = Object.freeze({
  partition: DEFAULT_PARTITION,
  augment: false,
  reaugment: false,
  lookalikes: "refuse",
  now: Date.now,
});

/**
 * What {@link registerTools} did. Each tool is in exactly one of `registered`, `unchanged` and
 * `updated`; `augmented` and `refused` say what augmentation did for those it ran on.
 */
export interface RegisterResult {
  /** New cards. */
  registered: string[];
  /** Nothing written: the author's description and schema are as stored. */
  unchanged: string[];
  /** Existing cards written: the author's part changed (learned parts kept), or re-augmented. */
  updated: string[];
  /** Tools whose augmentation reply was accepted. */
  augmented: string[];
  /** Tools whose augmentation reply was refused, and why (also kept on the card). */
  refused: { tool: string; reason: string }[];
  /**
   * Tools whose name a person would read as another's (`like`, the registered or earlier name), or
   * that holds a character not printed as it is (`reason: "unprintable"`). Refused (in none of the
   * lists above) unless `lookalikes: "report"`.
   */
  lookalikes: LookalikeName[];
}

/** A tool name a person would read as another's, or not as it is written. */
export interface LookalikeName {
  tool: string;
  reason: "lookalike" | "unprintable";
  /** The registered (or earlier) tool it reads as, for a look-alike. */
  like?: string;
}

/**
 * The look-alikes of a batch: each tool whose name is not printed as it is, or whose skeleton
 * ({@link nameSkeleton}) equals that of a name registered before or earlier in the batch (an exact
 * repeat of a registered name is no look-alike: it is the same tool; names that differ only in
 * case are two tools). Pure.
 */
export function findLookalikes(names: readonly string[], registered: readonly string[]): LookalikeName[] {
  const bySkeleton = new Map<string, string>();
  for (const name of registered) if (!bySkeleton.has(nameSkeleton(name))) bySkeleton.set(nameSkeleton(name), name);
  const out: LookalikeName[] = [];
  for (const name of names) {
    const skeleton = nameSkeleton(name);
    const like = bySkeleton.get(skeleton);
    if (!isPrintedAsIs(name))
      out.push({ tool: name, reason: "unprintable", ...(like && like !== name ? { like } : {}) });
    // A name that differs from another only in case prints as itself: two tools, as their authors named them.
    else if (like !== undefined && like !== name && !differsInCaseOnly(like, name))
      out.push({ tool: name, reason: "lookalike", like });
    else bySkeleton.set(skeleton, name);
  }
  return out;
}

/** True for two names whose letters differ only in case (`calculate_bmi`, `calculate_BMI`). */
function differsInCaseOnly(a: string, b: string): boolean {
  return a !== b && a.toLowerCase() === b.toLowerCase();
}

/**
 * Register `tools` in `ledger`: write a card for each new tool, update changed ones, skip
 * unchanged ones. Tool names with dots or slashes (MCP-style `server.tool`) are fine.
 * Tools are handled one by one, each with at most one model call.
 * @throws InvalidInput for two tools with one name, a blank name, or `augment` without `model`.
 * @throws RevisionConflict when another writer changes a card differently at the same time.
 */
export async function registerTools(
  ledger: Ledger,
  tools: readonly ToolSource[],
  options: RegisterToolsOptions = {},
  config?: RunnableConfig,
): Promise<RegisterResult> {
  const partition = options.partition ?? DEFAULT_REGISTER_TOOLS_OPTIONS.partition;
  const augment = options.augment ?? DEFAULT_REGISTER_TOOLS_OPTIONS.augment;
  const reaugment = options.reaugment ?? DEFAULT_REGISTER_TOOLS_OPTIONS.reaugment;
  const now = options.now ?? DEFAULT_REGISTER_TOOLS_OPTIONS.now;
  const model = options.model;
  if (augment && !model) {
    throw new InvalidInput("registerTools: `augment: true` needs a chat model; pass `model`.");
  }
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) {
      throw new InvalidInput(`registerTools: two tools are named "${tool.name}"; tool names must be unique.`, {
        context: { tool: tool.name },
      });
    }
    names.add(tool.name);
  }
  const registeredNames = (await ledger.listCards(partition)).map((c) => c.name);
  const lookalikes = findLookalikes(
    tools.map((t) => t.name),
    registeredNames,
  );
  const refuse = (options.lookalikes ?? DEFAULT_REGISTER_TOOLS_OPTIONS.lookalikes) === "refuse";
  const refusedNames = new Set(refuse ? lookalikes.map((l) => l.tool) : []);
  const fresh = tools
    .filter((tool) => !refusedNames.has(tool.name))
    .map((tool) => cardFromTool(tool, partition, now()));
  const settings = await ledger.getSettings(partition);
  const result: RegisterResult = {
    registered: [],
    unchanged: [],
    updated: [],
    augmented: [],
    refused: [],
    lookalikes,
  };

  const runAugment = async (card: ToolCard): Promise<ToolCard> => {
    if (!model) return card;
    const out = await augmentTool(
      card,
      model,
      { maxQueries: settings.maxQueries, maxExampleLength: settings.maxLineLength, now },
      config,
    );
    if (out.refused !== undefined) result.refused.push({ tool: card.name, reason: out.refused });
    else result.augmented.push(card.name);
    return out.card;
  };

  for (const card of fresh) {
    const existing = await ledger.getCard(partition, card.name);
    if (!existing) {
      const toWrite = augment ? await runAugment(card) : card;
      const saved = await writeCard(ledger, toWrite, 0);
      if (!saved) forgetAugmentation(result, card.name);
      result[saved ? "registered" : "unchanged"].push(card.name);
      continue;
    }
    const changed = authorFingerprint(existing) !== authorFingerprint(card);
    const redo = augment && reaugment;
    if (!changed && !redo) {
      result.unchanged.push(card.name);
      continue;
    }
    const updated: ToolCard = changed ? { ...existing, author: card.author } : existing;
    const toWrite = redo ? await runAugment(updated) : updated;
    const saved = await writeCard(ledger, toWrite, existing.version);
    if (!saved) forgetAugmentation(result, card.name);
    result[saved ? "updated" : "unchanged"].push(card.name);
  }
  return result;
}

/** Another writer won the race: what our augmentation produced was not stored. */
function forgetAugmentation(result: RegisterResult, tool: string): void {
  result.augmented = result.augmented.filter((t) => t !== tool);
  result.refused = result.refused.filter((r) => r.tool !== tool);
}

/**
 * Write a card if the stored one is still at `expectVersion`. When another process got there
 * first with the same author's part, there is nothing to do (false); otherwise the conflict is
 * thrown, for the caller to register again.
 */
async function writeCard(ledger: Ledger, card: ToolCard, expectVersion: number): Promise<boolean> {
  try {
    await ledger.putCard(card, { expectVersion });
    return true;
  } catch (error) {
    if (!(error instanceof RevisionConflict)) throw error;
    const now = await ledger.getCard(card.partition, card.name);
    if (now && authorFingerprint(now) === authorFingerprint(card)) return false;
    throw error;
  }
}
