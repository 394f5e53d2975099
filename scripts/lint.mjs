#!/usr/bin/env node
// House rules the type checker does not enforce (see ../shared/STYLE.md): no `any` in src; every
// error thrown in src is a ToolLessonsError (no bare Error, TypeError, RangeError, SyntaxError);
// the folder direction of src; fixtures/ (shared by tests and benchmarks) imports only src;
// kebab-case file names; barrels of named exports only; no src file over MAX_LINES lines but
// generated data; no module-level mutable state in src (pure caches go through src/memo.ts).
// Prints each finding as file:line and exits 1 when there is one.
//
// Usage: node scripts/lint.mjs [ROOT]   (or TOOL_LESSONS_LINT_ROOT=ROOT). ROOT defaults to this
// repository; the lint's own tests point it at a copy of the tree with a planted fault.
// Import cycles are dpdm's job (`npm run lint:cycles`), not this script's.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(process.argv[2] ?? process.env.TOOL_LESSONS_LINT_ROOT ?? repo);
const src = path.join(root, "src");

/**
 * The folder direction of src: what each folder may import, besides its own files. A folder
 * lower in the data's way (text, caller, ledger) must not reach up into the stages built on it, so
 * that each stage can be read, tested and replaced with only what is below it in view.
 *
 * - `folders`: the other src folders it may import;
 * - `rootModules`: the files directly under src it may import. `ROOT_MODULES` are the shared
 *   base (errors, settings, internal, env, failure); the barrels (src/index.ts, src/schema.ts) are
 *   for users, never imported from inside.
 *
 * Every folder under src is listed, lowest first; a folder missing from the table is a finding,
 * so a new folder says where it sits in one line (e.g. `rules: { folders: ["ledger", "text"] }`).
 */
const ROOT_MODULES = ["errors", "settings", "internal", "env", "failure", "memo"];
const ALLOWED_IMPORTS = {
  text: { folders: [], rootModules: ["errors", "internal", "memo"] },
  ledger: { folders: ["text"] },
  // Who a run is for and which request it serves: read by every stage above, owned by none.
  caller: { folders: ["ledger", "text"] },
  record: { folders: ["caller", "ledger", "text"] },
  routing: { folders: ["caller", "ledger", "text"] },
  rules: { folders: ["caller", "ledger", "routing", "text"] },
  memory: { folders: ["ledger", "text"] },
  prompt: { folders: ["ledger", "rules"] },
  learn: { folders: ["caller", "ledger", "memory", "prompt", "routing", "rules", "text"] },
  // Serving a turn: register, route, record the route, read cards, rules and memory, render.
  serve: { folders: ["caller", "learn", "ledger", "prompt", "routing", "rules"] },
  // The app object: one of each piece (ledger, turn server, recorder, tally, manager, sink).
  app: { folders: ["caller", "learn", "ledger", "record", "routing", "serve"] },
  // The views over the app: the nodes and the ready agent, createAgent's middleware.
  graph: { folders: ["app", "caller", "learn", "ledger", "memory", "prompt", "record", "routing", "rules", "serve"] },
  middleware: { folders: ["app", "caller", "ledger", "prompt", "serve"] },
  // The measuring kit and the command line, at the top.
  evaluate: { folders: ["learn", "ledger", "memory", "prompt", "record", "routing", "text"] },
  cli: { folders: ["app", "evaluate", "learn", "ledger", "prompt", "routing", "rules"] },
};
/** The shared base imports only itself: a root module importing a folder would pull a stage under everything. */
const ROOT_MODULE_RULE = { folders: [], rootModules: ROOT_MODULES };
/** The failure policy redacts what it reports, with the gate (text imports no root module but errors and internal). */
const ROOT_MODULE_RULES = { failure: { folders: ["text"], rootModules: ROOT_MODULES } };
/**
 * The barrels under src (package.json `exports`), as paths under src without extension: for
 * users only, so nothing inside depends on what they re-export. The backends' entry points
 * (sqlite-store, postgres, chroma) are modules of their own, not barrels, and are left out.
 */
