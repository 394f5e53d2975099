/**
 * The alias table: the everyday words people use for a kind of tool ("email", "the shell", "the
 * browser"), and the name parts that tell which registered tool they mean (`send_email`,
 * `exec_command`, `browse_web`). An edict that names no tool is scoped through it.
 */
import { PureMemo, WeakPureMemo } from "../memo.js";
import { isPrintedAsIs } from "../text/normalize.js";
import { splitWords, stem } from "../text/tokenize.js";

/** One row of the alias table. */
export interface ToolAlias {
  /** What people call it, lowercase; a phrase of several words matches them in a row ("command line"). */
  readonly words: readonly string[];
  /** Name parts of the tools it means: a registered tool whose name has one of them (`send_email` has `email`). */
  readonly toolWords: readonly string[];
}

/**
 * The built-in aliases. Extend them by passing your own table, e.g.
 * `aliases: [{ words: ["crm"], toolWords: ["salesforce", "hubspot"] }, ...DEFAULT_TOOL_ALIASES]`.
 * Words are matched by stem, so "emailing", "emails" and "emailed" all say "email".
 */
export const DEFAULT_TOOL_ALIASES: readonly ToolAlias[] = Object.freeze([
  {
    words: ["email", "e-mail", "mail", "inbox", "gmail", "outlook"],
    toolWords: ["email", "mail", "gmail", "smtp", "outlook"],
  },
  {
    words: ["shell", "bash", "terminal", "command line", "console", "zsh", "sudo", "script", "scripts"],
    toolWords: ["exec", "shell", "bash", "terminal", "command", "cmd", "sh"],
  },
  {
    words: ["browser", "browse", "web", "website", "site", "internet", "webpage", "url", "link", "online"],
    toolWords: ["browse", "browser", "web", "navigate", "url", "page", "crawl", "scrape"],
  },
  {
    words: ["calendar", "meeting", "event", "invite", "appointment", "schedule"],
    toolWords: ["calendar", "event", "meeting", "schedule", "appointment"],
  },
  {
    words: ["file", "folder", "directory", "disk", "filesystem"],
    toolWords: ["file", "files", "fs", "filesystem", "directory"],
  },
  { words: ["slack", "channel", "dm"], toolWords: ["slack", "channel"] },
  { words: ["text", "sms", "texting"], toolWords: ["sms", "text"] },
  { words: ["database", "db", "sql", "table"], toolWords: ["sql", "db", "database", "query"] },
  { words: ["refund"], toolWords: ["refund"] },
  { words: ["payment", "pay", "charge", "invoice"], toolWords: ["payment", "pay", "charge", "invoice", "billing"] },
  { words: ["google", "search", "look up"], toolWords: ["search", "google", "lookup"] },
  { words: ["flight", "plane", "airline"], toolWords: ["flight", "flights", "airline"] },
  { words: ["hotel", "room"], toolWords: ["hotel", "room", "lodging"] },
  { words: ["phone", "call", "dial", "ring"], toolWords: ["call", "phone", "dial"] },
  {
    words: ["git", "repo", "repository", "commit", "branch", "github"],
    toolWords: ["git", "github", "repo", "commit"],
  },
  { words: ["ticket", "issue", "jira"], toolWords: ["ticket", "issue", "jira"] },
  { words: ["tweet", "twitter", "post"], toolWords: ["tweet", "twitter", "post"] },
]);

/** Stems of a text's words, in order. */
export function stems(text: string): string[] {
  return splitWords(text).map(stem);
}

/** What matching needs of a tool name, worked out once per name. */
interface ToolName {
  /** Its parts as stems (`send_email` → send, email). */
  parts: readonly string[];
  partSet: ReadonlySet<string>;
  /** The name as written, between non-word characters. */
  literal: RegExp;
}

/** Most tool names kept worked out; the memo starts over past it (names are few and stable). */
const MAX_MEMO = 10_000;
const toolNames = new PureMemo<string, ToolName>(MAX_MEMO);
const aliasStems = new WeakPureMemo<
  ToolAlias,
  { words: readonly (readonly string[])[]; toolWords: readonly string[] }
>();

function toolName(tool: string): ToolName {
  return toolNames.get(tool, () => {
    const parts = stems(tool);
    return {
      parts,
      partSet: new Set(parts),
      literal: new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(tool.toLowerCase())}($|[^\\p{L}\\p{N}_])`, "u"),
    };
  });
}

function stemsOf(alias: ToolAlias): { words: readonly (readonly string[])[]; toolWords: readonly string[] } {
  return aliasStems.get(alias, () => ({
    words: alias.words.map(stems),
    toolWords: alias.toolWords.map((w) => stem(w.toLowerCase())),
  }));
}

/** Stems of a tool name's parts (`send_email` → send, email; `browseWeb` → brows, web). */
export function toolNameStems(tool: string): ReadonlySet<string> {
  return toolName(tool).partSet;
}

/** Where `phrase` (as stems) starts in `words`, or -1. */
function indexOfPhrase(words: readonly string[], phrase: readonly string[], from: number): number {
  if (phrase.length === 0) return -1;
  outer: for (let i = from; i + phrase.length <= words.length; i++) {
    for (let j = 0; j < phrase.length; j++) if (words[i + j] !== phrase[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * The registered tool an alias in `text` means: the alias word nearest after `from` (the edict's
 * marker, as a word index) wins, then the table's order; among the tools that alias means, one
 * the turn called, else the first registered. `undefined` when no alias means a registered tool.
 */
export function toolByAlias(
  words: readonly string[],
  from: number,
  tools: readonly string[],
  calledTools: readonly string[],
  aliases: readonly ToolAlias[],
): string | undefined {
  // Each alias at its nearest word after the marker, nearest first; one that means no registered
  // tool gives way to the next.
  const found: { alias: ToolAlias; order: number; at: number }[] = [];
  aliases.forEach((alias, order) => {
    let at = Number.POSITIVE_INFINITY;
    for (const phrase of stemsOf(alias).words) {
      const i = indexOfPhrase(words, phrase, from);
      if (i >= 0 && i < at) at = i;
    }
    if (at !== Number.POSITIVE_INFINITY) found.push({ alias, order, at });
  });
  found.sort((a, b) => a.at - b.at || a.order - b.order);
  for (const { alias } of found) {
    const wanted = stemsOf(alias).toolWords;
    const meant = tools.filter((t) => wanted.some((w) => toolName(t).partSet.has(w)));
    if (meant.length > 0) return meant.find((t) => calledTools.includes(t)) ?? meant[0];
  }
  return undefined;
}

/**
 * A registered tool `text` names outright: its name as written (`send_email`) or its parts as
 * words ("send email"); the longest such name wins, then the first registered. An edict binds an
 * exact name: a tool whose name is not printed as it is (a zero-width, bidi or tag character, a
 * full-width letter) is never chosen.
 */
export function toolNamedIn(text: string, tools: readonly string[]): string | undefined {
  const words = stems(text);
  const lower = text.toLowerCase();
  const printable = tools.filter(isPrintedAsIs);
  let best: string | undefined;
  for (const tool of printable) {
    if (best !== undefined && tool.length <= best.length) continue;
    const name = toolName(tool);
    if (name.literal.test(lower) || indexOfPhrase(words, name.parts, 0) >= 0) best = tool;
  }
  return best;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
