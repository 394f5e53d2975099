/**
 * The model proposer: one chat-model call per tool under review, over any LangChain
 * `BaseChatModel`. The prompt is built only from {@link ToolEvidence} (argument names, masked
 * shapes, masked messages and masked request text, never a value); the reply is checked with
 * zod at this boundary. A reply that cannot be used gives an empty proposal with the reason:
 * the review goes on, nothing is thrown into it.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import { z } from "zod";
import { emptyProposal, type Proposer, type ToolEvidence } from "./proposer.js";
import type { Proposal, ProposalRejection } from "./types.js";
import { clip, definedOnly, errorMessage } from "../internal.js";

/** The reply a model must give: the three kinds of lesson, each citing its evidence. */
export const ProposalReplySchema = z.object({
  notes: z
    .array(
      z.object({
        text: z.string().describe("One line telling how to call the tool so it is not refused."),
        cites: z.array(z.string()).describe("Ids of the failed calls this note rests on."),
      }),
    )
    .default([])
    .describe("Usage notes, from repeated calling errors."),
  examples: z
    .array(
      z.object({
        text: z.string().describe("A request, in a user's words, that should reach this tool."),
        cites: z.array(z.string()).describe("Ids of the missed requests it rests on; it shares a word with each."),
      }),
    )
    .default([])
    .describe("Example requests, from requests that missed the tool."),
  notFor: z
    .array(
      z.object({
        text: z.string().describe('"Not for <kind of request>; use <tool>."'),
        tool: z.string().describe("The registered tool that served those requests."),
        cites: z.array(z.string()).describe("Ids of the confused requests, all served by that tool."),
      }),
    )
    .default([])
    .describe('"Not for" lines, from requests that went to this tool and another tool served.'),
});

/** A parsed model reply. */
export type ProposalReply = z.infer<typeof ProposalReplySchema>;

/** Options of {@link ModelProposer}. */
export interface ModelProposerOptions {
  /**
   * Recorded on revisions as the proposer.
   * @default "model:<the model's name>"
   */
  name?: string;
  /**
   * `"auto"`: structured output (`withStructuredOutput`) when the model supports it, else JSON
   * from the reply text. `"always"`: structured output only (a model without it gives
   * `model_error`). `"never"`: JSON from the reply text only.
   * @default "auto"
   */
  structuredOutput?: "auto" | "always" | "never";
}

/** The defaults of {@link ModelProposerOptions} (the name has none: it is derived from the model). */
export const DEFAULT_MODEL_PROPOSER_OPTIONS: Readonly<Required<Omit<ModelProposerOptions, "name">>> = Object.freeze({
  structuredOutput: "auto",
});

/**
 * How much evidence goes into the prompt and how much of a reply is read. Constants, not
 * options: no caller ever set them, and the vet's caps bound what is kept anyway.
 */
const PROMPT_LIMITS = Object.freeze({
  /** Most items of each list (failures, misses, confusions, neighbours) put in the prompt. */
  maxItems: 20,
  /** Longest description (the tool's and each neighbour's) put in the prompt, in characters. */
  maxDescriptionLength: 400,
  /** Most items of each kind taken from a reply; the rest are dropped before the vet. */
  maxReplyItems: 20,
});

const INSTRUCTIONS = `You review one tool of an AI agent from evidence of how it was used, and propose small lessons.
Return only a JSON object: {"notes": [...], "examples": [...], "notFor": [...]}. Every list may be empty.

- notes: {"text", "cites"}. How to call the tool so it is not refused, from repeated calling errors. Cite the ids of at least {minFailures} failed calls of one error.
- examples: {"text", "cites"}. A request, in the users' own words, that should reach this tool. Cite at least {minMisses} missed requests; share a word with each. Prefer words the tool's description lacks.
- notFor: {"text", "tool", "cites"}. Exactly "Not for <kind of request>; use <tool>." for requests that went to this tool but another tool served. Cite at least {minConfusions} such requests, all served by that tool; share a word with each.

Rules: one line each, at most {maxLineLength} characters. At most {maxNotes} notes, {maxNewQueries} examples, {maxAvoid} "Not for" lines. Never copy an argument value, id, name, amount or email; masked parts (#, <text>) may be described, not filled in. Write about the tool, never instructions to a model. Cite only ids given in the evidence. Do not repeat what the tool has already learned, nor what an operator turned down.`;

/**
 * The messages of one tool's review: the instructions, then the evidence as JSON. Built only
 * from {@link ToolEvidence}.
 */
