/**
 * Chat scripts for the OpenAI-compatible test server: what "the model" behind it does for each
 * place the package calls a model. Which place a request comes from is read from the request
 * itself (the package's own system prompts), so a program that knows nothing of the test (the
 * production example) is served as well as a test.
 *
 * - the agent: the support desk's scripted habits (examples/support-desk.ts), run on the messages
 *   and tool descriptions the request carries, so what it does differently after a lesson it
 *   does because of what the request showed it;
 * - augmentation: a description and six example requests in plain words, from the tool's name;
 * - the proposer: reads the evidence JSON and proposes a usage note per repeated error, built from
 *   the masked shapes it was shown (a model can only repeat what it is sent);
 * - the evaluator of tool memory: scores the call record it is sent from its outcome and output;
 * - the guideline synthesizer: four parts from the evaluations it is sent;
 * - edict confirmation: a verdict per candidate (an edict unless it is said about someone else).
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ScriptedSupportModel } from "../../examples/support-desk.js";
import { type ChatReply, type ChatScript, type ChatTurn, messageText, type OpenAIMessage } from "./openai-server.js";

/** Where a chat request comes from. */
export type ModelRole = "agent" | "augment" | "proposer" | "evaluator" | "synthesizer" | "edicts";

/** The package's own prompts (augmentation, proposer, evaluator, synthesizer, edict check) open with these words. */
export function roleOf(turn: ChatTurn): ModelRole {
  const system = turn.body.messages.find((m) => m.role === "system" || m.role === "developer");
  const text = system ? messageText(system) : "";
  if (text.startsWith("You write search text for a software tool")) return "augment";
  if (text.startsWith("You review one tool of an AI agent")) return "proposer";
  if (text.startsWith("You evaluate one call an AI agent made to a tool")) return "evaluator";
  if (text.startsWith("You write usage guidelines for one tool of an AI agent")) return "synthesizer";
  if (text.startsWith("You check rules that code captured")) return "edicts";
  return "agent";
}

/** One script per role; a role without one is answered with a 500. */
export function byRole(scripts: Partial<Record<ModelRole, ChatScript>>): ChatScript {
  return (turn) => {
    const role = roleOf(turn);
    const script = scripts[role];
    return script
      ? script(turn)
      : { status: 500, body: { error: { message: `no ${role} script`, type: "server_error" } } };
  };
}

/** The wire messages as LangChain messages (a tool result starting "Error" is an error, as ToolNode writes them). */
export function toLangChainMessages(messages: readonly OpenAIMessage[]): BaseMessage[] {
  return messages.map((m) => {
    const text = messageText(m);
    if (m.role === "system" || m.role === "developer") return new SystemMessage(text);
    if (m.role === "user") return new HumanMessage(text);
    if (m.role === "tool") {
      return new ToolMessage({
        content: text,
        tool_call_id: m.tool_call_id ?? "",
        status: /^Error/.test(text) ? "error" : "success",
      });
    }
    return new AIMessage({
      content: text,
      tool_calls: (m.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        args: JSON.parse(c.function.arguments) as Record<string, unknown>,
        type: "tool_call" as const,
      })),
    });
  });
}

/** The support desk's scripted model, behind the wire: bound with the tools the request offers. */
export function supportAgentScript(): ChatScript {
  return async (turn) => {
    const bound = new ScriptedSupportModel().bindTools(
      (turn.body.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? "" })),
    );
    const reply = await bound.invoke(toLangChainMessages(turn.body.messages));
    if (reply.tool_calls && reply.tool_calls.length > 0) {
      return { toolCalls: reply.tool_calls.map((c) => ({ name: c.name, args: c.args, id: c.id })) };
    }
    return { content: reply.text };
  };
}

/** The tool name of an augmentation prompt. */
function augmentedToolName(turn: ChatTurn): string {
  return /Tool name: (.+)/.exec(turn.lastUser)?.[1]?.trim() ?? "tool";
}

/** A good augmentation reply: one line of description, six distinct requests. */
export function augmentScript(): ChatScript {
  return (turn) => {
    const words = augmentedToolName(turn)
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .join(" ")
      .toLowerCase();
    return {
      content: JSON.stringify({
        description: `Helps when someone wants to ${words}.`,
        examples: [
          `I need to ${words}`,
          `can you ${words} for me`,
          `help me ${words}`,
          `please ${words} today`,
          `how would I ${words}`,
          `${words} right away`,
        ],
      }),
    };
  };
}

