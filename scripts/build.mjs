#!/usr/bin/env node
// The package's build: tsc over src/ (tsconfig.build.json, no source maps: the package ships no
// src/ for them to point at), then the data files under src/ (`*.txt`, read at run time relative
// to their module) copied to the same place in the output. The output folder is emptied first,
// so a file deleted from src/ is not shipped from an old build.
//
// Usage: node scripts/build.mjs [--outDir DIR]   (npm run build -- --outDir DIR); DIR defaults to dist.
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const at = args.indexOf("--outDir");
const outDir = path.resolve(at >= 0 && args[at + 1] ? args[at + 1] : path.join(repo, "dist"));
const src = path.join(repo, "src");

/** Files under src/ that are data the modules read at run time, not code tsc compiles. */
const DATA_FILE = /\.txt$/;

function dataFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) dataFiles(full, out);
    else if (DATA_FILE.test(name)) out.push(full);
  }
  return out;
}

rmSync(outDir, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", path.join(repo, "tsconfig.build.json"), "--outDir", outDir], {
  cwd: repo,
  stdio: "inherit",
});
for (const file of dataFiles(src)) cpSync(file, path.join(outDir, path.relative(src, file)));