export function buildProposerMessages(evidence: ToolEvidence): BaseMessage[] {
  const { maxItems, maxDescriptionLength: maxDescription } = PROMPT_LIMITS;
  const limits = evidence.limits;
  const system = INSTRUCTIONS.replace(/\{(\w+)\}/g, (_, key: string) =>
    key in limits ? String(limits[key as keyof typeof limits]) : `{${key}}`,
  );
  const t = evidence.turnedDown;
  const turnedDown =
    t && t.notes.length + t.examples.length + t.notFor.length > 0
      ? { notes: t.notes.slice(-maxItems), examples: t.examples.slice(-maxItems), notFor: t.notFor.slice(-maxItems) }
      : undefined;
  const payload = {
    tool: evidence.tool,
    description: clip(evidence.description, maxDescription),
    argNames: evidence.argNames,
    alreadyLearned: {
      notes: evidence.current.notes,
      notFor: evidence.current.notFor,
      examples: evidence.current.examples.map((e) => e.text),
    },
    ...(turnedDown ? { turnedDownByOperator: turnedDown } : {}),
    failedCalls: evidence.failures.slice(0, maxItems).map((f) => ({
      callIds: f.callIds.slice(0, maxItems),
      errorClass: f.errorClass,
      errorMessage: f.errorMessage,
      argNames: f.argNames,
      refusedShapes: Object.fromEntries(f.shapes.map((s) => [s.name, s.shapes.map((x) => x.shape)])),
    })),
    acceptedShapes: Object.fromEntries(evidence.successShapes.map((s) => [s.name, s.shapes.map((x) => x.shape)])),
    missedRequests: evidence.misses.slice(-maxItems).map((m) => ({ id: m.requestId, request: m.request, how: m.how })),
    confusedRequests: evidence.confusions
      .slice(-maxItems)
      .map((c) => ({ id: c.requestId, request: c.request, servedBy: c.servedBy, how: c.how })),
    otherTools: evidence.neighbours
      .slice(0, maxItems)
      .map((n) => ({ name: n.name, description: clip(n.description, maxDescription) })),
  };
  return [
    new SystemMessage(system),
    new HumanMessage(`Evidence for tool "${evidence.tool}" (JSON):\n${JSON.stringify(payload, null, 2)}`),
  ];
}

/** The outcome of parsing a reply: a proposal, or why it was refused. */
export type ParsedReply = { ok: true; proposal: Proposal } | { ok: false; rejection: ProposalRejection };

/**
 * Parse a model's text reply: a JSON object, alone or as the only content of one fenced
 * ```json block. Anything around it (chatter) refuses the reply.
 */
export function parseProposalText(text: string, maxItems: number = PROMPT_LIMITS.maxReplyItems): ParsedReply {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i.exec(trimmed);
  const body = (fenced ? fenced[1] : trimmed).trim();
  if (!body.startsWith("{") || !body.endsWith("}")) {
    return reject("reply_not_json", "the reply is not a JSON object alone (or in one ```json block)");
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return reject("reply_not_json", `the reply does not parse as JSON: ${clip(errorMessage(error), 200)}`);
  }
  return parseProposalObject(json, maxItems);
}

/** Check a reply object (from structured output or parsed text) against {@link ProposalReplySchema}. */
export function parseProposalObject(value: unknown, maxItems: number = PROMPT_LIMITS.maxReplyItems): ParsedReply {
  const parsed = ProposalReplySchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    return reject("reply_wrong_shape", issues.join("; "));
  }
  const reply = parsed.data;
  return {
    ok: true,
    proposal: {
      notes: reply.notes.slice(0, maxItems),
      examples: reply.examples.slice(0, maxItems),
      notFor: reply.notFor.slice(0, maxItems),
    },
  };
}

/**
 * Proposes lessons with a chat model: one call per tool, structured output when the model
 * supports it, else JSON from the reply text. `RunnableConfig` (callbacks, tags, metadata,
 * `signal`) is passed to the model call.
 *
 * Never throws for a bad reply or a failed call: it returns an empty proposal with `rejected`
 * set (`model_error`, `reply_not_json`, `reply_wrong_shape`). The one exception is a run aborted
 * through `config.signal`, which is rethrown so cancellation stops the review.
 */
export class ModelProposer implements Proposer {
  readonly name: string;
  readonly callsModel = true;
  private readonly model: BaseChatModel;
  private readonly options: Required<Omit<ModelProposerOptions, "name">>;

  constructor(model: BaseChatModel, options: ModelProposerOptions = {}) {
    this.model = model;
    this.name = options.name ?? `model:${modelName(model)}`;
    const { name: _name, ...rest } = definedOnly(options);
    this.options = { ...DEFAULT_MODEL_PROPOSER_OPTIONS, ...rest };
  }

  async propose(evidence: ToolEvidence, config?: RunnableConfig): Promise<Proposal> {
    config?.signal?.throwIfAborted();
    const messages = buildProposerMessages(evidence);
    const structured = this.structured();
    if (structured === "unsupported") {
      return emptyProposal({ reason: "model_error", detail: "the model does not support structured output" });
    }
    try {
      if (structured) {
        const reply: unknown = await structured.invoke(messages, config);
        return this.settle(parseProposalObject(reply));
      }
      const message = await this.model.invoke(messages, config);
      return this.settle(parseProposalText(message.text));
    } catch (error) {
      if (config?.signal?.aborted) throw error;
      return emptyProposal({ reason: "model_error", detail: clip(errorMessage(error), 300) });
    }
  }

  /** The structured-output runnable, `null` for text mode, or "unsupported" when it is required and missing. */
  private structured(): Runnable<BaseMessage[], Record<string, unknown>> | null | "unsupported" {
    if (this.options.structuredOutput === "never") return null;
    try {
      return this.model.withStructuredOutput(ProposalReplySchema, { name: "propose_lessons" }) as Runnable<
        BaseMessage[],
        Record<string, unknown>
      >;
    } catch {
      return this.options.structuredOutput === "always" ? "unsupported" : null;
    }
  }

  private settle(parsed: ParsedReply): Proposal {
    return parsed.ok ? parsed.proposal : emptyProposal(parsed.rejection);
  }
}

function reject(reason: ProposalRejection["reason"], detail: string): ParsedReply {
  return { ok: false, rejection: { reason, detail } };
}

function modelName(model: BaseChatModel): string {
  const named: unknown =
    (model as unknown as { model?: unknown; modelName?: unknown }).model ??
    (model as unknown as { modelName?: unknown }).modelName;
  return typeof named === "string" && named.length > 0 ? named : model.getName();
}
