/**
 * `npm run bench`: runs every benchmark in one process, one after another, and writes their
 * markdown to docs/benchmarks.md with the command and the machine it ran on. Figures are
 * measured here, each compared side by side within its own run (ratios), never asserted.
 *
 * `npm run bench -- recording review` runs only the named sections.
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchEmbeddings } from "./embeddings.js";
import { benchRecording } from "./recording.js";
import { benchReview } from "./review.js";
import { benchRoutingLatency } from "./routing-latency.js";
import { benchSimulation } from "./simulation.js";

const sections: Record<string, () => Promise<string>> = {
  recording: benchRecording,
  embeddings: benchEmbeddings,
  "routing-latency": benchRoutingLatency,
  review: benchReview,
  simulation: benchSimulation,
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in sections));
if (unknown.length > 0) {
  console.error(`Unknown section(s): ${unknown.join(", ")}. Known: ${Object.keys(sections).join(", ")}.`);
  process.exit(2);
}
const chosen = wanted.length > 0 ? wanted : Object.keys(sections);
const parts: string[] = [];
for (const name of chosen) {
  const t0 = performance.now();
  console.error(`bench: ${name} ...`);
  parts.push(await sections[name]());
  console.error(`bench: ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const cpu = os.cpus()[0]?.model ?? "unknown CPU";
const header = [
  "# Benchmarks",
  "",
  `Written by \`npm run bench${wanted.length > 0 ? ` -- ${wanted.join(" ")}` : ""}\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}.`,
  "Each section is measured in one run on this machine; compare figures within a section, not across machines.",
  "",
].join("\n");
const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../docs/benchmarks.md");
writeFileSync(out, `${header}\n${parts.join("\n\n")}\n`);
console.error(`bench: wrote ${out}`);
