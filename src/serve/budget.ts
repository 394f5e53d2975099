/**
 * One turn's time bound, shared by its steps: each store, index or model call gets what is left
 * of it, and once it is spent (or a step ran past it) the remaining steps are skipped, so a store
 * that never answers costs a turn the bound once, not once per step.
 */
import { type FailureReporter, withinBound } from "../failure.js";
import { TimeBoundExceeded } from "../errors.js";

/** What a step gave: its value, or nothing when it failed, ran past the bound or was skipped. */
export type StepResult<T> = { ok: true; value: T } | { ok: false };

/** A turn's time bound and the reporter its failures go to. */
export class TurnBudget {
  private readonly deadline: number;
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
      const value = await withinBound(work, Number.isFinite(left) ? Math.max(1, left) : Infinity, {
        stage: "serve",
        kind,
      });
      return { ok: true, value };
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
}
