/**
 * Which names of a call the app vouches for. A model writes the tool names and argument names of
 * its tool calls as freely as their values: `mail_dana.whitfield@contoso-mail.net` as a tool, an
 * argument named `sk-proj-…` or `ottoline_whitfield`. Only names the app registered are kept as
 * names; any other is masked like a value (and never joins the allow-list of stored free text).
 *
 * - A **tool name** is the app's when a card of the partition has it (`registerTools`), when a
 *   tool of that name ran through the callbacks (LangChain starts only tools the app gave its tool
 *   node; a name the model made up is answered "not found" without any callback), or when it is
 *   the package's own `search_tools`.
 * - An **argument name** is the app's when the tool's registered card lists it (`author.argNames`);
 *   for a tool with no registered schema, only a field name (a lower-case identifier of common
 *   words, `order_id`, `billing_address`: `isFieldName`) is kept.
 *
 * The writer holds one {@link RegisteredNames} (no state outside it): the partition's cards read
 * at most every {@link CARDS_TTL_MS}, bounded, and the tool names that ran.
 */
import type { ToolCard } from "../ledger/schema.js";
import { SEARCH_TOOLS_NAME } from "../internal.js";
import { isFieldName } from "../text/mask.js";

/** What {@link buildRecords} asks of the app's names (see the module doc). */
export interface NameTrust {
  /** True when `tool` is a tool the app registered or ran. */
  isTool(tool: string): boolean;
  /** True when `name` is an argument of `tool`'s registered schema (or a field name, without one). */
  isArgName(tool: string, name: string): boolean;
}

/** What {@link isAppToolCall} reads of a recorded call. */
export interface ToolCallSeen {
  tool: string;
  source: string;
  error?: { message: string };
}

/**
 * The refusal LangChain's tool nodes answer a call with when the tool's own schema refused its
 * arguments (`ToolInputParsingException`): the tool is one the node holds. A name the model made up
 * is answered "not found" / "is not a valid tool" instead.
 */
const SCHEMA_REFUSAL = /did not match expected schema/i;

/** True when a call shows its tool is the app's: it ran through the callbacks, or its schema refused it. */
export function isAppToolCall(call: ToolCallSeen): boolean {
  return (
    call.source === "callback" || (call.error !== undefined && SCHEMA_REFUSAL.test(call.error.message.slice(0, 512)))
  );
}

/** How long a partition's cards are used before they are read again, in milliseconds. */
export const CARDS_TTL_MS = 5_000;
/** Partitions whose cards are held at once; the one read longest ago is dropped first. */
const MAX_PARTITIONS = 1_024;
/** Tool names that ran, held at most (a model cannot add to it: only started tools count). */
const MAX_RAN = 10_000;

/** A registered tool's argument names; `undefined`: the card has no schema to go by. */
type Registered = ReadonlyMap<string, ReadonlySet<string> | undefined>;

/** The trust of names with no card and nothing known to have run: field names only, the package's own tool. */
export const FIELD_NAMES_ONLY: NameTrust = {
  isTool: (tool) => tool === SEARCH_TOOLS_NAME,
  isArgName: (_tool, name) => isArgumentFieldName(name),
};

/** An argument name kept without a schema: a field name, or the `input` of a plain-string tool. */
function isArgumentFieldName(name: string): boolean {
  return name === "input" || isFieldName(name);
}

/** The names a recorder vouches for: registered cards per partition, and tools that ran. */
export class RegisteredNames {
  private readonly cards = new Map<string, { tools: Registered; at: number }>();
  private readonly ran = new Set<string>();

  /** Note a tool name that ran through the callbacks (the app's tool node started it). */
  noteRan(tool: string): void {
    if (this.ran.has(tool)) return;
    if (this.ran.size >= MAX_RAN) this.ran.delete(this.ran.values().next().value as string);
    this.ran.add(tool);
  }

  /**
   * The trust of one run's names: its calls that show their tool is the app's are noted first
   * (`isAppToolCall`), then {@link RegisteredNames.of}. Never throws.
   */
  async forRun(
    partition: string,
    calls: readonly ToolCallSeen[],
    listCards: (partition: string) => Promise<ToolCard[]>,
  ): Promise<NameTrust> {
    for (const call of calls) if (isAppToolCall(call)) this.noteRan(call.tool);
    return this.of(partition, listCards);
  }

  /**
   * The trust of one partition's names: its cards (read through `listCards` at most every
   * {@link CARDS_TTL_MS}; a failed read counts as no card) and the tools that ran. Never throws.
   */
  async of(partition: string, listCards: (partition: string) => Promise<ToolCard[]>): Promise<NameTrust> {
    let held = this.cards.get(partition);
    if (held === undefined || Date.now() - held.at >= CARDS_TTL_MS) {
      let tools: Registered = new Map();
      try {
        tools = registeredOf(await listCards(partition));
      } catch {
        // The store is down: nothing is vouched for by a card this time, which only masks more.
      }
      held = { tools, at: Date.now() };
      this.cards.delete(partition);
      this.cards.set(partition, held);
      if (this.cards.size > MAX_PARTITIONS) this.cards.delete(this.cards.keys().next().value as string);
    }
    return this.trust(held.tools);
  }

  private trust(tools: Registered): NameTrust {
    return {
      isTool: (tool) => tools.has(tool) || this.ran.has(tool) || tool === SEARCH_TOOLS_NAME,
      isArgName: (tool, name) => {
        const args = tools.get(tool);
        return args === undefined ? isArgumentFieldName(name) : args.has(name);
      },
    };
  }
}

/** The argument names of each registered tool (`undefined` for a card with no schema and no names). */
function registeredOf(cards: readonly ToolCard[]): Registered {
  const out = new Map<string, ReadonlySet<string> | undefined>();
  for (const card of cards) {
    const names = new Set(card.author.argNames);
    const properties = card.author.schema?.properties;
    if (properties !== null && typeof properties === "object")
      for (const name of Object.keys(properties)) names.add(name);
    out.set(card.name, names.size === 0 && card.author.schema === null ? undefined : names);
  }
  return out;
}
