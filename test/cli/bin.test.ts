import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("bin/tool-lessons.js", () => {
  it("runs from a checkout: --help lists the commands and exits 0", () => {
    const result = spawnSync(process.execPath, ["bin/tool-lessons.js", "--help"], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: tool-lessons <command> \[options\]/);
    for (const command of [
      "eval",
      "lint",
      "report",
      "simulate",
      "review",
      "apply",
      "dismiss",
      "undo",
      "history",
      "flags",
      "configure",
      "cards",
      "partitions",
    ]) {
      expect(result.stdout).toMatch(new RegExp(`\\n  ${command} +\\S`));
    }
  });
});
