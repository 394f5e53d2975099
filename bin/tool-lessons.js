#!/usr/bin/env node
// The `tool-lessons` command. Runs the build (dist/cli/main.js) when there is one; in a git
// checkout without a build, loads tsx's ESM loader (a devDependency) and runs the TypeScript source.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const built = new URL("../dist/cli/main.js", import.meta.url);
let cli;
if (existsSync(fileURLToPath(built))) {
  cli = await import(built.href);
} else {
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch (error) {
    process.stderr.write(
      "tool-lessons: no build found (dist/cli/main.js) and tsx is not installed; run `npm run build` or `npm install`.\n",
    );
    process.exitCode = 1;
    throw error;
  }
  register();
  cli = await import(new URL("../src/cli/main.ts", import.meta.url).href);
}
process.exitCode = await cli.main(process.argv.slice(2));
