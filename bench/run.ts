/**
 * `npm run bench`: runs every benchmark in one process, one after another, and writes their
 * markdown to docs/benchmarks.md with the command and the machine it ran on. Figures are
 * measured here, each compared side by side within its own run (ratios), never asserted.
 *
 * Each section runs in its own process. `npm run bench -- recording review` re-measures only the
 * named sections and replaces them in docs/benchmarks.md, noting it in the header.
 *
 * `--json` also prints, on stdout after the sections' markdown, one JSON object keyed by section
 * name whose values are the figures each section reports. A section reports figures by returning
 * `{ markdown, figures }` instead of its markdown alone (see {@link SectionResult}).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchCache } from "./cache.js";
import { benchEmbeddings } from "./embeddings.js";
import { benchGraph } from "./graph.js";
import { benchMasking } from "./masking.js";
import { benchLint } from "./lint.js";
import { benchLoad } from "./load.js";
import { benchMemory } from "./memory.js";
import { benchMiddleware } from "./middleware.js";
import { benchRecording } from "./recording.js";
import { benchReview } from "./review.js";
import { benchRoutingLatency } from "./routing-latency.js";
import { benchRules } from "./rules.js";
import { benchSimulation } from "./simulation.js";
import { benchWarmStart } from "./warm-start.js";
import { benchWordings } from "./wordings.js";

/**
 * What a section returns: its markdown, or its markdown and its figures (plain JSON values, e.g.
 * `{ p50Ms: { 10000: 0.4, 100000: 0.9 } }`), printed by `--json` under the section's name.
 */
export type SectionResult = string | { markdown: string; figures: Record<string, unknown> };

const sections: Record<string, () => Promise<SectionResult>> = {
  recording: benchRecording,
  embeddings: benchEmbeddings,
  "routing-latency": benchRoutingLatency,
  review: benchReview,
  simulation: benchSimulation,
  masking: benchMasking,
  lint: benchLint,
  rules: benchRules,
  memory: benchMemory,
  middleware: benchMiddleware,
  graph: benchGraph,
  load: benchLoad,
  cache: benchCache,
  wordings: benchWordings,
  "warm-start": benchWarmStart,
};

/** Set in a child process: run this one section and print its markdown. */
const CHILD_ENV = "TOOL_LESSONS_BENCH_SECTION";
/** Set in a child process: the file its figures go to, as JSON. */
const FIGURES_ENV = "TOOL_LESSONS_BENCH_FIGURES";

const child = process.env[CHILD_ENV];
if (child !== undefined) {
  const result = await sections[child]();
  const figures = typeof result === "string" ? {} : result.figures;
  const figuresFile = process.env[FIGURES_ENV];
  if (figuresFile !== undefined) writeFileSync(figuresFile, JSON.stringify(figures));
  process.stdout.write(typeof result === "string" ? result : result.markdown);
  process.exit(0);
}

const args = process.argv.slice(2);
const json = args.includes("--json");
const wanted = args.filter((a) => a !== "--json");
const unknown = wanted.filter((w) => !(w in sections));
if (unknown.length > 0) {
  console.error(`Unknown section(s): ${unknown.join(", ")}. Known: ${Object.keys(sections).join(", ")}.`);
  process.exit(2);
}
const chosen = wanted.length > 0 ? wanted : Object.keys(sections);
const parts: string[] = [];
const figures: Record<string, Record<string, unknown>> = {};
const figuresDir = mkdtempSync(path.join(os.tmpdir(), "tool-lessons-bench-"));
for (const name of chosen) {
  // Each section in its own process, so no section measures the heap another one left behind.
  const t0 = performance.now();
  console.error(`bench: ${name} ...`);
  const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, [CHILD_ENV]: name, [FIGURES_ENV]: path.join(figuresDir, `${name}.json`) },
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (run.status !== 0) {
    console.error(`bench: ${name} failed (exit ${run.status ?? run.signal}); nothing written.`);
    process.exit(1);
  }
  parts.push(run.stdout.trim());
  figures[name] = JSON.parse(readFileSync(path.join(figuresDir, `${name}.json`), "utf8")) as Record<string, unknown>;
  console.error(`bench: ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const date = new Date().toISOString().slice(0, 10);
const cpu = os.cpus()[0]?.model ?? "unknown CPU";
const machine = `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}`;
const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../docs/benchmarks.md");
if (wanted.length === 0 || !existsSync(out)) {
  const header = [
    "# Benchmarks",
    "",
    `Written by \`npm run bench\` on ${date}, each section in its own process.`,
    `Machine: ${machine}.`,
    "Each section is measured in one run on this machine; compare figures within a section, not across machines.",
    "",
  ].join("\n");
  writeFileSync(out, `${header}\n${parts.join("\n\n")}\n`);
} else {
  // Only the named sections: replace them (by their "## " heading) and say so in the header.
  let text = readFileSync(out, "utf8").trimEnd();
  for (const part of parts) {
    const heading = part.split("\n", 1)[0];
    const at = text.indexOf(`\n${heading}\n`);
    if (at < 0) {
      text = `${text}\n\n${part}`;
      continue;
    }
    const next = text.indexOf("\n## ", at + heading.length + 1);
    text = `${text.slice(0, at + 1)}${part}${next < 0 ? "" : `\n${text.slice(next)}`}`;
  }
  // One note per section: an older note naming only sections re-measured now goes.
  const note = `Re-measured by \`npm run bench -- ${wanted.join(" ")}\` on ${date} (${machine}): ${chosen.join(", ")}.`;
  text = text
    .split("\n")
    .filter((line) => {
      const named = /^Re-measured by .*: ([\w, -]+)\.$/.exec(line)?.[1].split(", ");
      return !named || !named.every((n) => chosen.includes(n));
    })
    .join("\n")
    .replace(/\n\n## /, `\n${note}\n\n## `);
  writeFileSync(out, `${text}\n`);
}
console.error(`bench: wrote ${out}`);
rmSync(figuresDir, { recursive: true, force: true });
if (json) process.stdout.write(`${parts.join("\n\n")}\n\n${JSON.stringify(figures, null, 2)}\n`);
