/**
 * The cache-keeping tool set of a thread (`ServeOptions.cacheKeeping`): the tools bound for a
 * thread only grow. The first turn's routed set, then each later addition (routed on a later turn,
 * or found by `search_tools`) appended in the order it came, never reordered or removed. Each
 * tool's definition is frozen at what the model was shown when it was first added (its author's
 * description and the learned lines of that moment), so the tools that open every prompt, and the
 * provider's cached prefix with them, stay byte-identical from one model call to the next.
 *
 * The set lives in the thread's state (the graph's `keptTools` channel, the middleware's
 * `stateSchema`), so a checkpointer keeps it with the thread. Everything here is pure.
 */
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolSource } from "../ledger/cards.js";
import type { ToolCard } from "../ledger/schema.js";
import { describedAs, modelDescription, SHOW_EXAMPLES } from "../prompt/describe.js";
import { SEARCH_TOOLS_NAME } from "../internal.js";

/** One tool of a thread's kept set: its name and the description it was first sent with. */
export interface KeptTool {
  name: string;
  /** What the model was shown when the tool was first added to the thread (frozen). */
  description: string;
}

/**
 * The name of the tool the model may call to find more tools (cache-keeping mode). Defined in
 * `src/internal.ts`, where the recorder, below serve, reads it too.
 */
export { SEARCH_TOOLS_NAME };

/**
 * The kept set grown by `added` (names, in the order they came): a name already kept stays where
 * it is with the description it was first sent with; a new one is appended, described by
 * `describe`. Names not among `known` (when given) are skipped. Returns `kept` itself when
 * nothing was added, so an adapter can tell an unchanged set by identity.
 */
export function growKept(
  kept: readonly KeptTool[],
  added: readonly string[],
  describe: (name: string) => string,
  known?: ReadonlySet<string>,
): readonly KeptTool[] {
  const have = new Set(kept.map((t) => t.name));
  let out: KeptTool[] | undefined;
  for (const name of added) {
    if (have.has(name) || (known !== undefined && !known.has(name))) continue;
    have.add(name);
    out ??= [...kept];
    out.push({ name, description: describe(name) });
  }
  return out ?? kept;
}

/**
 * How a tool is described when it is first added: as its card (cut to what is shown) says, its
 * author's current description first; without a card, the author's description. The same as the
 * narrowing mode sends (`withDescriptions`, `toolsForModel`).
 */
export function describerOf(tools: readonly ToolSource[], cards: readonly ToolCard[]): (name: string) => string {
  const own = new Map(tools.map((t) => [t.name, t.description ?? ""]));
  const byName = new Map(cards.map((c) => [c.name, c]));
  return (name) => {
    const current = own.get(name) ?? "";
    const card = byName.get(name);
    return card
      ? modelDescription({ ...card, author: { ...card.author, description: current } }, SHOW_EXAMPLES)
      : current;
  };
}

/** What a `search_tools` answer carries for the adapter (its artifact): the tools found, described. */
export interface SearchToolsArtifact {
  found: KeptTool[];
}

/**
 * The tools `search_tools` found during the current turn (its answers since the newest user
 * message), in the order they were found. Only answers of {@link SEARCH_TOOLS_NAME} with a
 * well-formed artifact count.
 */
export function foundBySearch(messages: readonly BaseMessage[]): KeptTool[] {
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].getType() === "human") {
      start = i + 1;
      break;
    }
  }
  const out: KeptTool[] = [];
  for (const message of messages.slice(start)) {
    if (!ToolMessage.isInstance(message) || message.name !== SEARCH_TOOLS_NAME) continue;
    const found = (message.artifact as Partial<SearchToolsArtifact> | undefined)?.found;
    if (!Array.isArray(found)) continue;
    for (const t of found) {
      if (t && typeof t.name === "string" && typeof t.description === "string") {
        out.push({ name: t.name, description: t.description });
      }
    }
  }
  return out;
}

/**
 * The kept set after this model call's additions: the turn's tools (`turnTools`, routed or every
 * tool; described by `describe`) and then what `search_tools` found this turn (described as its
 * answer says). Only the agent's own tools (`known`) are ever added.
 */
export function keptForCall(
  kept: readonly KeptTool[],
  turnTools: readonly string[],
  describe: (name: string) => string,
  messages: readonly BaseMessage[],
  known: ReadonlySet<string>,
): readonly KeptTool[] {
  const grown = growKept(kept, turnTools, describe, known);
  const found = foundBySearch(messages);
  if (found.length === 0) return grown;
  const described = new Map(found.map((t) => [t.name, t.description]));
  return growKept(
    grown,
    found.map((t) => t.name),
    (name) => described.get(name) ?? "",
    known,
  );
}

/**
 * The agent's tools as the kept set binds them: `first` (the `search_tools` tool, so its place
 * never moves), then the kept tools in the kept order, each described as it was when first added
 * (a view of the tool with only `description` overridden, as `withDescriptions` makes, when that
 * differs from its own). A tool added later only extends the list at its end.
 */
export function keptBinding<T extends ToolSource & object>(
  kept: readonly KeptTool[],
  tools: readonly T[],
  first: readonly T[] = [],
): T[] {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const out: T[] = [...first];
  for (const { name, description } of kept) {
    const tool = byName.get(name);
    if (!tool) continue;
    out.push((tool.description ?? "") === description ? tool : describedAs(tool, description));
  }
  return out;
}
