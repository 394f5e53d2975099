/**
 * An optional second opinion on captured edicts: a chat model, asked once per turn with
 * structured output, says of each candidate whether the user really told the agent never to do
 * something, and may correct its tool to another registered one. The reply is checked with zod;
 * a failed call or a reply of the wrong shape leaves the code's decision standing (an edict is a
 * safety rule: it is not dropped because a model could not be reached).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import { clip, errorMessage } from "../internal.js";
import type { EdictCandidate } from "./capture.js";
import { UNSCOPED_TOOL } from "./model.js";

/** The reply the model must give: one verdict per candidate, by index. */
export const EdictVerdictsSchema = z.object({
  verdicts: z.array(
    z.object({
      index: z.number().int().min(0).describe("The candidate's index."),
      edict: z.boolean().describe("True when the user tells the agent, lastingly, never to do this."),
      tool: z
        .string()
        // Nullable, not optional: a strict structured-output schema must list every property as required.
        .nullable()
        .describe("The registered tool the rule is about, when it is not the one given; null for none."),
    }),
  ),
});
export type EdictVerdicts = z.infer<typeof EdictVerdictsSchema>;

/**
 * How a reply is read: as {@link EdictVerdictsSchema}, a missing `tool` read as none. The model
 * is sent the strict schema (every property required, as strict structured output demands) and
 * the reply is checked here, so a reply of the wrong shape is told apart from a failed call.
 */
const EdictVerdictsReplySchema = z.object({
  verdicts: z.array(EdictVerdictsSchema.shape.verdicts.element.extend({ tool: z.string().nullable().optional() })),
});

/** The schema the model is sent, as JSON schema: the model's client validates nothing itself. */
const EDICT_VERDICTS_JSON_SCHEMA = toJsonSchema(EdictVerdictsSchema);

/** Options of {@link confirmEdicts}. */
export interface ConfirmEdictsOptions {
  /**
   * The registered tool names: a tool the model names is taken only when it is one of them.
   * @default []
   */
  tools?: readonly string[];
}

/** The defaults of {@link ConfirmEdictsOptions}. */
export const DEFAULT_CONFIRM_EDICTS_OPTIONS: Readonly<Required<ConfirmEdictsOptions>> = Object.freeze({
  tools: Object.freeze([]),
});

/** Why a model's answer was not used. */
export interface EdictModelRejection {
  reason: "model_error" | "reply_wrong_shape";
  detail: string;
}

/** What {@link confirmEdicts} decided. */
export interface ConfirmedEdicts {
  /** Candidates to store (with the tool the model corrected, if it did). */
  kept: EdictCandidate[];
  /** Candidates the model said are no edicts. */
  dropped: EdictCandidate[];
  /** Set when the model's answer could not be used: then every candidate is kept. */
  rejected?: EdictModelRejection;
}

const INSTRUCTIONS = `You check rules that code captured from one message a user sent to an AI agent.
Keep a candidate (edict: true) only when the user, in their own voice, tells the agent never to do something, as a lasting instruction.
Drop it (edict: false) when the words are quoted or reported from someone else, a question, an idiom ("don't worry", "never mind"), about the user's own habits, or a one-off remark.
If the rule is about a different registered tool than the one given, name that tool; otherwise leave tool out.
Answer with one verdict per candidate, by index.`;

/**
 * Ask `model` to confirm `candidates` (captured from `text`). One call, structured output; the
 * reply is checked against {@link EdictVerdictsSchema}. A candidate without a verdict is kept; a
 * corrected tool is taken only when it is a registered one. `config` is passed to the model call.
 * @throws only when the caller aborted the run (`config.signal`).
 */
export async function confirmEdicts(
  model: BaseChatModel,
  text: string,
  candidates: readonly EdictCandidate[],
  options: ConfirmEdictsOptions = {},
  config?: RunnableConfig,
): Promise<ConfirmedEdicts> {
  if (candidates.length === 0) return { kept: [], dropped: [] };
  const tools = options.tools ?? DEFAULT_CONFIRM_EDICTS_OPTIONS.tools;
  const payload = {
    message: text,
    registeredTools: tools,
    candidates: candidates.map((c, index) => ({ index, rule: c.rule, tool: c.tool === UNSCOPED_TOOL ? null : c.tool })),
  };
  let reply: unknown;
  try {
    const structured = model.withStructuredOutput(EDICT_VERDICTS_JSON_SCHEMA, {
      name: "edict_verdicts",
      strict: true,
    });
    reply = await structured.invoke(
      [new SystemMessage(INSTRUCTIONS), new HumanMessage(JSON.stringify(payload, null, 2))],
      config,
    );
  } catch (error) {
    if (config?.signal?.aborted) throw error;
    return {
      kept: [...candidates],
      dropped: [],
      rejected: { reason: "model_error", detail: clip(errorMessage(error), 200) },
    };
  }
  const parsed = EdictVerdictsReplySchema.safeParse(reply);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
      .join("; ");
    return { kept: [...candidates], dropped: [], rejected: { reason: "reply_wrong_shape", detail } };
  }
  const verdicts = new Map(parsed.data.verdicts.map((v) => [v.index, v]));
  const kept: EdictCandidate[] = [];
  const dropped: EdictCandidate[] = [];
  candidates.forEach((candidate, index) => {
    const verdict = verdicts.get(index);
    if (verdict?.edict === false) {
      dropped.push(candidate);
      return;
    }
    const tool = verdict?.tool;
    const corrected = typeof tool === "string" && tools.includes(tool) && tool !== candidate.tool;
    kept.push(corrected ? { ...candidate, tool, scopedBy: "model" } : candidate);
  });
  return { kept, dropped };
}
