import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";

/**
 * A booking tool with three argument formats, each refused with its own error, and a scripted
 * model that writes an argument in the right format only once what it is shown (the lessons
 * block) says so: three lessons for one tool, learned one after the other.
 */

export const FORMATS = [
  {
    arg: "date",
    good: "2026-03-04",
    bad: "04/03/2026",
    re: /^\d{4}-\d{2}-\d{2}$/,
    error: "Invalid date: dates are written year first.",
  },
  { arg: "time", good: "09:30", bad: "930", re: /^\d{2}:\d{2}$/, error: "Invalid time: times need a colon." },
  { arg: "room", good: "RM-104", bad: "104", re: /^RM-\d{3}$/, error: "Invalid room: rooms start with RM-." },
] as const;

export function bookingTools(): StructuredToolInterface[] {
  const bookRoom = tool(
    async (args: Record<string, string>) => {
      for (const f of FORMATS) if (!f.re.test(args[f.arg])) throw new Error(f.error);
      return "booked";
    },
    {
      name: "book_room",
      description: "Book a meeting room for a date and time.",
      schema: z.object({ date: z.string(), time: z.string(), room: z.string() }),
    },
  );
  const sendEmail = tool(async () => "sent", {
    name: "send_email",
    description: "Send an email to a customer.",
    schema: z.object({ to: z.string() }),
  });
  return [bookRoom, sendEmail];
}

const call = (args: Record<string, string>) =>
  new AIMessage({ content: "", tool_calls: [{ id: `c_${randomUUID()}`, name: "book_room", args, type: "tool_call" }] });

/**
 * Books a room; after a refusal, tries once more with every argument right. `shown` holds what
 * each turn's first step was shown: the system text and the bound tools' descriptions.
 */
export class BookingModel extends BaseChatModel {
  readonly shown: string[];
  private readonly descriptions: string;

  constructor(shown: string[] = [], descriptions = "") {
    super({});
    this.shown = shown;
    this.descriptions = descriptions;
  }

  _llmType(): string {
    return "booking";
  }

  override bindTools(tools: unknown[] = []): this {
    const described = (tools as { description?: unknown }[]).map((t) =>
      typeof t.description === "string" ? t.description : "",
    );
    return new BookingModel(this.shown, described.join("\n")) as this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const system = messages[0]?.getType() === "system" ? String(messages[0].content) : "";
    const last = messages.at(-1);
    let message: AIMessage;
    if (last instanceof ToolMessage) {
      const tries = messages.filter((m) => m instanceof ToolMessage).length;
      message =
        last.status === "error" && tries === 1
          ? call(Object.fromEntries(FORMATS.map((f) => [f.arg, f.good])))
          : new AIMessage(String(last.content));
    } else {
      const shown = `${system}\n${this.descriptions}`;
      this.shown.push(shown);
      const knows = (arg: string) => shown.includes(`${arg} must look like`);
      message = call(Object.fromEntries(FORMATS.map((f) => [f.arg, knows(f.arg) ? f.good : f.bad])));
    }
    return { generations: [{ text: "", message }] };
  }
}
