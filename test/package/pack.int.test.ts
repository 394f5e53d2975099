/**
 * The package as a user installs it: built, packed with `npm pack`, unpacked into a consumer
 * project's node_modules, then type-checked (NodeNext, strict) and imported by that project
 * through every entry point of package.json's `exports`. Nothing is installed from the network:
 * the consumer lives under test-results/ inside this repository, so the peer and runtime
 * dependencies resolve from the repository's node_modules, as a user's own copies would.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  name: string;
  files: string[];
  exports: Record<string, unknown>;
};
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");

/** `tool-lessons`, `tool-lessons/schema`, ...: every module entry point (package.json itself left out). */
const specifiers = Object.keys(pkg.exports)
  .filter((key) => key !== "./package.json")
  .map((key) => (key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`));

let staging: string;
let consumer: string;

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 180_000 });
}

beforeAll(() => {
  // Built into a staging copy, not the repository's dist/: bin/tool-lessons.js runs dist/ when
  // there is one, and a stale build would shadow the sources for the CLI tests.
  staging = mkdtempSync(join(tmpdir(), "tool-lessons-pack-"));
  run(npm, ["run", "build", "--", "--outDir", join(staging, "dist")], repo);
  cpSync(join(repo, "package.json"), join(staging, "package.json"));
  for (const entry of pkg.files.filter((f) => f !== "dist"))
    cpSync(join(repo, entry), join(staging, entry), { recursive: true });
  const tarballs = join(staging, "tarballs");
  mkdirSync(tarballs);
  run(npm, ["pack", "--silent", "--pack-destination", tarballs], staging);
  const [tarball] = readdirSync(tarballs).filter((f) => f.endsWith(".tgz"));

  mkdirSync(join(repo, "test-results"), { recursive: true });
  consumer = mkdtempSync(join(repo, "test-results", "consumer-"));
  const installed = join(consumer, "node_modules", pkg.name);
  mkdirSync(installed, { recursive: true });
  run("tar", ["-xzf", join(tarballs, tarball), "-C", installed, "--strip-components=1"], consumer);

  mkdirSync(join(consumer, "chroma-only"));
  writeFileSync(
    join(consumer, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2),
  );
  writeFileSync(
    join(consumer, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023"],
          types: ["node"],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        include: ["*.ts"],
      },
      null,
      2,
    ),
  );
  // Every entry point, imported whole, so a missing file or `types` path fails the type check.
  writeFileSync(
    join(consumer, "every-entry.ts"),
    specifiers.map((s, i) => `import * as entry${i} from "${s}";`).join("\n") +
      `\nexport const entries = [${specifiers.map((_, i) => `entry${i}`).join(", ")}];\n`,
  );
  // The README's snippet, as a user writes it: from the package name.
  const snippet = readFileSync(join(repo, "examples", "readme-snippet.ts"), "utf8")
    .replace(/from "\.\.\/src\/index\.js"/, `from "${pkg.name}"`)
    .replace(/from "\.\.\/src\/graph\/index\.js"/, `from "${pkg.name}/graph"`);
  writeFileSync(join(consumer, "readme-snippet.ts"), snippet);
  // The names the docs teach from each subpath, used with their types.
  writeFileSync(
    join(consumer, "subpaths.ts"),
    `import { InMemoryStore } from "@langchain/langgraph";
import { isToolLessonsError, Ledger, ToolIndex, type Settings, type ToolCard } from "tool-lessons";
import { DEFAULT_SETTINGS, parseSettings, ToolCardSchema } from "tool-lessons/schema";
import { createLessonsNode, ToolLessonsZodState } from "tool-lessons/graph";
import { classifyError, partitionKey } from "tool-lessons/record";
import { compareAndSet, type RevisionClaim } from "tool-lessons/ledger";
import { InMemoryVectorIndex, LexicalEmbeddings, usageFlags } from "tool-lessons/routing";
import { ModelProposer, type Proposal } from "tool-lessons/learn";
import { createRecallRulesTool, DEFAULT_TOOL_ALIASES } from "tool-lessons/rules";
import { ModelEvaluator, toolStats } from "tool-lessons/memory";
import { renderRulesBlock, renderLessonsBlock } from "tool-lessons/prompt";
import { recallAtK, simulate, type SimulationReport } from "tool-lessons/evaluate";
import { gateText, PII_DETECTORS, type PIIDetector } from "tool-lessons/privacy";
import { SqliteStore } from "tool-lessons/sqlite";
import { openPostgresStore } from "tool-lessons/postgres";
import { ChromaVectorIndex, startChromaServer } from "tool-lessons/chroma";
import { toolLessonsMiddleware, type ToolLessonsMiddlewareOptions } from "tool-lessons/middleware";

const ledger = new Ledger(new InMemoryStore());
const settings: Settings = parseSettings({ routingK: 3 }, DEFAULT_SETTINGS);
export const index = new ToolIndex({
  ledger,
  embeddings: new LexicalEmbeddings(),
  vectorStore: (embeddings) => new ChromaVectorIndex({ embeddings, collectionName: "tools" }),
});
export const card = (row: unknown): ToolCard => ToolCardSchema.parse(row);
export const caught = (error: unknown): boolean => isToolLessonsError(error);
export const recall: number = recallAtK(["a", "b"], ["b"], settings.routingK);
export type Report = SimulationReport;
export const detectors: PIIDetector[] = PII_DETECTORS.map((d) => d.detect);
export const gated: string = gateText("mail me at a@b.co", { kind: "stored" }).text;
const middlewareOptions: ToolLessonsMiddlewareOptions = { ledger, maxTools: 3 };
export const middleware = toolLessonsMiddleware(middlewareOptions);
export const later = { simulate, openPostgresStore, startChromaServer, sqlite: (path: string) => new SqliteStore(path) };
export const partition: string = partitionKey({ userId: "42" });
export const errorClass = classifyError(new Error("HTTP 404: not found"));
export const more = { createLessonsNode, ToolLessonsZodState, compareAndSet, InMemoryVectorIndex, usageFlags, ModelProposer };
export const rules = { createRecallRulesTool, aliases: DEFAULT_TOOL_ALIASES.length, renderRulesBlock, renderLessonsBlock };
export const memory = { ModelEvaluator, toolStats };
export type Later = [RevisionClaim, Proposal];
`,
  );
  // tool-lessons/chroma alone, as a user of the Chroma index writes it, checked with nothing set
  // aside: the package's declarations must not load chromadb's (which refer to a package chromadb
  // does not install).
  writeFileSync(
    join(consumer, "chroma-only", "index.ts"),
    `import { LexicalEmbeddings } from "tool-lessons/routing";
import { ChromaVectorIndex, startChromaServer, type ChromaClientLike } from "tool-lessons/chroma";

export const index = new ChromaVectorIndex({ embeddings: new LexicalEmbeddings(), collectionName: "tools", host: "127.0.0.1", port: 8000 });
export const client: ChromaClientLike = index.client;
export const start = startChromaServer;
`,
  );
  writeFileSync(
    join(consumer, "chroma-only", "tsconfig.json"),
    JSON.stringify({ extends: "../tsconfig.json", include: ["index.ts"] }, null, 2),
  );
}, 240_000);

afterAll(() => {
  if (staging) rmSync(staging, { recursive: true, force: true });
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

describe("the packed package in a consumer project", () => {
  it("holds the build, the CLI, README and docs, and no sources or tests", () => {
    const files = readdirSync(join(consumer, "node_modules", pkg.name));
    expect(files.sort()).toEqual(["README.md", "bin", "dist", "docs", "package.json"]);
  });

  it("type-checks (NodeNext, strict) importing the root and every subpath export, and the README snippet", () => {
    const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], {
      cwd: consumer,
      encoding: "utf8",
      timeout: 180_000,
    });
    // With skipLibCheck off, the package's own .d.ts files are checked too. Third-party
    // declarations are not ours to fix (chromadb's refer to a package it does not install), so
    // only their errors are set aside; an error in the consumer or in the package fails.
    const errors = `${result.stdout}${result.stderr}`
      .split("\n")
      .filter((line) => /error TS\d+/.test(line))
      .filter((line) => !/^\.\.\/\.\.\/node_modules\//.test(line));
    expect(errors).toEqual([]);
    // A non-zero exit without an error line would be tsc failing to run at all.
    if (result.status !== 0) expect(result.stdout).toMatch(/error TS\d+/);
    expect(specifiers).toEqual(expect.arrayContaining(["tool-lessons/schema", "tool-lessons/evaluate"]));
  }, 240_000);

  it("type-checks tool-lessons/chroma with skipLibCheck off and no error anywhere, chromadb's declarations included", () => {
    const check = spawnSync(process.execPath, [tsc, "-p", join("chroma-only", "tsconfig.json"), "--listFiles"], {
      cwd: consumer,
      encoding: "utf8",
      timeout: 180_000,
    });
    // The program never reads chromadb's declarations, and checks clean, node_modules included.
    expect(check.stdout).toMatch(/tool-lessons\/dist\/routing\/chroma\.d\.ts/);
    expect(check.stdout).not.toMatch(/node_modules\/chromadb\//);
    expect(`${check.stdout}${check.stderr}`.split("\n").filter((line) => /error TS\d+/.test(line))).toEqual([]);
    expect(check.status).toBe(0);
  }, 240_000);

  it("loads every entry point in Node, each with the names its docs teach and not the internals", () => {
    const script = `
      const names = {};
      for (const s of ${JSON.stringify(specifiers)}) names[s] = Object.keys(await import(s)).sort();
      console.log(JSON.stringify(names));`;
    const out = run(process.execPath, ["--input-type=module", "-e", script], consumer);
    const names = JSON.parse(out) as Record<string, string[]>;
    expect(Object.keys(names).sort()).toEqual([...specifiers].sort());
    for (const s of specifiers) expect(names[s].length, s).toBeGreaterThan(0);
    expect(names["tool-lessons"]).toEqual(
      expect.arrayContaining([
        "openLedger",
        "ToolLessonsCallbackHandler",
        "ToolIndex",
        "LessonManager",
        "createToolLessons",
        "ToolLessons",
      ]),
    );
    for (const internal of [
      "tokenize",
      "timeOrderedId",
      "maskArgs",
      "auroc",
      "simulate",
      "ToolCardSchema",
      "SettingsSchema",
    ]) {
      expect(names["tool-lessons"], internal).not.toContain(internal);
    }
    expect(names["tool-lessons/schema"]).toEqual(
      expect.arrayContaining(["ToolCardSchema", "SettingsSchema", "parseSettings"]),
    );
    expect(names["tool-lessons/evaluate"]).toEqual(
      expect.arrayContaining(["simulate", "auroc", "recallAtK", "calibrateAbstain", "fitAbstainModel"]),
    );
    expect(names["tool-lessons/sqlite"]).toContain("SqliteStore");
    expect(names["tool-lessons/postgres"]).toContain("openPostgresStore");
    expect(names["tool-lessons/postgres"]).toContain("PostgresLedger");
    expect(names["tool-lessons/chroma"]).toEqual(expect.arrayContaining(["ChromaVectorIndex", "startChromaServer"]));
    expect(names["tool-lessons/middleware"]).toContain("toolLessonsMiddleware");
    // The root is what the README and getting started teach: at most 20 runtime names; the rest
    // is in the subpaths named for what they hold.
    expect(names["tool-lessons"].length).toBeLessThanOrEqual(20);
    // Over all entry points together, a surface a newcomer can hold: at most 150 distinct names
    // at run time (defaults objects, plumbing and test-only helpers stay in their modules).
    expect(new Set(Object.values(names).flat()).size).toBeLessThanOrEqual(150);
    for (const [entry, internal] of [
      ["tool-lessons/privacy", "detectEmails"],
      ["tool-lessons/routing", "fitAbstainModel"],
      ["tool-lessons/routing", "DEFAULT_TOOL_ROUTER"],
      ["tool-lessons/chroma", "toChromaWhere"],
      ["tool-lessons/serve", "keptForCall"],
    ])
      expect(names[entry], `${entry} ${internal}`).not.toContain(internal);
    expect(names["tool-lessons"]).toEqual(
      expect.arrayContaining([
        "createToolLessonsAgent",
        "createLessonsGraph",
        "ToolLessonsAnnotation",
        "bindRoutedTools",
      ]),
    );
    for (const moved of [
      "createLessonsNode",
      "classifyError",
      "compareAndSet",
      "renderRulesBlock",
      "DEFAULT_SETTINGS",
      "LexicalEmbeddings",
      "captureEdicts",
      "readEnv",
    ])
      expect(names["tool-lessons"], moved).not.toContain(moved);
    expect(names["tool-lessons/graph"]).toEqual(
      expect.arrayContaining(["createLessonsNode", "createToolLessonsAgent"]),
    );
    expect(names["tool-lessons/record"]).toEqual(expect.arrayContaining(["classifyError", "ThreadCallers"]));
    expect(names["tool-lessons/ledger"]).toEqual(expect.arrayContaining(["compareAndSet", "openLedger"]));
    expect(names["tool-lessons/routing"]).toEqual(expect.arrayContaining(["InMemoryVectorIndex", "usageFlags"]));
    expect(names["tool-lessons/learn"]).toEqual(expect.arrayContaining(["ModelProposer", "LessonManager"]));
    expect(names["tool-lessons/rules"]).toEqual(expect.arrayContaining(["createRecallRulesTool", "captureEdicts"]));
    expect(names["tool-lessons/memory"]).toEqual(expect.arrayContaining(["ModelEvaluator", "ToolMemory"]));
    expect(names["tool-lessons/prompt"]).toEqual(expect.arrayContaining(["renderRulesBlock", "renderLessonsBlock"]));
  });

  it("ships the word list as data beside its module, read at first use", () => {
    const installed = join(consumer, "node_modules", pkg.name, "dist");
    const script = `
      const { commonWords } = await import("tool-lessons/privacy");
      const words = commonWords();
      console.log(JSON.stringify({ size: words.size, refund: words.has("refund"), sarah: words.has("sarah") }));`;
    const out = JSON.parse(run(process.execPath, ["--input-type=module", "-e", script], consumer)) as Record<
      string,
      unknown
    >;
    expect(out).toEqual({ size: expect.any(Number), refund: true, sarah: false });
    expect(out.size as number).toBeGreaterThan(50_000);
    expect(readFileSync(join(installed, "text", "vocabulary-words.txt"), "utf8")).toMatch(/^# Common English words/);
    // No declaration file carries data: the largest is a few tens of kilobytes of types.
    for (const file of filesUnder(installed).filter((f) => f.endsWith(".d.ts")))
      expect(statSync(file).size, file).toBeLessThan(64_000);
  });

  it("ships no source maps: the package has no src/ for them to point at", () => {
    const installed = join(consumer, "node_modules", pkg.name, "dist");
    const files = filesUnder(installed);
    expect(files.filter((f) => f.endsWith(".js")).length).toBeGreaterThan(100);
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    const pointing = files
      .filter((f) => /\.(js|d\.ts)$/.test(f))
      .filter((f) => readFileSync(f, "utf8").includes("sourceMappingURL"));
    expect(pointing).toEqual([]);
  });
});
