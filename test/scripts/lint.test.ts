import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const lintScript = join(repo, "scripts", "lint.mjs");
const dpdmBin = join(repo, "node_modules", "dpdm", "lib", "bin", "dpdm.js");
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  exports: Record<string, string | { import?: string }>;
};

/** The `lint:cycles` script split into dpdm's flags and the entry points it checks. */
const cyclesScript = pkg.scripts["lint:cycles"].split(/\s+/);
const dpdmFlags = cyclesScript.slice(1).filter((a) => !a.endsWith(".ts"));
const dpdmEntries = cyclesScript.slice(1).filter((a) => a.endsWith(".ts"));

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the repository's src/ (and tsconfig.json, which dpdm reads to resolve `.js` to `.ts`). */
function copyOfSrc(): string {
  const root = mkdtempSync(join(tmpdir(), "tool-lessons-lint-"));
  temps.push(root);
  cpSync(join(repo, "src"), join(root, "src"), { recursive: true });
  cpSync(join(repo, "tsconfig.json"), join(root, "tsconfig.json"));
  return root;
}

/** A tree of the given files only. */
function treeOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "tool-lessons-lint-"));
  temps.push(root);
  cpSync(join(repo, "tsconfig.json"), join(root, "tsconfig.json"));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

function plant(root: string, file: string, text: string): void {
  appendFileSync(join(root, file), `\n${text}\n`);
}

