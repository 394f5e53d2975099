/**
 * What the lessons nodes are built from: the app object (`src/app/`), given or made from the
 * graph's options. The nodes are views over it: one app, one turn server, one tally, one sink.
 */
import { createToolLessons, ToolLessons } from "../app/app.js";
import type { ToolLessonsOptions } from "../app/options.js";
import type { ToolSource } from "../ledger/cards.js";

export type { RunContext } from "../app/app.js";

/** Options of the lessons nodes and of `createLessonsGraph`: the app's, with the agent's tools. */
export interface LessonsGraphOptions extends ToolLessonsOptions {
  /** The agent's tools (names and descriptions: edicts are scoped to them, routing falls back to them). */
  tools: readonly ToolSource[];
}

/** What the lessons graph, node and nodes take: an app of your own (`{ app }`), or the options to make one. */
export type LessonsGraphInput = LessonsGraphOptions | { app: ToolLessons };

/** The app the nodes are views over: the one given, else one made from the options. */
export function appOf(input: LessonsGraphInput): ToolLessons {
  return "app" in input && input.app instanceof ToolLessons
    ? input.app
    : createToolLessons(input as LessonsGraphOptions);
}