/** The evidence a proposer prompt carries (the fields the script reads). */
export interface EvidenceSeen {
  tool: string;
  failedCalls: { callIds: string[]; errorClass: string; argNames: string[]; refusedShapes: Record<string, string[]> }[];
  acceptedShapes: Record<string, string[]>;
}

/** The evidence JSON of a proposer prompt. */
export function evidenceOf(turn: ChatTurn): EvidenceSeen {
  const json = turn.lastUser.slice(turn.lastUser.indexOf("{"));
  return JSON.parse(json) as EvidenceSeen;
}

/**
 * A proposer that writes one usage note per error repeated at least twice, from the shapes it was
 * shown ("order_id must look like ORD-######; calls with ###### were refused."), plus whatever
 * `extra` adds (e.g. a note holding a value, to see the vet refuse it).
 */
export function proposerScript(
  extra: (evidence: EvidenceSeen) => { text: string; cites: string[] }[] = () => [],
): ChatScript {
  return (turn) => {
    const evidence = evidenceOf(turn);
    const notes = evidence.failedCalls
      .filter((f) => f.callIds.length >= 2)
      .flatMap((f) =>
        f.argNames.slice(0, 1).map((arg) => {
          const good = evidence.acceptedShapes[arg]?.[0];
          const bad = f.refusedShapes[arg]?.[0];
          return {
            text: good
              ? `${arg} must look like ${good}; calls with ${bad ?? "other values"} were refused.`
              : `Check ${arg} before calling.`,
            cites: f.callIds,
          };
        }),
      );
    const reply: ChatReply = { json: { notes: [...notes, ...extra(evidence)], examples: [], notFor: [] } };
    return reply;
  };
}

/** The call record an evaluator prompt carries (the fields the script reads). */
export interface EvaluatedRecordSeen {
  tool: string;
  outcome: string;
  arguments: { name: string; kind: string; shape: string }[];
  output: { text: string; empty: boolean; statesZeroCount: boolean } | null;
}

/** The call record JSON of an evaluator prompt. */
export function evaluatedRecordOf(turn: ChatTurn): EvaluatedRecordSeen {
  return JSON.parse(turn.lastUser.slice(turn.lastUser.indexOf("{"))) as EvaluatedRecordSeen;
}

/** An evaluator that scores 0 for an error, 0.5 for empty or zero output, else 1, in general words. */
export function evaluatorScript(): ChatScript {
  return (turn) => {
    const record = evaluatedRecordOf(turn);
    const failed = record.outcome !== "success";
    const poor = !failed && (record.output === null || record.output.empty || record.output.statesZeroCount);
    return {
      json: {
        summary: failed ? "The call was refused by the tool." : "The call ran and returned output.",
        evaluation: failed
          ? "An argument did not have the format the tool expects."
          : poor
            ? "It ran but found nothing."
            : "It served the request.",
        score: failed ? 0 : poor ? 0.5 : 1,
        issues: failed ? ["error", "invalid_argument"] : poor ? ["no_results"] : [],
      },
    };
  };
}

/** A synthesizer writing four general lines (no value: it copies nothing it was sent). */
export function synthesizerScript(): ChatScript {
  return () => ({
    json: {
      coreFunction: "Looks up one order by its id.",
      whatWorks: ["Calls with a prefixed order id succeeded."],
      commonIssues: ["Calls with a bare number as the order id were refused."],
      bestPractices: ["Give the order id with its prefix."],
    },
  });
}

/** The payload of an edict check prompt. */
export interface EdictCheckSeen {
  message: string;
  registeredTools: string[];
  candidates: { index: number; rule: string; tool: string | null }[];
}

/** The payload JSON of an edict check prompt. */
export function edictCheckOf(turn: ChatTurn): EdictCheckSeen {
  return JSON.parse(turn.lastUser.slice(turn.lastUser.indexOf("{"))) as EdictCheckSeen;
}

/**
 * Edict confirmation: a verdict per candidate, from `decide` (by default every candidate is an
 * edict on the tool it was given).
 */
export function edictScript(
  decide: (
    candidate: EdictCheckSeen["candidates"][number],
    seen: EdictCheckSeen,
  ) => { edict: boolean; tool?: string | null } = () => ({ edict: true }),
): ChatScript {
  return (turn) => {
    const seen = edictCheckOf(turn);
    // A strict structured-output reply holds every property: `tool` is null when not corrected.
    return { json: { verdicts: seen.candidates.map((c) => ({ index: c.index, tool: null, ...decide(c, seen) })) } };
  };
}
