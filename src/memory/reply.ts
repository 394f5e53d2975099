/**
 * A model's reply at this boundary: structured output when the model has it, else one JSON object
 * from the reply text (alone, or alone in one fenced block), then checked with zod. Shared by the
 * model evaluator and the model synthesizer.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import type { z } from "zod";
import { clip, errorMessage } from "../internal.js";

/** How a reply is asked for: structured output when supported (`auto`), only (`always`), or never. */
export type StructuredOutputMode = "auto" | "always" | "never";

/** A checked reply, or why it was refused. */
export type Reply<T> =
  | { ok: true; value: T }
  | { ok: false; reason: "model_error" | "reply_not_json" | "reply_wrong_shape"; detail: string };

/** One JSON object from a reply's text: alone, or the only content of one fenced block. */
export function jsonFromText(text: string): { ok: true; value: unknown } | { ok: false; detail: string } {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i.exec(trimmed);
  const body = (fenced ? fenced[1] : trimmed).trim();
  if (!body.startsWith("{") || !body.endsWith("}")) {
    return { ok: false, detail: "the reply is not a JSON object alone (or in one ```json block)" };
  }
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (error) {
    return { ok: false, detail: `the reply does not parse as JSON: ${clip(errorMessage(error), 200)}` };
  }
}

/** A value through `schema`: the value, or the first issues. */
export function checkReply<T>(schema: z.ZodType<T>, value: unknown): Reply<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
  return { ok: false, reason: "reply_wrong_shape", detail: issues.join("; ") };
}

/** Asks one model for replies of one schema, in the configured mode. */
export class ReplyReader<T> {
  private readonly structured: Runnable<BaseMessage[], Record<string, unknown>> | null | "unsupported";

  constructor(
    private readonly model: BaseChatModel,
    private readonly schema: z.ZodType<T>,
    name: string,
    mode: StructuredOutputMode,
  ) {
    this.structured = structuredRunnable(model, schema, name, mode);
  }

  /** One reply. Errors of the call itself are thrown (the caller tells rate limits and aborts apart). */
  async read(messages: BaseMessage[], config: RunnableConfig): Promise<Reply<T>> {
    if (this.structured === "unsupported") {
      return { ok: false, reason: "model_error", detail: "the model does not support structured output" };
    }
    if (this.structured) return checkReply(this.schema, await this.structured.invoke(messages, config));
    const message = await this.model.invoke(messages, config);
    const json = jsonFromText(message.text);
    return json.ok ? checkReply(this.schema, json.value) : { ok: false, reason: "reply_not_json", detail: json.detail };
  }
}

function structuredRunnable<T>(
  model: BaseChatModel,
  schema: z.ZodType<T>,
  name: string,
  mode: StructuredOutputMode,
): Runnable<BaseMessage[], Record<string, unknown>> | null | "unsupported" {
  if (mode === "never") return null;
  try {
    return model.withStructuredOutput(schema as z.ZodType<Record<string, unknown>>, { name }) as Runnable<
      BaseMessage[],
      Record<string, unknown>
    >;
  } catch {
    return mode === "always" ? "unsupported" : null;
  }
}

/** The name a model is recorded under: its `model` or `modelName`, else its class name. */
export function modelName(model: BaseChatModel): string {
  const named: unknown =
    (model as unknown as { model?: unknown; modelName?: unknown }).model ??
    (model as unknown as { modelName?: unknown }).modelName;
  return typeof named === "string" && named.length > 0 ? named : model.getName();
}
