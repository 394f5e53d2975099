/**
 * The options of the app object ({@link ToolLessons} in `./app.ts`), their defaults in one frozen
 * object, and the check at the door.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseStore } from "@langchain/langgraph";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import type { ToolSource } from "../ledger/cards.js";
import { DEFAULT_EFFECT_CHECK } from "../learn/review/effect.js";
import type { Proposer } from "../learn/proposer.js";
import { DEFAULT_SERVE, type ServeOptions } from "../serve/options.js";

/**
 * Options of {@link ToolLessons} (`createToolLessons`): serving's, learning's and where the
 * ledger lives, in one object checked at the door. Every adapter (the ready agent, the lessons
 * nodes, the middleware, the manager, `search_tools`, the CLI) is a view over the app these make.
 */
export interface ToolLessonsOptions extends Omit<ServeOptions, "captureEdicts"> {
  /**
   * The store the app's ledger writes through (ignored when `ledger` is given).
   * @default none: a ledger over each run's store (`config.store`), made once per store
   */
  store?: BaseStore;
  /**
   * The agent's tools (names and descriptions: edicts are scoped to them, routing falls back to
   * them, `setup()` registers them). The middleware takes each request's tools instead.
   * @default []
   */
  tools?: readonly ToolSource[];
  /**
   * The app names no caller anywhere (one user, one tenant): the recorder files a run whose
   * metadata names no caller under the `default` partition instead of withholding it.
   * @default false
   */
  singleTenant?: boolean;
  /**
   * A chat model that proposes lessons (structured output, vetted like the rest).
   * @default none: the deterministic proposer
   */
  proposerModel?: BaseChatModel;
  /**
   * Who proposes lessons when no `proposerModel` is given.
   * @default a DeterministicProposer choosing examples by routing coverage
   */
  proposer?: Proposer;
  /**
   * Apply the vetted revisions at once (approved by `tool-lessons:auto`). Off: they wait for an
   * operator (`tool-lessons review` / `apply`). Edicts are stored at once either way.
   * @default false
   */
  autoApply?: boolean;
  /**
   * Undo an applied revision whose measured effect is nil or negative, the reason recorded on it
   * (`undoneBecause`; `closedBy` "tool-lessons"). Off: it is only flagged for the operator
   * (`tool-lessons effects`, `history`, `review`, the report). The graph measures applied
   * revisions only when its learn step runs anyway, or when a revised tool has had enough new
   * calls, misses and confusions since its last check (counted in process, no read); the same
   * option as `LessonManager.effects({ undoFlagged })`.
   * @default false
   */
  undoFlagged?: boolean;
  /**
   * Tool calls of a thread after which its tools' memory is evaluated and guidelines written.
   * @default 10
   */
  memoryEvery?: number;
  /**
   * Something to flush before the nodes read a thread's records (the recorder of the run); it is
   * given the nodes' `timeoutMs`.
   * @default none
   */
  recorder?: { flush(options?: { timeoutMs?: number }): Promise<unknown> };
}

/** The defaults of {@link ToolLessonsOptions} applied with `??` (serving's are `DEFAULT_SERVE`), in one frozen object. */
export const DEFAULT_TOOL_LESSONS = Object.freeze({
  ...DEFAULT_SERVE,
  tools: Object.freeze([]) as readonly ToolSource[],
  autoApply: false,
  undoFlagged: DEFAULT_EFFECT_CHECK.undoFlagged,
  memoryEvery: 10,
});

/**
 * What a learning node may take on top of `timeoutMs` when its proposer calls a model (the
 * proposer's model call is on the run's path too, and takes seconds).
 */
export const PROPOSER_TIME_BOUND_MS = 30_000;

/** The scalar options, checked once when the app is made (objects are checked by their own classes). */
const ScalarOptions = z.object({
  maxTools: z.number().int().positive().optional(),
  // Infinity waits as long as the store and index take (see `ServeOptions.timeoutMs`).
  timeoutMs: z.union([z.number().positive(), z.literal(Number.POSITIVE_INFINITY)]).optional(),
  maxTokens: z.number().int().positive().optional(),
  searchResults: z.number().int().positive().optional(),
  memoryEvery: z.number().int().positive().optional(),
  alwaysInclude: z.array(z.string()).optional(),
  tools: z.array(z.object({ name: z.string().min(1) }).loose()).optional(),
  register: z.boolean().optional(),
  cacheKeeping: z.boolean().optional(),
  autoApply: z.boolean().optional(),
  undoFlagged: z.boolean().optional(),
});

/**
 * The options, checked: a wrong type or a number out of range is an `InvalidInput` naming the
 * option, before anything is built.
 * @throws InvalidInput
 */
export function checkOptions<T extends ToolLessonsOptions>(options: T): T {
  if (options === null || typeof options !== "object") {
    throw new InvalidInput("tool-lessons takes an options object, e.g. createToolLessons({ store }).");
  }
  const parsed = ScalarOptions.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidInput(`The option ${issue.path.join(".") || "(root)"} is not valid: ${issue.message}.`, {
      context: { option: issue.path.join(".") },
    });
  }
  return options;
}
