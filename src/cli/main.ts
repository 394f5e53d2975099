/**
 * `tool-lessons`: the operator's command line. {@link main} runs one command in-process and
 * returns its exit code (it never calls `process.exit`), so tests drive it with fake writers;
 * `bin/tool-lessons.js` and `tsx src/cli/main.ts` call it with the real ones.
 */
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InvalidInput, ToolLessonsError } from "../errors.js";
import { UsageError, wantsHelp } from "./args.js";
import { LEDGER_COMMANDS } from "./commands.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";
import { evalCommand } from "./eval-command.js";
import { lintCommand } from "./lint-command.js";
import { MEMORY_COMMANDS } from "./memory-commands.js";
import { reportCommand } from "./report-command.js";
import { rulesCommand } from "./rules-command.js";
import { simulateCommand } from "./simulate-command.js";

export type { CliIo } from "./io.js";
export { EXIT } from "./io.js";

/** Every command, in the order the help lists them. */
export const COMMANDS: readonly Command[] = [
  evalCommand,
  lintCommand,
  reportCommand,
  simulateCommand,
  ...LEDGER_COMMANDS,
  rulesCommand,
  ...MEMORY_COMMANDS,
];

const PROGRAM = "tool-lessons";

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: ${PROGRAM} <command> [options]

Tools that get better with use: measure how accurately tools are picked and lint their
descriptions, review what the ledger recorded, apply vetted lessons, undo them, and measure what
learning would do for routing.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

Run \`${PROGRAM} <command> --help\` for a command's options. Docs: docs/cli.md
`;
}

/** The package version, read from package.json two levels up (src/cli/ or dist/cli/). */
function version(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const v = (pkg as { version?: unknown }).version;
    return typeof v === "string" ? v : "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Run `tool-lessons` with `argv` (the arguments after the program name).
 * @returns the exit code: 0 done, 1 failed while running, 2 bad arguments or input files.
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(usage());
    return EXIT.usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    io.stdout(topic ? topic.help : usage());
    return EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    println(io.stdout, version());
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const what = name.startsWith("-") ? `the command comes first; got option ${name}` : `unknown command "${name}"`;
    println(
      io.stderr,
      `${PROGRAM}: ${what}. Commands: ${COMMANDS.map((c) => c.name).join(", ")}. Run \`${PROGRAM} --help\`.`,
    );
    return EXIT.usage;
  }
  if (wantsHelp(rest)) {
    io.stdout(command.help);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    println(io.stderr, errorLine(command.name, error));
    return error instanceof InvalidInput ? EXIT.usage : EXIT.runtime;
  }
}

/** One line: which command failed, what failed and (in the message) how to fix it. */
export function errorLine(command: string, error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ").trim();
  const kind = error instanceof ToolLessonsError ? "" : `${error instanceof Error ? error.name : "error"}: `;
  const hint = error instanceof UsageError ? ` See \`${PROGRAM} ${command} --help\`.` : "";
  return `${PROGRAM} ${command}: ${kind}${message}${hint}`;
}

/** The real process's writers. An EPIPE (output piped into `head`) ends quietly. */
export function processIo(): CliIo {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
  }
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
  };
}

/** Whether this module is the program being run (`tsx src/cli/main.ts ...`), not imported. */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return pathToFileURL(entry).href === import.meta.url;
  }
}

if (isEntryPoint()) {
  process.exitCode = await main(process.argv.slice(2));
}