const BARRELS = [
  "index",
  "schema",
  "privacy",
  ...[
    "graph",
    "record",
    "ledger",
    "routing",
    "learn",
    "rules",
    "memory",
    "prompt",
    "serve",
    "evaluate",
    "middleware",
  ].map((folder) => `${folder}/index`),
];

/** Errors a caller cannot tell apart from a bug: src throws ToolLessonsError subclasses instead. */
const BUILTIN_ERRORS = "Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError";
const BARE_THROW = new RegExp(`\\bthrow\\s+(?:new\\s+)?(?:${BUILTIN_ERRORS})\\s*\\(`);
const BARE_REJECT = new RegExp(`\\bPromise\\.reject\\(\\s*(?:new\\s+)?(?:${BUILTIN_ERRORS})\\s*\\(`);

/** A src file longer than this usually holds two modules (STYLE.md): split it by job. */
const MAX_LINES = 600;

const findings = [];

function checkLength(rel, text) {
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines <= MAX_LINES) return;
  findings.push(`${rel}: ${lines} lines, over ${MAX_LINES}; split it into modules that each hold one job`);
}

function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === "node_modules") continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.(ts|mts)$/.test(name)) out.push(full);
  }
  return out;
}

/** The code of a line: `//` comments and JSDoc/block-comment lines dropped. */
function codeOf(line) {
  return line.replace(/\/\/.*$/, "").replace(/^\s*(\/\*\*?|\*).*$/, "");
}

/** Relative module specifiers of a file (static and dynamic imports, re-exports), with line numbers. */
function relativeImports(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, " "));
  const lineStarts = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === "\n") lineStarts.push(i + 1);
  const lines = code.split("\n");
  const out = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^[ \t]*import\s*)["'](\.[^"']*)["']/gm;
  for (const match of code.matchAll(pattern)) {
    const line = lineStarts.findLastIndex((start) => start <= match.index + match[0].length) + 1;
    if (!/^\s*\/\//.test(lines[line - 1])) out.push({ specifier: match[1], line });
  }
  return out;
}

/** Where a src file sits: its folder, or `.` with its module name for a file directly under src. */
function placeOf(file) {
  const [first, ...rest] = path.relative(src, file).split(path.sep);
  return rest.length === 0 ? { folder: ".", module: first.replace(/\.(m?[jt]s)$/, "") } : { folder: first };
}

/** Folders under src found missing from ALLOWED_IMPORTS, each reported once. */
const unlisted = new Set();

function checkDirection(file, text, rel) {
  const from = placeOf(file);
  if (from.folder !== "." && !Object.hasOwn(ALLOWED_IMPORTS, from.folder) && !unlisted.has(from.folder)) {
    unlisted.add(from.folder);
    findings.push(
      `src/${from.folder}/: a folder missing from ALLOWED_IMPORTS in scripts/lint.mjs; add the line saying which folders it may import`,
    );
  }
  const rule =
    from.folder === "."
      ? ROOT_MODULES.includes(from.module)
        ? (ROOT_MODULE_RULES[from.module] ?? ROOT_MODULE_RULE)
        : undefined
      : ALLOWED_IMPORTS[from.folder];
  const rootModules = rule?.rootModules ?? ROOT_MODULES;
  for (const { specifier, line } of relativeImports(text)) {
    const target = path.resolve(path.dirname(file), specifier);
    if (path.relative(src, target).startsWith("..")) continue;
    const to = placeOf(target);
    const barrel = path
      .relative(src, target)
      .replace(/\.(m?[jt]s)$/, "")
      .split(path.sep)
      .join("/");
    if (BARRELS.includes(barrel)) {
      findings.push(
        `${rel}:${line}: imports the package entry point src/${barrel}.ts ("${specifier}"); import the module that defines the name`,
      );
      continue;
    }
    if (!rule) continue;
    if (to.folder === from.folder && to.folder !== ".") continue;
    const allowed = to.folder === "." ? rootModules.includes(to.module) : rule.folders.includes(to.folder);
    if (allowed) continue;
    const what = to.folder === "." ? `src/${to.module}.ts` : `src/${to.folder}`;
    const who = from.folder === "." ? `src/${from.module}.ts` : `src/${from.folder}`;
    findings.push(
      `${rel}:${line}: ${who} may not import ${what} ("${specifier}"); see ALLOWED_IMPORTS in scripts/lint.mjs`,
    );
  }
}

