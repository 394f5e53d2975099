/**
 * scripts/check-recipes.mjs (run by `npm run lint`): the ```ts blocks of README.md and docs/*.md
 * type-checked as a user would write them, `tool-lessons` and its subpaths mapped to src/. Here it
 * reads planted pages, so the recipes and the errors it must find are known; the repository's
 * own recipes are checked by the lint itself.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const script = join(repo, "scripts", "check-recipes.mjs");

function check(root: string) {
  const result = spawnSync(process.execPath, [script, root], { cwd: repo, encoding: "utf8", timeout: 240_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const README = `# app

\`\`\`ts
import { openLedger, ToolIndex } from "tool-lessons";

const ledger = await openLedger({ store });
const index = new ToolIndex({ ledger, embeddings });
\`\`\`

A recipe with an option the API does not take (line 13 below):

\`\`\`ts
import { LessonManager } from "tool-lessons";

const manager = new LessonManager({ ledger, index, k: 5 });
\`\`\`

<!-- not-checked: a fragment of a longer listing -->

\`\`\`ts
return { messages: [await bound.invoke(state.messages, config)] };
\`\`\`
`;

const PAGE = `# page

\`\`\`ts
import { classifyError } from "tool-lessons";
import { renderRulesBlock } from "tool-lessons/prompt";

export const both = [classifyError, renderRulesBlock];
\`\`\`
`;

const CLEAN = `# page

\`\`\`ts
import { createRecallRulesTool } from "tool-lessons/rules";

const recall = createRecallRulesTool({ ledger });
\`\`\`
`;

let planted: string;
let clean: string;

beforeAll(() => {
  planted = mkdtempSync(join(tmpdir(), "tool-lessons-recipes-"));
  mkdirSync(join(planted, "docs"));
  writeFileSync(join(planted, "README.md"), README);
  writeFileSync(join(planted, "docs", "page.md"), PAGE);
  clean = mkdtempSync(join(tmpdir(), "tool-lessons-recipes-"));
  mkdirSync(join(clean, "docs"));
  writeFileSync(join(clean, "docs", "page.md"), CLEAN);
});

afterAll(() => {
  for (const dir of [planted, clean]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("scripts/check-recipes.mjs", () => {
  it("fails on a recipe that does not type-check, at the doc's own line, and skips a marked fragment", () => {
    const result = check(planted);
    expect(result.status).toBe(1);
    // The unknown option, at README.md line 15 (the block starts on line 13).
    expect(result.output).toMatch(/^README\.md:15:\d+ TS2353 .*'k'/m);
    // A name the root does not export, and a subpath that exports what it imports.
    expect(result.output).toMatch(/^docs\/page\.md:4:\d+ TS2305 .*'classifyError'/m);
    expect(result.output).not.toMatch(/page\.md:5:/);
    // The marked fragment (a bare `return`) is not checked; the first block is clean.
    expect(result.output).not.toMatch(/README\.md:2[0-9]:/);
    expect(result.output).not.toMatch(/README\.md:[4-8]:/);
    expect(result.output).toContain("recipes: 2 error(s) in 3 checked recipe(s), 1 not checked");
  }, 300_000);

  it("passes pages whose recipes type-check, and leaves no scratch folder behind", () => {
    const scratch = () =>
      existsSync(join(repo, "test-results"))
        ? readdirSync(join(repo, "test-results")).filter((name) => name.startsWith("recipes-"))
        : [];
    const before = scratch();
    const result = check(clean);
    expect(result.output).toContain("recipes: 1 checked, 0 not checked");
    expect(result.status).toBe(0);
    expect(scratch().filter((name) => !before.includes(name))).toEqual([]);
  }, 300_000);
});
