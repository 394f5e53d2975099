import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main.js";

/** What one in-process run of the CLI printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `tool-lessons ...argv` in-process with captured output and an empty environment. */
export async function runCli(...argv: string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: {},
  });
  return { code, stdout, stderr };
}

/** A temporary directory, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "tool-lessons-cli-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Write objects as JSON lines; returns the path. */
export function writeJsonl(dir: string, name: string, rows: readonly unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Options of {@link runCliProcess}. */
export interface ProcessOptions {
  /** Extra environment variables (the child starts from PATH and HOME only, no TOOL_LESSONS_*). */
  env?: Record<string, string>;
  /** Working directory. @default the repository root */
  cwd?: string;
  /** Kill the child after this long. @default 120000 */
  timeoutMs?: number;
}

/**
 * Run `tool-lessons ...argv` as a real child process (`node bin/tool-lessons.js`), with pipes for
 * stdout and stderr (so not a TTY) and a bare environment.
 */
export function runCliProcess(argv: readonly string[], options: ProcessOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/tool-lessons.js"), ...argv], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}