/**
 * fixtures/ holds what tests and benchmarks both import (scripted models, scripted threads): it
 * imports src and packages only, so a benchmark never depends on the test tree through it.
 */
function checkFixture(text, rel) {
  for (const { specifier, line } of relativeImports(text)) {
    const target = path.relative(root, path.resolve(path.dirname(path.join(root, rel)), specifier));
    const top = target.split(path.sep)[0];
    if (top !== "src" && top !== "fixtures") {
      findings.push(`${rel}:${line}: fixtures/ imports only src and fixtures/, not ${top}/ ("${specifier}")`);
    }
  }
}

/**
 * No module-level mutable state in src: objects meet through the app that owns them, never
 * through a registry a module keeps. At the top level of a module (outside template strings), a
 * `let` or `var`, and a `new Map`/`Set`/`WeakMap`/`WeakSet`/`Array` not declared with a
 * read-only type (`ReadonlySet<...>`, `ReadonlyMap<...>`), are findings. Caches of pure functions
 * go through `src/memo.ts` (`PureMemo`, `WeakPureMemo`, `lazy`), the one sanctioned form.
 */
function checkModuleState(rel, text) {
  if (rel === path.join("src", "memo.ts")) return;
  let inTemplate = false;
  text.split("\n").forEach((line, i) => {
    const startsInTemplate = inTemplate;
    // Backticks of code only: a comment's `name` opens no template.
    const code = startsInTemplate ? line : codeOf(line);
    for (const ch of code.replace(/\\`/g, "")) if (ch === "`") inTemplate = !inTemplate;
    if (startsInTemplate) return;
    if (/^(?:export\s+)?(?:let|var)\s/.test(code)) {
      findings.push(
        `${rel}:${i + 1}: module-level \`let\`/\`var\` (mutable state); keep it in an object the app owns, or a pure cache in src/memo.ts`,
      );
      return;
    }
    const decl = /^(?:export\s+)?const\s+[\w$]+\s*(:\s*[^=]+)?=\s*new\s+(Map|Set|WeakMap|WeakSet|Array)\b/.exec(code);
    if (decl && !/^:\s*Readonly(Map|Set)\b/.test(decl[1] ?? "")) {
      findings.push(
        `${rel}:${i + 1}: module-level \`new ${decl[2]}\` (mutable state); type it Readonly${decl[2] === "Map" ? "Map" : "Set"} if it is a constant, else keep it in an object the app owns (or a pure cache in src/memo.ts)`,
      );
    }
  });
}

const kebab = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)*\.m?ts$/;
for (const dir of ["src", "test", "bench", "examples", "fixtures"]) {
  for (const file of walk(path.join(root, dir))) {
    const rel = path.relative(root, file);
    if (!kebab.test(path.basename(file))) findings.push(`${rel}: file name is not kebab-case`);
    if (dir === "fixtures") checkFixture(readFileSync(file, "utf8"), rel);
    if (dir !== "src") continue;
    const text = readFileSync(file, "utf8");
    checkDirection(file, text, rel);
    checkLength(rel, text);
    checkModuleState(rel, text);
    text.split("\n").forEach((line, i) => {
      const code = codeOf(line);
      if (/(:\s*any\b|\bas any\b|<any>|any\[\])/.test(code)) findings.push(`${rel}:${i + 1}: \`any\` in src`);
      if (BARE_THROW.test(code) || BARE_REJECT.test(code)) {
        findings.push(`${rel}:${i + 1}: a built-in error is thrown; throw a ToolLessonsError subclass (src/errors.ts)`);
      }
      if (/^export \*/.test(code)) findings.push(`${rel}:${i + 1}: export names, not \`export *\``);
    });
  }
}

if (findings.length > 0) {
  console.error(findings.join("\n"));
  console.error(`lint: ${findings.length} finding(s)`);
  process.exit(1);
}
console.log("lint: clean");
