/**
 * One failure policy for every piece on the user's run path (the recorder, serving a turn,
 * learning in the graph, the middleware, the manager): each store, index or model call the run
 * waits for has a time bound, and whatever fails or runs past it is reported through one sink
 * shape, once per kind, with the error redacted. The turn goes on without lessons; nothing is
 * thrown into the user's run.
 */
import { TimeBoundExceeded } from "./errors.js";
import { redactError } from "./text/gate.js";

/** Which part of the package a failure happened in. */
export type FailureStage = "record" | "serve" | "learn" | "manage" | "ledger";

/** What a {@link FailureSink} hears: no argument value, no request text, the error redacted. */
export interface ToolLessonsFailure {
  /** The part of the package that degraded. */
  stage: FailureStage;
  /** A stable name for the kind of failure (`ledger_read`, `routing`, `store_write`, …); reported once per sink. */
  kind: string;
  /** What was degraded and what the turn did instead, for a person. */
  message: string;
  /** The cause, redacted (`redactError`): its message and stack carry no argument value. */
  error?: Error;
  /** Counts, ids and names that help a person act; never argument values. */
  context?: Readonly<Record<string, string | number | boolean | undefined>>;
}

/** Where failures go. Never throws into the run: a sink that throws is ignored. */
export type FailureSink = (failure: ToolLessonsFailure) => void;

/** The sink used when none is given: one `console.warn` line with a `[tool-lessons]` prefix. */
export const DEFAULT_FAILURE_SINK: FailureSink = (failure) =>
  console.warn(`[tool-lessons] ${failure.stage}: ${failure.message}`, ...(failure.error ? [failure.error] : []));

/** The time bound, in milliseconds, of a store, index or model call the user's run waits for. */
export const DEFAULT_TIME_BOUND_MS = 2_000;

/**
 * Reports failures to a sink once per kind (per reporter), redacted. One reporter per adapter
 * instance (a lessons graph, a middleware, a recorder, a manager).
 */
export class FailureReporter {
  private readonly heard = new Set<string>();

  constructor(
    readonly stage: FailureStage,
    private readonly sink: FailureSink = DEFAULT_FAILURE_SINK,
  ) {}

  /** Report once per `kind`; later reports of the same kind are dropped. Returns whether it was sent. */
  report(kind: string, message: string, error?: unknown, context?: ToolLessonsFailure["context"]): boolean {
    if (this.heard.has(kind)) return false;
    this.heard.add(kind);
    this.reportEach(kind, message, error, context);
    return true;
  }

  /**
   * Report every time, redacted, for a piece whose failures are events to count rather than one
   * state to hear of (each skipped ledger row, each failed prune).
   */
  reportEach(kind: string, message: string, error?: unknown, context?: ToolLessonsFailure["context"]): void {
    const failure: ToolLessonsFailure = {
      stage: this.stage,
      kind,
      message,
      ...(error !== undefined ? { error: redactError(error) } : {}),
      ...(context ? { context } : {}),
    };
    try {
      this.sink(failure);
    } catch {
      // A sink that throws must not break the run it reports on.
    }
  }
}

/**
 * `work` within `timeoutMs`: its value, or a {@link TimeBoundExceeded} rejection once the bound
 * passes (the work itself is left to settle; its late result or error is dropped). A bound of
 * `Infinity` or `0` waits as long as the work takes.
 */
export async function withinBound<T>(
  work: Promise<T> | (() => Promise<T>),
  timeoutMs: number,
  what: { stage: FailureStage; kind: string },
): Promise<T> {
  const promise = typeof work === "function" ? work() : work;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new TimeBoundExceeded(`${what.stage}: ${what.kind} did not answer within ${timeoutMs} ms.`, {
            context: { ...what, timeoutMs },
          }),
        ),
      timeoutMs,
    );
    timer.unref?.();
  });
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