function lint(root: string, how: "argument" | "env" = "argument") {
  const args = how === "argument" ? [lintScript, root] : [lintScript];
  const env = how === "env" ? { ...process.env, TOOL_LESSONS_LINT_ROOT: root } : process.env;
  const result = spawnSync(process.execPath, args, { cwd: repo, env, encoding: "utf8", timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function dpdm(root: string, entries: readonly string[]) {
  const result = spawnSync(process.execPath, [dpdmBin, ...dpdmFlags, ...entries], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("scripts/lint.mjs", () => {
  it("passes the repository's src as it is, given as an argument or in TOOL_LESSONS_LINT_ROOT", () => {
    const root = copyOfSrc();
    expect(lint(root)).toEqual({ status: 0, output: "lint: clean\n" });
    expect(lint(root, "env")).toEqual({ status: 0, output: "lint: clean\n" });
  });

  it("checks the tree it is given, not the repository", () => {
    const root = copyOfSrc();
    plant(root, "src/text/tokenize.ts", 'export function planted(): never { throw new Error("planted"); }');
    expect(lint(root).status).toBe(1);
    expect(lint(root, "env").status).toBe(1);
  });

  it("refuses a fixture importing the test or bench tree, and allows one importing src", () => {
    const root = copyOfSrc();
    const fixture = (specifier: string) => `import { x } from "${specifier}";\nexport const y = x;\n`;
    writeFileSync(join(root, "src", "x.ts"), "export const x = 1;\n");
    mkdirSync(join(root, "fixtures"));
    writeFileSync(join(root, "fixtures", "model.ts"), fixture("../src/x.js"));
    expect(lint(root)).toEqual({ status: 0, output: "lint: clean\n" });
    writeFileSync(join(root, "fixtures", "model.ts"), fixture("../test/helpers/x.js"));
    const found = lint(root);
    expect(found.status).toBe(1);
    expect(found.output).toMatch(/fixtures\/model\.ts:1: fixtures\/ imports only src and fixtures\/, not test\//);
  });

  describe("folder direction", () => {
    const wrong: [from: string, specifier: string, rule: RegExp][] = [
      ["src/ledger/keys.ts", "../learn/manager.js", /src\/ledger may not import src\/learn/],
      ["src/ledger/keys.ts", "../record/handler.js", /src\/ledger may not import src\/record/],
      ["src/ledger/keys.ts", "../routing/router.js", /src\/ledger may not import src\/routing/],
      ["src/text/tokenize.ts", "../ledger/keys.js", /src\/text may not import src\/ledger/],
      ["src/text/tokenize.ts", "../settings.js", /src\/text may not import src\/settings\.ts/],
      ["src/routing/router.ts", "../learn/vet.js", /src\/routing may not import src\/learn/],
      ["src/routing/router.ts", "../graph/route-node.js", /src\/routing may not import src\/graph/],
      ["src/routing/router.ts", "../prompt/describe.js", /src\/routing may not import src\/prompt/],
      ["src/caller/partition.ts", "../record/rows.js", /src\/caller may not import src\/record/],
      ["src/record/rows.ts", "../serve/tool-set.js", /src\/record may not import src\/serve/],
      ["src/routing/router.ts", "../record/handler.js", /src\/routing may not import src\/record/],
      ["src/rules/store.ts", "../record/rows.js", /src\/rules may not import src\/record/],
      ["src/serve/turn-server.ts", "../record/handler.js", /src\/serve may not import src\/record/],
      ["src/learn/vet.ts", "../graph/state.js", /src\/learn may not import src\/graph/],
      ["src/learn/vet.ts", "../evaluate/metrics.js", /src\/learn may not import src\/evaluate/],
      ["src/learn/vet.ts", "../cli/io.js", /src\/learn may not import src\/cli/],
      ["src/settings.ts", "./ledger/keys.js", /src\/settings\.ts may not import src\/ledger/],
      ["src/cli/io.ts", "../index.js", /imports the package entry point src\/index\.ts/],
      ["src/cli/io.ts", "../graph/index.js", /imports the package entry point src\/graph\/index\.ts/],
      ["src/learn/vet.ts", "../rules/index.js", /imports the package entry point src\/rules\/index\.ts/],
    ];
    it.each(wrong)("refuses %s importing %s, naming the file and line", (from, specifier, rule) => {
      const root = copyOfSrc();
      const lines = readFileSync(join(root, from), "utf8").split("\n").length;
      plant(root, from, `import "${specifier}";`);
      const result = lint(root);
      expect(result.status).toBe(1);
      expect(result.output).toContain(`${from}:${lines + 1}: `);
      expect(result.output).toMatch(rule);
    });

    it("reports a folder missing from the table once, whatever it imports", () => {
      const root = copyOfSrc();
      mkdirSync(join(root, "src", "planted"));
      writeFileSync(join(root, "src", "planted", "one.ts"), 'import "../errors.js";\nexport const one = 1;\n');
      writeFileSync(join(root, "src", "planted", "two.ts"), "export const two = 2;\n");
      const result = lint(root);
      expect(result.status).toBe(1);
      expect(result.output.match(/src\/planted\/: a folder missing from ALLOWED_IMPORTS/g)).toHaveLength(1);
      expect(result.output).toContain("lint: 1 finding(s)");
    });

    it("finds type-only, re-exported, multi-line and dynamic imports", () => {
      const root = copyOfSrc();
      plant(root, "src/ledger/keys.ts", 'import type { Review } from "../learn/manager.js";');
      plant(root, "src/ledger/cards.ts", 'export { vetProposal } from "../learn/vet.js";');
      plant(root, "src/ledger/open.ts", 'import {\n  detect,\n} from "../learn/detect.js";');
      plant(root, "src/text/mask.ts", 'export const later = () => import("../ledger/keys.js");');
      const { status, output } = lint(root);
      expect(status).toBe(1);
      for (const file of ["src/ledger/keys.ts", "src/ledger/cards.ts", "src/ledger/open.ts", "src/text/mask.ts"]) {
        expect(output).toContain(`${file}:`);
      }
    });

    it("allows what the table allows and ignores imports in comments", () => {
      const root = copyOfSrc();
      plant(root, "src/learn/vet.ts", 'import "../routing/router.js";\nimport "../prompt/describe.js";');
      plant(root, "src/routing/router.ts", 'import "../ledger/keys.js";\nimport "../caller/partition.js";');
      plant(root, "src/text/tokenize.ts", 'import "../errors.js";\nimport "../internal.js";');
      plant(
        root,
        "src/ledger/keys.ts",
        '// import "../learn/manager.js";\n/**\n * import { x } from "../learn/vet.js";\n */',
      );
      expect(lint(root)).toEqual({ status: 0, output: "lint: clean\n" });
    });
  });

  describe("errors", () => {
    const bare = [
      'throw new Error("planted");',
      'throw Error("planted");',
      'throw new TypeError("planted");',
      'throw new RangeError("planted");',
      'throw new SyntaxError("planted");',
      'return Promise.reject(new Error("planted"));',
    ];
    it.each(bare)("refuses `%s` in src, naming the file and line", (statement) => {
      const root = copyOfSrc();
      const lines = readFileSync(join(root, "src/routing/router.ts"), "utf8").split("\n").length;
      plant(root, "src/routing/router.ts", `export function planted(): Promise<never> | never {\n  ${statement}\n}`);
      const result = lint(root);
      expect(result.status).toBe(1);
      expect(result.output).toContain(`src/routing/router.ts:${lines + 2}: a built-in error is thrown`);
    });

    it("allows ToolLessonsError subclasses and the words in comments", () => {
      const root = copyOfSrc();
      plant(
        root,
        "src/routing/router.ts",
        'import { InvalidInput } from "../errors.js";\n// never throw new Error("x") here\n/** throw new TypeError(...) is refused by the lint */\nexport function planted(): never {\n  throw new InvalidInput("planted");\n}',
      );
      expect(lint(root)).toEqual({ status: 0, output: "lint: clean\n" });
    });
  });

  describe("module-level state", () => {
    const planted = [
      ["let", "let planted = 0;"],
      ["export let", "export let planted: string | undefined;"],
      ["var", "var planted = 1;"],
      ["a registry Map", "const planted = new Map<string, number>();"],
      ["a WeakMap", "const planted = new WeakMap<object, number>();"],
      ["a Set typed mutable", "const planted: Set<string> = new Set();"],
    ];
    it.each(planted)("refuses %s at the top of a module, naming the file and line", (_, statement) => {
      const root = copyOfSrc();
      const lines = readFileSync(join(root, "src/routing/router.ts"), "utf8").split("\n").length;
      plant(root, "src/routing/router.ts", statement);
      const result = lint(root);
      expect(result.status).toBe(1);
      expect(result.output).toContain(`src/routing/router.ts:${lines + 1}: module-level`);
    });

    it("allows read-only constants, pure caches of src/memo.ts, state inside functions and text in templates", () => {
      const root = copyOfSrc();
      plant(
        root,
        "src/routing/router.ts",
        [
          'import { lazy, PureMemo } from "../memo.js";',
          'const PLANTED_WORDS: ReadonlySet<string> = new Set(["a"]);',
          "const PLANTED_MEMO = new PureMemo<string, number>(8);",
          "const plantedLoad = lazy(() => PLANTED_WORDS.size + PLANTED_MEMO.get('a', () => 1));",
          "export function planted(): number {\n  let n = plantedLoad();\n  n += 1;\n  return n;\n}",
          "export const PLANTED_SCRIPT = `\nlet stopping = false;\nconst seen = new Map();\n`;",
          "// let planted = 0; in a comment",
        ].join("\n"),
      );
      expect(lint(root)).toEqual({ status: 0, output: "lint: clean\n" });
    });
  });

  describe("file length", () => {
    /** A module of `lines` lines (each its own statement), ending in a newline. */
    const moduleOf = (lines: number): string =>
      Array.from({ length: lines }, (_, i) => `export const planted${i} = ${i};`).join("\n") + "\n";

    it("refuses a src file over 600 lines, naming it and its length, and allows one of 600", () => {
      const root = copyOfSrc();
      writeFileSync(join(root, "src/text/planted-long.ts"), moduleOf(601));
      writeFileSync(join(root, "src/ledger/planted-full.ts"), moduleOf(600));
      const result = lint(root);
      expect(result.status).toBe(1);
      expect(result.output).toContain("src/text/planted-long.ts: 601 lines, over 600; split it");
      expect(result.output).not.toContain("planted-full");
    });

    it("counts a file grown past 600 lines, with or without a final newline", () => {
      const root = copyOfSrc();
      const file = "src/learn/vet.ts";
      const lines = readFileSync(join(root, file), "utf8").split("\n").length - 1;
      appendFileSync(join(root, file), moduleOf(601 - lines).replace(/\n$/, ""));
      expect(lint(root).output).toContain(`${file}: 601 lines, over 600`);
    });
  });
});

describe("lint:cycles (dpdm)", () => {
  it("checks every entry point package.json exports, and the command line", () => {
    const sources = Object.values(pkg.exports)
      .map((target) => (typeof target === "string" ? target : target.import))
      .filter((target): target is string => target !== undefined && target.startsWith("./dist/"))
      .map((target) => target.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"));
    expect(sources.length).toBeGreaterThanOrEqual(6);
    expect([...dpdmEntries].sort()).toEqual([...sources, "src/cli/main.ts"].sort());
  });

  it("counts type-only cycles (dpdm without -T, which drops type imports)", () => {
    expect(dpdmFlags).not.toContain("-T");
    expect(dpdmFlags).not.toContain("--transform");
  });

  it("passes a tree without a cycle", () => {
    const root = treeOf({
      "src/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "src/b.ts": "export const b = 1;\n",
    });
    const result = dpdm(root, ["src/a.ts"]);
    expect(result.status).toBe(0);
    expect(result.output).toMatch(/no circular dependency/);
  });

  it("fails on a type-only cycle planted in the repository's src, naming its files", () => {
    const root = copyOfSrc();
    // ledger.ts imports keys.ts; a type import back closes a cycle that exists only for the type checker.
    plant(root, "src/ledger/keys.ts", 'import type { Ledger } from "./ledger.js";\nexport type Planted = Ledger;');
    const result = dpdm(root, dpdmEntries);
    expect(result.status).toBe(1);
    // dpdm names the cycle from where its walk met it first: keys.ts and ledger.ts are both on it.
    const cycle = result.output.split("\n").find((line) => /^\s*\d+\) /.test(line)) ?? "";
    expect(cycle).toContain("src/ledger/keys.ts");
    expect(cycle).toContain("src/ledger/ledger.ts");
  });

  it("fails on a runtime cycle", () => {
    const root = treeOf({
      "src/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "src/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
    });
    const result = dpdm(root, ["src/a.ts"]);
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/src\/a\.ts -> src\/b\.ts/);
  });
});
