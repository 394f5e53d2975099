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

/** Distinct (kind, scope) pairs a reporter remembers as heard; past it the oldest is forgotten. */
const HEARD_KEPT = 10_000;

/**
 * Reports failures to a sink, redacted, under the package's one dedup policy: once per kind and
 * scope. The scope says what a failure is about when that matters (a partition whose routing fell
 * back, a ledger row that did not parse); without one, a kind is heard once per reporter. One
 * reporter per stage of an app (serve, learn, ledger, record, manage), all to the app's one sink.
 */
export class FailureReporter {
  private readonly heard = new Set<string>();

  constructor(
    readonly stage: FailureStage,
    private readonly sink: FailureSink = DEFAULT_FAILURE_SINK,
  ) {}

  /**
   * Report once per `kind` and `scope`; later reports of the same pair are dropped (the memory
   * is bounded: a pair forgotten past 10,000 may be heard again). Returns whether it was sent.
   */
  report(
    kind: string,
    message: string,
    error?: unknown,
    context?: ToolLessonsFailure["context"],
    scope?: string,
  ): boolean {
    const key = scope === undefined ? kind : `${kind}\u0000${scope}`;
    if (this.heard.has(key)) return false;
    this.heard.add(key);
    if (this.heard.size > HEARD_KEPT) this.heard.delete(this.heard.values().next().value as string);
    this.send(kind, message, error, context);
    return true;
  }

  private send(kind: string, message: string, error?: unknown, context?: ToolLessonsFailure["context"]): void {
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
 * A deadline that several calls share: one timer, made at the first call that waits and cleared by
 * {@link Deadline.close}, however many calls it bounds (a turn's steps share one). `Infinity` or
 * `0` never expires.
 */
export class Deadline {
  readonly at: number;
  private expiry: Promise<typeof EXPIRED> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly timeoutMs: number) {
    this.at = Number.isFinite(timeoutMs) && timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  }

  /** Milliseconds left (`Infinity` for no bound). */
  left(): number {
    return this.at - Date.now();
  }

  /** Resolves to {@link EXPIRED} at the deadline (the one timer, made now if it is not yet). */
  expired(): Promise<typeof EXPIRED> {
    this.expiry ??= new Promise((resolve) => {
      this.timer = setTimeout(resolve, Math.max(1, this.left()), EXPIRED);
      this.timer.unref?.();
    });
    return this.expiry;
  }

  /** Clear the timer; a call after it gets a new one. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.expiry = undefined;
  }
}

/** What a {@link Deadline}'s timer resolves to once it has passed. */
const EXPIRED = Symbol("expired");

/**
 * `work` within a bound, the one time-bound helper of the package: `timeoutMs` for this call
 * alone, or a {@link Deadline} it shares with other calls (a turn's steps). Gives the work's
 * value, or a {@link TimeBoundExceeded} rejection once the bound passes (the work itself is left to
 * settle; its late result or error is dropped). No bound (`Infinity`, `0`) waits as long as the
 * work takes.
 */
export async function withinBound<T>(
  work: Promise<T> | (() => Promise<T>),
  bound: number | Deadline,
  what: { stage: FailureStage; kind: string },
): Promise<T> {
  const deadline = typeof bound === "number" ? new Deadline(bound) : bound;
  const left = deadline.left();
  const promise = typeof work === "function" ? work() : work;
  if (!Number.isFinite(left)) return promise;
  promise.catch(() => undefined);
  try {
    const value = await Promise.race([promise, deadline.expired()]);
    if (value !== EXPIRED) return value as T;
    const ms = typeof bound === "number" ? bound : Math.max(1, Math.round(left));
    throw new TimeBoundExceeded(`${what.stage}: ${what.kind} did not answer within ${ms} ms.`, {
      context: { ...what, timeoutMs: ms },
    });
  } finally {
    if (typeof bound === "number") deadline.close();
  }
}
