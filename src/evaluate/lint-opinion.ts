/**
 * The description linter's optional second opinion: one chat model call per tool, its reply
 * checked with zod like every model reply; a reply that does not fit is a note, never a finding.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { z } from "zod";
import { clip, errorMessage, oneLine } from "../internal.js";
import type { ToolCard } from "../ledger/schema.js";
import { LINT_RULE_SUMMARIES, LINT_RULES, type LintFinding, type Neighbour } from "./lint-findings.js";

const OpinionSchema = z.object({
  findings: z
    .array(
      z.object({
        rule: z.enum(LINT_RULES),
        where: z.string().default("description"),
        problem: z.string().min(1),
        fix: z.string().min(1),
      }),
    )
    .max(12),
});

const OPINION_INSTRUCTIONS = `You review the description of one tool an AI agent can call, against six rules:
${LINT_RULES.map((r) => `- ${r}: ${LINT_RULE_SUMMARIES[r]}`).join("\n")}
Return only a JSON object: {"findings": [{"rule", "where", "problem", "fix"}]}, with "rule" one of the six names above, an empty list when every rule holds. One short line each.`;

/** Ask the model about one tool; a reply that does not fit is a note, never a finding. */
export async function secondOpinion(
  model: BaseChatModel,
  card: Pick<ToolCard, "name" | "author">,
  neighbours: readonly Neighbour[],
  config?: RunnableConfig,
): Promise<{ findings: LintFinding[]; note?: string }> {
  const payload = {
    name: card.name,
    description: clip(card.author.description, 2000),
    schema: card.author.schema,
    nearNeighbours: neighbours.map((n) => n.tool),
  };
  let text: string;
  try {
    const reply = await model.invoke(
      [new SystemMessage(OPINION_INSTRUCTIONS), new HumanMessage(JSON.stringify(payload))],
      config,
    );
    text = reply.text;
  } catch (error) {
    if (config?.signal?.aborted) throw error;
    return { findings: [], note: `${card.name}: the model call failed: ${clip(oneLine(errorMessage(error)), 200)}` };
  }
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1")
    .trim();
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { findings: [], note: `${card.name}: the model's reply is not a JSON object; ignored.` };
  }
  const parsed = OpinionSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      findings: [],
      note: `${card.name}: the model's reply does not fit (${issue.path.join(".") || "(root)"}: ${issue.message}); ignored.`,
    };
  }
  return {
    findings: parsed.data.findings.map((f) => ({
      tool: card.name,
      rule: f.rule,
      where: clip(oneLine(f.where), 60),
      problem: clip(oneLine(f.problem), 300),
      fix: clip(oneLine(f.fix), 300),
      source: "model" as const,
    })),
  };
}
