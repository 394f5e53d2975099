/**
 * A progress bar for long runs, drawn on stderr only when it is a terminal: in a pipe, a CI log
 * or a test it draws nothing, so stdout stays the answer and stderr stays readable.
 */
import type { CliIo } from "./io.js";

/** A progress bar: `update` as work finishes, `end` to clear it. */
export interface ProgressBar {
  update(done: number, total: number, note?: string): void;
  end(): void;
}

/** Least time between two redraws, in ms (the last step is always drawn). */
const INTERVAL_MS = 100;

/** Characters of the bar itself. */
const WIDTH = 30;

const NO_BAR: ProgressBar = Object.freeze({ update: () => undefined, end: () => undefined });

/** One line of the bar: `label [#####.....] 120/300 40% note`. */
export function progressLine(label: string, done: number, total: number, width: number, note = ""): string {
  const share = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(share * width);
  return `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${Math.floor(share * 100)}%${note ? ` ${note}` : ""}`;
}

/** A bar on `io.stderr` when it is a terminal, else one that draws nothing. */
export function progressBar(io: CliIo, label: string): ProgressBar {
  if (!io.stderrIsTTY) return NO_BAR;
  let last = Number.NEGATIVE_INFINITY;
  let drawn = false;
  return {
    update(done, total, note) {
      const t = Date.now();
      if (done < total && t - last < INTERVAL_MS) return;
      last = t;
      drawn = true;
      io.stderr(`\r\x1b[K${progressLine(label, done, total, WIDTH, note)}`);
    },
    end() {
      if (drawn) io.stderr("\r\x1b[K");
      drawn = false;
    },
  };
}
