#!/usr/bin/env node
// House rules the type checker does not enforce (see ../shared/STYLE.md): no `any` in src, no bare
// `throw new Error` in src (typed errors from src/errors.ts), kebab-case file names, and a barrel
// of named exports only. Prints each finding as file:line and exits 1 when there is one.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const findings = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.(ts|mts)$/.test(name)) out.push(full);
  }
  return out;
}

const kebab = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)*\.m?ts$/;
for (const dir of ["src", "test", "bench", "examples"]) {
  for (const file of walk(path.join(root, dir))) {
    const rel = path.relative(root, file);
    if (!kebab.test(path.basename(file))) findings.push(`${rel}: file name is not kebab-case`);
    if (dir !== "src") continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, "").replace(/^\s*\*.*$/, "");
        if (/(:\s*any\b|\bas any\b|<any>|any\[\])/.test(code)) findings.push(`${rel}:${i + 1}: \`any\` in src`);
        if (/throw new Error\(/.test(code))
          findings.push(`${rel}:${i + 1}: bare \`throw new Error\`; throw a ToolLessonsError subclass`);
        if (rel === path.join("src", "index.ts") && /^export \*/.test(code))
          findings.push(`${rel}:${i + 1}: the barrel exports names, not \`export *\``);
      });
  }
}

if (findings.length > 0) {
  console.error(findings.join("\n"));
  console.error(`lint: ${findings.length} finding(s)`);
  process.exit(1);
}
console.log("lint: clean");
