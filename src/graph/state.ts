import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import type { ToolCard } from "../ledger/schema.js";

/**
 * Graph state for an agent with routed tools: LangGraph's messages plus the tools routed for the
 * current turn. Spread `ToolLessonsAnnotation.spec` into your own annotation to add fields.
 */
export const ToolLessonsAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Names of the tools to bind this turn (set by the route node). */
  routedTools: Annotation<string[]>({ reducer: (_previous, next) => next, default: () => [] }),
  /**
   * The cards of the routed tools in the caller's partition, read once per turn by the route
   * node (when it has a ledger): what `bindRoutedTools` describes the tools with.
   */
  routedCards: Annotation<ToolCard[]>({ reducer: (_previous, next) => next, default: () => [] }),
});
export type ToolLessonsState = typeof ToolLessonsAnnotation.State;
