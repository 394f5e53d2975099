import type { ToolLessonsEnv } from "../env.js";

/** Where the CLI writes and what it reads from its surroundings; injected so tests run in-process. */
export interface CliIo {
  /** Results: tables, revisions, the one JSON object of `--json`. */
  stdout: (text: string) => void;
  /** Progress, warnings and the one-line error. */
  stderr: (text: string) => void;
  /**
   * Whether stderr is a terminal: only then do long runs draw a progress bar (never into a pipe
   * or a log file).
   * @default false
   */
  stderrIsTTY?: boolean;
  /**
   * The environment the ledger defaults come from (`TOOL_LESSONS_LEDGER`, `TOOL_LESSONS_POSTGRES_URL`).
   * @default readEnv() (process.env)
   */
  env?: ToolLessonsEnv;
}

/** One subcommand of `tool-lessons`. */
export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  /** Run with the arguments after the command name; returns the exit code. Throws on failure. */
  run: (argv: readonly string[], io: CliIo) => Promise<number>;
}

/** Exit codes. */
export const EXIT = { ok: 0, runtime: 1, usage: 2 } as const;

/** Write whole lines. */
export function println(write: (text: string) => void, lines: string | readonly string[]): void {
  const all = typeof lines === "string" ? [lines] : lines;
  if (all.length > 0) write(`${all.join("\n")}\n`);
}
