#!/usr/bin/env node
// Every code recipe in the README and docs/ type-checks as a user would write it. Each ```ts
// block of README.md and docs/*.md becomes a module of its own in a scratch folder whose
// tsconfig maps `tool-lessons` and each subpath of package.json's `exports` to the sources, and
// `tsc --noEmit` (strict, NodeNext, like a user's project) checks them all at once. Errors are
// printed at the doc's own line (`docs/nodes.md:70:5 TS2322 ...`), and the exit code is 1.
//
// A recipe may use, without declaring them, what an application already has: its chat model, its
// tools, its ledger, graph builder, ... (scripts/recipe-context.d.ts lists them with their
// types). Everything it imports from the package it must import, as a user would.
//
// A block that is deliberately a fragment is skipped when the line before it is
// `<!-- not-checked: why -->` (the reason is required). Keep such marks rare.
//
// Usage: node scripts/check-recipes.mjs [ROOT]   (or TOOL_LESSONS_RECIPES_ROOT=ROOT): the folder
// whose README.md and docs/*.md are read; defaults to this repository. The package's sources
// are always this repository's. The check's own test points ROOT at planted docs.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(process.argv[2] ?? process.env.TOOL_LESSONS_RECIPES_ROOT ?? repo);
const NOT_CHECKED = /^<!--\s*not-checked:\s*(\S.*?)\s*-->$/;
const OPENING = /^```(ts|typescript)\s*$/;

/** The docs read: README.md and docs/*.md of ROOT, in a stable order. */
function docs() {
  const dir = path.join(root, "docs");
  const pages = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith(".md"))
        .sort()
        .map((name) => path.join("docs", name))
    : [];
  return [...(existsSync(path.join(root, "README.md")) ? ["README.md"] : []), ...pages];
}

/** The ```ts blocks of a page: where each starts (the line after the fence) and its code, or why it is skipped. */
function blocksOf(rel) {
  const lines = readFileSync(path.join(root, rel), "utf8").split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!OPENING.test(lines[i])) continue;
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    if (end < 0) break;
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === "") before--;
    const skipped = before >= 0 ? NOT_CHECKED.exec(lines[before].trim())?.[1] : undefined;
    blocks.push({ doc: rel, line: i + 2, code: lines.slice(i + 1, end).join("\n"), skipped });
    i = end;
  }
  return blocks;
}

/** `paths` for the scratch tsconfig: `tool-lessons` and every subpath, to the sources they are built from. */
function packagePaths() {
  const pkg = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8"));
  const paths = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target !== "object" || !target.types) continue;
    const source = target.types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts");
    paths[key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`] = [path.join(repo, source)];
  }
  return paths;
}

const blocks = docs().flatMap(blocksOf);
const checked = blocks.filter((b) => b.skipped === undefined);
// Inside the repository, so that the recipes' own imports (@langchain/*, langchain, zod)
// resolve from its node_modules as a user's would from theirs.
mkdirSync(path.join(repo, "test-results"), { recursive: true });
const scratch = mkdtempSync(path.join(repo, "test-results", "recipes-"));
const files = new Map();
try {
  checked.forEach((block, i) => {
    const name = `${String(i).padStart(3, "0")}-${block.doc.replace(/[^a-z0-9]+/gi, "-")}-${block.line}.ts`;
    // Line n of the file is line n of the block; `export {}` makes it a module (top-level await).
    writeFileSync(path.join(scratch, name), `${block.code}\nexport {};\n`);
    files.set(name, block);
  });
  copyFileSync(path.join(repo, "scripts", "recipe-context.d.ts"), path.join(scratch, "recipe-context.d.ts"));
  writeFileSync(path.join(scratch, "package.json"), JSON.stringify({ private: true, type: "module" }));
  writeFileSync(
    path.join(scratch, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023"],
        types: ["node"],
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        paths: packagePaths(),
      },
      include: ["*.ts"],
    }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", scratch, "--pretty", "false"], {
    cwd: scratch,
    encoding: "utf8",
  });
  const output = `${result.stdout}${result.stderr}`;
  const findings = [];
  for (const line of output.split("\n")) {
    const match = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    if (!match) continue;
    const block = files.get(path.basename(match[1]));
    findings.push(
      block
        ? `${block.doc}:${block.line + Number(match[2]) - 1}:${match[3]} ${match[4]} ${match[5]}`
        : `${path.relative(repo, path.resolve(scratch, match[1]))}:${match[2]}:${match[3]} ${match[4]} ${match[5]}`,
    );
  }
  if (findings.length === 0 && result.status !== 0) findings.push(`tsc did not run: ${output.trim()}`);
  const skipped = blocks.length - checked.length;
  if (findings.length > 0) {
    console.error(findings.join("\n"));
    console.error(
      `recipes: ${findings.length} error(s) in ${checked.length} checked recipe(s), ${skipped} not checked`,
    );
    process.exitCode = 1;
  } else {
    console.log(`recipes: ${checked.length} checked, ${skipped} not checked`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
