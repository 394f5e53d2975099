/**
 * What the measuring commands read besides JSONL: tools from a module that exports LangChain
 * tools, and a chat model from a module that exports one. A module is JavaScript (`.js`, `.mjs`,
 * `.cjs`), or TypeScript (`.ts`, `.mts`) when the CLI runs from a checkout (through tsx).
 */
import { existsSync, statSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { isLangChainTool } from "@langchain/core/tools";
import { parseToolLines, readTextFile } from "../evaluate/cases.js";
import type { EvalTool } from "../evaluate/harness.js";
import { errorMessage, isRecord, oneLine } from "../internal.js";
import { UsageError } from "./args.js";

const MODULE_EXTENSIONS: ReadonlySet<string> = new Set([".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"]);

/** Whether a path names a module (by its extension) rather than a JSONL file. */
export function isModulePath(file: string): boolean {
  return MODULE_EXTENSIONS.has(extname(file).toLowerCase());
}

async function importModule(file: string, flagName: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  if (!existsSync(path))
    throw new UsageError(`cannot read the ${flagName} file ${JSON.stringify(file)}: no such file; check the path.`);
  if (statSync(path).isDirectory())
    throw new UsageError(
      `cannot read the ${flagName} file ${JSON.stringify(file)}: it is a directory; check the path.`,
    );
  try {
    return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(
      `cannot load the ${flagName} module ${JSON.stringify(file)}: ${oneLine(errorMessage(error))}.`,
      { cause: error },
    );
  }
}

/**
 * Whether a module's export is a LangChain tool: LangChain's own check, plus a name and a schema
 * (its check alone takes any LangChain object, a chat model included, for a tool).
 */
function isTool(value: unknown): value is EvalTool {
  if (!isLangChainTool(value) || !isRecord(value)) return false;
  const name = (value as { name?: unknown }).name;
  return typeof name === "string" && name.trim() !== "" && "schema" in value;
}

/**
 * Tools from `file`: a JSONL file (one `{"name", "description", "parameters"}` per line), or a
 * module whose exports are LangChain tools or arrays of them (the default export first, then
 * arrays, then single tools).
 * @throws InvalidInput (a UsageError for modules) naming the file, and the line for JSONL.
 */
export async function loadTools(file: string, flagName = "--tools"): Promise<EvalTool[]> {
  if (!isModulePath(file)) return parseToolLines(await readTextFile(file, flagName), file);
  const exports = await importModule(file, flagName);
  const found: EvalTool[] = [];
  const seen = new Set<unknown>();
  const take = (value: unknown): void => {
    if (seen.has(value)) return;
    seen.add(value);
    if (isTool(value)) found.push(value);
  };
  // The default export, then arrays (a `tools` list keeps its author's order), then single
  // tools; a module namespace lists its other exports by name.
  const named = Object.keys(exports)
    .filter((k) => k !== "default")
    .map((k) => exports[k]);
  const values = [exports.default, ...named.filter(Array.isArray), ...named.filter((v) => !Array.isArray(v))];
  for (const value of values) {
    if (Array.isArray(value)) value.forEach(take);
    else take(value);
  }
  if (found.length === 0) {
    throw new UsageError(
      `the ${flagName} module ${JSON.stringify(file)} exports no LangChain tools; export them (e.g. \`export const tools = [searchFlights, bookHotel]\`).`,
    );
  }
  const names = new Set<string>();
  for (const tool of found) {
    if (names.has(tool.name))
      throw new UsageError(
        `the ${flagName} module ${JSON.stringify(file)} exports two tools named "${tool.name}"; names must be unique.`,
      );
    names.add(tool.name);
  }
  return found;
}

/**
 * A chat model from a module: its default export, or an export named `model` or `chatModel`
 * (any LangChain chat model that can bind tools, built with temperature 0).
 * @throws UsageError naming the module and what it lacks.
 */
export async function loadChatModel(file: string, flagName = "--model"): Promise<BaseChatModel> {
  if (!isModulePath(file)) {
    throw new UsageError(
      `${flagName} takes a module that exports a LangChain chat model (.js, .mjs or .ts); got ${JSON.stringify(file)}.`,
    );
  }
  const exports = await importModule(file, flagName);
  const model = [exports.default, exports.model, exports.chatModel].find(
    (v) => isRecord(v) && typeof (v as { invoke?: unknown }).invoke === "function",
  );
  if (model === undefined) {
    throw new UsageError(
      `the ${flagName} module ${JSON.stringify(file)} exports no chat model; export one as default (or as \`model\`).`,
    );
  }
  if (typeof (model as { bindTools?: unknown }).bindTools !== "function") {
    throw new UsageError(
      `the chat model of ${JSON.stringify(file)} cannot bind tools (no bindTools); use a model that supports tool calling.`,
    );
  }
  return model as BaseChatModel;
}
