/**
 * One turn's time bound, shared by its steps: each store, index or model call gets what is left
 * of it, and once it is spent (or a step ran past it) the remaining steps are skipped, so a store
 * that never answers costs a turn the bound once, not once per step. One timer serves the whole
 * turn (made at the first step, cleared by {@link TurnBudget.close}), not one per step: the turn's
 * {@link Deadline}, through the package's one time-bound helper, {@link withinBound}.
 */
import { Deadline, type FailureReporter, withinBound } from "../failure.js";
import { TimeBoundExceeded } from "../errors.js";

/** What a step gave: its value, or nothing when it failed, ran past the bound or was skipped. */
export type StepResult<T> = { ok: true; value: T } | { ok: false };

/** A turn's time bound and the reporter its failures go to. */
export class TurnBudget {
  private readonly deadline: Deadline;
  /** True once a step ran past the bound: later steps are skipped. */
  spent = false;
  /** The kinds of the steps that failed, ran past the bound or were skipped for it, in order. */
  readonly failed: string[] = [];

  constructor(
    private readonly timeoutMs: number,
    private readonly reporter: FailureReporter,
    private readonly messages: Readonly<Record<string, string>>,
  ) {
    this.deadline = new Deadline(timeoutMs);
  }

  /** `work` within what is left of the bound; a failure is reported once per `kind`. */
  async step<T>(kind: string, work: () => Promise<T>): Promise<StepResult<T>> {
    if (!this.hasTimeLeft()) {
      this.spent = true;
      this.failed.push(kind);
      return { ok: false };
    }
    try {
      return { ok: true, value: await withinBound(work, this.deadline, { stage: "serve", kind }) };
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
    return !this.spent && this.deadline.left() > 0;
  }

  /** Clear the turn's timer (the turn is over); a step after it gets a new one. */
  close(): void {
    this.deadline.close();
  }
}
