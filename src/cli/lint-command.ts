import { z } from "zod";
import { toolSource } from "../evaluate/harness.js";
import {
  DEFAULT_LINT_OPTIONS,
  LINT_RULE_SUMMARIES,
  LINT_RULES,
  type LintRule,
  lintDescriptions,
} from "../evaluate/lint-descriptions.js";
import { flag, type OptionSpec, parseCommandArgs, stringList, stringOption, UsageError } from "./args.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";
import { loadChatModel, loadTools } from "./load.js";
import { renderLint } from "./measure-format.js";

const OPTIONS: OptionSpec = {
  tools: { type: "string" },
  model: { type: "string" },
  rule: { type: "string", multiple: true },
  "min-similarity": { type: "string" },
  json: { type: "boolean" },
};

const HELP = `Usage: tool-lessons lint --tools TOOLS [--rule RULE ...] [--model MODULE] [--json]

Checks each tool's description and argument schema against six rules and prints one line per
finding: the tool, the rule, where, what is wrong and how to fix it. Deterministic (code only);
near neighbours are found with the router's own similarity, so the sibling named is the one
routing would confuse. (Not the package's \`npm run lint\`, which checks this repository's code.)

Rules:
${LINT_RULES.map((r) => `  ${r.padEnd(22)}  ${LINT_RULE_SUMMARIES[r]}`).join("\n")}

Options:
  --tools FILE            the tools: JSONL ({"name","description","parameters"} per line) or a
                          module exporting LangChain tools (.js, .mjs, .ts) (required)
  --rule RULE             check only this rule (repeatable)
  --min-similarity X      routing similarity from which another tool is a near neighbour
                          (default ${DEFAULT_LINT_OPTIONS.minNeighbourSimilarity})
  --model MODULE          a chat model for a second opinion (one call per tool; its findings are
                          marked "(model)")
  --json                  print { tools, failing, counts, findings, neighbours, modelNotes }

Exit codes: 0 every rule holds, 1 a finding (for CI), 2 bad arguments or input files.

Example:
  tool-lessons lint --tools tools.jsonl
  tool-lessons lint --tools src/tools.ts --rule boundary --rule side-effect-late --json
`;

const Similarity = z
  .string()
  .trim()
  .regex(/^(\d+\.?\d*|\.\d+)$/)
  .transform(Number)
  .pipe(z.number().min(0).max(1));

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const toolsFile = stringOption(values, "tools");
  if (toolsFile === undefined)
    throw new UsageError("missing --tools FILE (a JSONL file or a module exporting LangChain tools).");
  const rules = stringList(values, "rule");
  const unknown = rules.find((r) => !(LINT_RULES as readonly string[]).includes(r));
  if (unknown !== undefined)
    throw new UsageError(`unknown rule ${JSON.stringify(unknown)}; the rules are ${LINT_RULES.join(", ")}.`);
  const rawSimilarity = stringOption(values, "min-similarity");
  const similarity = rawSimilarity === undefined ? undefined : Similarity.safeParse(rawSimilarity);
  if (similarity && !similarity.success)
    throw new UsageError(`--min-similarity takes a number from 0 to 1; got ${JSON.stringify(rawSimilarity)}.`);
  const modelFile = stringOption(values, "model");
  const tools = await loadTools(toolsFile);
  const model = modelFile === undefined ? undefined : await loadChatModel(modelFile);

  const report = await lintDescriptions(tools.map(toolSource), {
    ...(rules.length > 0 ? { rules: rules as LintRule[] } : {}),
    ...(similarity?.success ? { minNeighbourSimilarity: similarity.data } : {}),
    ...(model ? { model } : {}),
  });
  if (flag(values, "json")) {
    println(io.stdout, JSON.stringify(report, null, 2));
  } else {
    const { lines, summary } = renderLint(report);
    println(io.stdout, lines);
    println(io.stderr, summary);
  }
  return report.findings.length > 0 ? EXIT.runtime : EXIT.ok;
}

/** `tool-lessons lint`. */
export const lintCommand: Command = {
  name: "lint",
  summary: "check tool descriptions against six rules (boundaries, schema, names, returns, side effects, one job)",
  help: HELP,
  run,
};
