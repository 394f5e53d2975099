/**
 * One turn's time bound, shared by its steps: each store, index or model call gets what is left
 * of it, and once it is spent (or a step ran past it) the remaining steps are skipped, so a store
 * that never answers costs a turn the bound once, not once per step. One timer serves the whole
 * turn (made at the first step, cleared by {@link TurnBudget.close}), not one per step.
 */
import type { FailureReporter } from "../failure.js";
import { TimeBoundExceeded } from "../errors.js";

/** What a step gave: its value, or nothing when it failed, ran past the bound or was skipped. */
export type StepResult<T> = { ok: true; value: T } | { ok: false };

/** What the turn's timer resolves to once the bound has passed. */
const EXPIRED = Symbol("expired");

/** A turn's time bound and the reporter its failures go to. */
export class TurnBudget {
  private readonly deadline: number;
  /** Resolves to {@link EXPIRED} at the deadline (made at the first step that waits). */
  private expiry: Promise<typeof EXPIRED> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** True once a step ran past the bound: later steps are skipped. */
  spent = false;
  /** The kinds of the steps that failed, ran past the bound or were skipped for it, in order. */
  readonly failed: string[] = [];

  constructor(
    private readonly timeoutMs: number,
    private readonly reporter: FailureReporter,
    private readonly messages: Readonly<Record<string, string>>,
  ) {
    this.deadline = Number.isFinite(timeoutMs) && timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  }

  /** `work` within what is left of the bound; a failure is reported once per `kind`. */
  async step<T>(kind: string, work: () => Promise<T>): Promise<StepResult<T>> {
    const left = this.deadline - Date.now();
    if (this.spent || left <= 0) {
      this.spent = true;
      this.failed.push(kind);
      return { ok: false };
    }
    try {
      const promise = work();
      if (!Number.isFinite(left)) return { ok: true, value: await promise };
      // Past the bound the work is left to settle; its late result or error is dropped.
      promise.catch(() => undefined);
      const value = await Promise.race([promise, this.expired(left)]);
      if (value === EXPIRED) {
        const bound = Math.max(1, left);
        throw new TimeBoundExceeded(`serve: ${kind} did not answer within ${bound} ms.`, {
          context: { stage: "serve", kind, timeoutMs: bound },
        });
      }
      return { ok: true, value: value as T };
    } catch (error) {
      this.failed.push(kind);
      const late = error instanceof TimeBoundExceeded;
      if (late) this.spent = true;
      const what = this.messages[kind] ?? `${kind} failed; the turn went on without it.`;
      this.reporter.report(
        late ? `${kind}_timeout` : kind,
        late ? `${what} (no answer within the ${this.timeoutMs} ms bound)` : what,
        error,
        { kind },
      );
      return { ok: false };
    }
  }

  /** True while the bound is not spent: a step started now would be given time. */
  hasTimeLeft(): boolean {
    return !this.spent && this.deadline - Date.now() > 0;
  }

  /** Clear the turn's timer (the turn is over); a step after it gets a new one. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.expiry = undefined;
  }

  /** The turn's one timer: resolves at the deadline (`left` ms from now). */
  private expired(left: number): Promise<typeof EXPIRED> {
    this.expiry ??= new Promise((resolve) => {
      this.timer = setTimeout(resolve, Math.max(1, left), EXPIRED);
      this.timer.unref?.();
    });
    return this.expiry;
  }
}
