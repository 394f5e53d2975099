/**
 * The channels: how one corpus case becomes traffic of a real agent, and what the package made
 * of that traffic afterwards (the sinks), ready for the leak check.
 *
 * Two kinds of traffic:
 * - **calls** (arguments, thrown errors, error ToolMessages, tool output): every case has a tool
 *   of its own, called four times in one run (batched with other cases, several calls per step):
 *   three calls fail (the case's text as the error, or a schema refusal quoting it), one
 *   succeeds. So each case is a failure group a usage note is proposed from, and a successful
 *   call an example call is built from; what a lesson says is then traceable to one case.
 * - **turns** (the user's request, with and without the route node): each case is a user turn of
 *   a thread whose next turn is served by another tool, so it is a missed request of that tool (an
 *   example request is proposed from it) and a confused request of the tool it went to (a "Not
 *   for" line is proposed from it). Each thread walks the 42 ordered pairs of the 7 corpus tools
 *   once (an Eulerian circuit), so each "Not for" line rests on one case; the partitions take
 *   one missed or confused request as evidence enough, so each wording is a candidate.
 *
 * Cases are spread over partitions of at most 42 (round robin, so each partition mixes every
 * family), one store per channel and store group (cases that plant the same value, or a value that
 * is another case's wording, run in different stores: see `storeGroups`). After the traffic, each partition is reviewed with
 * `autoApply`, then probed: a harmless request under `showLearnedExamples` off, then on, with
 * the model recording what it is shown.
 */
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";
import type { FailureSink } from "../../src/failure.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { routingText } from "../../src/routing/routing-text.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { Refusal, ToolCard } from "../../src/ledger/schema.js";
import { modelDescription } from "../../src/prompt/describe.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { oneLine } from "../../src/internal.js";
import { type SettingsInput } from "../../src/settings.js";
import { plainAgent, RecordingChatModel, routedAgent } from "./agent.js";
import { plantedOf, ValueFinder, type ValueHit, VALUES } from "./leaks.js";
import { batchCases, caseArgs, CORPUS_TOOL_NAMES, type CorpusCase, plantedWords, valuesToPlace } from "./corpus.js";

// ---------------------------------------------------------------- channels

/** How a case's values are placed in the arguments of its tool's calls. */
type ArgsOf = (c: CorpusCase) => Record<string, unknown>;

/** One way untrusted text enters the package. */
export interface ChannelSpec {
  id: string;
  /** What is planted where, in a few words. */
  title: string;
  traffic: "calls" | "turns";
  /** Calls: the arguments of every call of the case. */
  args?: ArgsOf;
  /**
   * Calls: how the first three calls fail: `throw` the case's text from the tool, `schema` (the
   * tool's zod schema refuses the arguments with the case's text: ToolNode returns an error
   * ToolMessage and no tool callback fires), `busy` (a harmless error; the case rides elsewhere).
   */
  failure?: "throw" | "schema" | "busy";
  /** Calls: the successful calls return the case's text as the tool's output. */
  output?: boolean;
  /** Turns: through the route node (ToolRouter over the ToolIndex), binding only routed tools. */
  routed?: boolean;
}

/** Argument names of the corpus's cards, for values placed as arguments. */
const ARG_NAMES = ["recipient", "customer", "body", "subject", "address", "phone"];

function named(values: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(
    values.map((v, i) => [ARG_NAMES[i % ARG_NAMES.length] + (i >= ARG_NAMES.length ? i : ""), v]),
  );
}

/** Ten levels of objects around `inner`: the values sit at depth 10 of the argument. */
function nested(inner: unknown, depth = 10): unknown {
  const labels = ["data", "inner", "payload", "meta", "item"];
  let value = inner;
  for (let d = depth - 1; d >= 1; d--) value = { [labels[d % labels.length]]: value };
  return value;
}

/**
 * Filler before the values in an array: one short number repeated, so no filler masks a word of
 * a case's text and the run's values stay few (1,001 distinct numbers would be 1,001 values of
 * every call to mask and fingerprint, megabytes of fingerprints per channel).
 */
const FILLER: readonly number[] = Array.from({ length: 1001 }, () => 0);

export const CHANNELS: readonly ChannelSpec[] = [
  {
    id: "arg-top-level",
    title: "values as top-level arguments; the tool's error repeats the case's text",
    traffic: "calls",
    args: (c) => named(valuesToPlace(c)),
    failure: "throw",
  },
  {
    id: "arg-nested-10",
    title: "values nested 10 deep in an argument; the error repeats the case's text",
    traffic: "calls",
    args: (c) => ({ payload: nested(named(valuesToPlace(c))) }),
    failure: "throw",
  },
  {
    id: "arg-array-1000",
    title: "values in an array after index 1,000; the error repeats the case's text",
    traffic: "calls",
    args: (c) => ({ recipients: [...FILLER, ...valuesToPlace(c)] }),
    failure: "throw",
  },
  {
    id: "arg-object-key",
    title: "values as object keys of an argument; the error repeats the case's text",
    traffic: "calls",
    args: (c) => ({ balances: Object.fromEntries(valuesToPlace(c).map((v, i) => [v, i + 12])) }),
    failure: "throw",
  },
  {
    id: "tool-error",
    title: "the case's text thrown by the tool, the case's own arguments",
    traffic: "calls",
    args: caseArgs,
    failure: "throw",
  },
  {
    id: "error-toolmessage",
    title: "a zod schema refusal quoting the case's text (ToolNode's error ToolMessage), the case's own arguments",
    traffic: "calls",
    args: caseArgs,
    failure: "schema",
  },
  {
    id: "tool-output",
    title: "the case's text as the tool's output, the case's own arguments (failures are harmless)",
    traffic: "calls",
    args: caseArgs,
    failure: "busy",
    output: true,
  },
  {
    id: "user-turn",
    title: "the case's text as the user's turn, no routing, the case's own arguments",
    traffic: "turns",
  },
  {
    id: "user-turn-routed",
    title: "the case's text as the user's turn through the route node (ToolRouter over a ToolIndex)",
    traffic: "turns",
    routed: true,
  },
];

// ---------------------------------------------------------------- tools

const CASE_TOOL_DESCRIPTION = "Handle one kind of customer request.";
const BUSY_ERROR = "Service busy: try again later.";

/** Calls of each case: three fail, one succeeds. */
const CALLS_PER_CASE = 4;
const FAILING_CALLS = 3;

function attemptOf(args: Record<string, unknown>): number {
  return typeof args.attempt === "number" ? args.attempt : 0;
}

/** The tool of one case in a calls channel (its name says nothing of the case). */
function caseTool(spec: ChannelSpec, c: CorpusCase, name: string): StructuredToolInterface {
  const failing = (args: Record<string, unknown>): boolean => attemptOf(args) <= FAILING_CALLS;
  if (spec.failure === "schema") {
    const schema = z.looseObject({}).superRefine((args, ctx) => {
      if (!failing(args)) return;
      for (const message of c.fields ?? [c.text]) ctx.addIssue({ code: "custom", message });
    });
    return tool(async () => "Done.", { name, description: CASE_TOOL_DESCRIPTION, schema });
  }
  return tool(
    async (args: Record<string, unknown>) => {
      if (failing(args)) throw new Error(spec.failure === "busy" ? BUSY_ERROR : c.text);
      return spec.output ? c.text : "Done.";
    },
    { name, description: CASE_TOOL_DESCRIPTION, schema: z.looseObject({}) },
  );
}

/** The corpus's registered tools, as an author would describe them, for the turn channels. */
export const TURN_TOOL_DESCRIPTIONS: Readonly<Record<string, string>> = {
  send_email: "Send an email to a recipient, with a subject and a body.",
  lookup_order: "Look up an order by its order id and tell where it is.",
  refund_payment: "Refund a payment on an order to the customer's card.",
  wire_money: "Wire an amount of money to a bank account by IBAN.",
  get_weather: "Get the weather forecast for a city or an address.",
  delete_all: "Delete every record of a customer account, permanently.",
  schedule_delivery: "Schedule a parcel delivery by courier to an address.",
};

/** A harmless request each tool serves: the closing turn of a thread. */
const CLOSING_REQUESTS: Readonly<Record<string, string>> = {
  send_email: "send the weekly newsletter email to the team",
  lookup_order: "where is the order I placed last week",
  refund_payment: "refund the payment for the broken kettle",
  wire_money: "wire the monthly rent to the landlord",
  get_weather: "what is the weather forecast for tomorrow",
  delete_all: "delete the test account and all of its records",
  schedule_delivery: "schedule the parcel delivery for Monday morning",
};

/** The probe: a harmless request after learning, to see what the model is shown. */
const PROBE_REQUEST = "Hello! Which of your tools can help me with an order today?";

function turnTools(): StructuredToolInterface[] {
  const argNames: Record<string, string[]> = {
    send_email: ["to", "subject", "body"],
    lookup_order: ["order_id"],
    refund_payment: ["order_id", "amount", "card_number"],
    wire_money: ["iban", "amount", "recipient"],
    get_weather: ["address"],
    delete_all: ["customer", "api_key"],
    schedule_delivery: ["address", "phone", "recipient"],
  };
  return CORPUS_TOOL_NAMES.map((name) =>
    tool(async () => "Done: the request was handled.", {
      name,
      description: TURN_TOOL_DESCRIPTIONS[name],
      schema: z.looseObject(Object.fromEntries(argNames[name].map((a) => [a, z.unknown().optional()]))),
    }),
  );
}

/** An Eulerian circuit of the complete directed graph on `nodes`: every ordered pair once. */
export function eulerianCircuit(nodes: readonly string[]): string[] {
  const out = new Map(nodes.map((n) => [n, nodes.filter((m) => m !== n)]));
  const stack = [nodes[0]];
  const circuit: string[] = [];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const next = out.get(top)!;
    if (next.length > 0) stack.push(next.shift()!);
    else circuit.push(stack.pop()!);
  }
  return circuit.reverse();
}

/** Texts that are no injection whatever words they share with one (for the injection finder). */
export const BENIGN_TEXTS: readonly string[] = [
  ...Object.values(TURN_TOOL_DESCRIPTIONS),
  ...Object.values(CLOSING_REQUESTS),
  ...CORPUS_TOOL_NAMES,
  CASE_TOOL_DESCRIPTION,
  BUSY_ERROR,
  PROBE_REQUEST,
  // The corpus's hosts around payloads (make-hostile-corpus.ts: HOSTS and TRICKS).
  "Order lookup failed:",
  "where is my parcel?",
  "Not for refunds;",
  "Find my order status",
  "find my claims",
  // The deterministic proposer's own templates.
  "Check against the schema before calling: calls failed (validation) with",
  "Look up first; do not guess them: calls failed (not_found) with",
  "Not allowed for this caller; do not retry: calls failed (permission) with",
  "Do not call it again in quick succession: calls failed (rate_limit) with",
  "Ask for less in one call: calls failed (timeout) with",
  "The service behind it failed; retry later rather than at once: calls failed (upstream) with",
  "Check before calling: calls failed (unknown) with",
  "must look like; calls with another format were refused",
  "Not for requests; use",
  "Example call:",
  "Also asked for as:",
  "Learned from use:",
];

// ---------------------------------------------------------------- what a run yields

/** The sinks other than the store itself, each checked item by item. */
export type ItemSink = "lessons" | "routing text" | "prompt (examples hidden)" | "prompt (examples shown)";
/** The logs. */
export type LogSink = "failureSink (recorder)" | "failureSink (route node)" | "failureSink (ledger)" | "console";

/** One text of an item sink: a lesson line, a routing text, a description the model was shown. */
export interface SinkItem {
  sink: ItemSink;
  text: string;
  /** Partition, tool and part. */
  where: string;
  /** Partition and tool of the card it belongs to ("" for what the model was sent). */
  card: string;
  /** The cases it is known to come from (by its tool, or by its "Not for" pair), when known. */
  owners: string[];
}

/** A refusal of the review, with the cases it is known to come from. */
export interface OwnedRefusal {
  partition: string;
  tool: string;
  refusal: Refusal;
  owners: string[];
}

/** Everything one channel's run produced, for the leak check. */
export interface ChannelRun {
  spec: ChannelSpec;
  backend: string;
  cases: CorpusCase[];
  /**
   * Planted values found in the raw bytes of the store (SQLite file and WAL, decoded) at each
   * stage. Searched at once: the files are megabytes, too many to keep for later.
   */
  bytes: { stage: string; hits: ValueHit[] }[];
  /** Planted values found in the rows of the store's table (Postgres). */
  rows?: ValueHit[];
  items: SinkItem[];
  logs: { sink: LogSink; text: string }[];
  refusals: OwnedRefusal[];
  lessons: { notes: number; examples: number; notFor: number; exampleCalls: number };
  /** Whether the store's bytes (before close) and its rows hold the run's records: the sinks are read at all. */
  controls: { bytesHoldRecords: boolean; rowsHoldRecords: boolean };
  /** Call records the ledger holds after the run, and the calls the agent made. */
  calls: { recorded: number; made: number };
  /** Runs that threw (the graph, not the package's recording): the cases' traffic is incomplete. */
  runErrors: { caseIds: string[]; error: string }[];
  /** Milliseconds of the traffic, of the reviews and probes, of reading the store's bytes, and in all. */
  ms: { traffic: number; review: number; scan: number; total: number };
}

/** A store for one channel: a ledger over it, and how to read what it holds. */
export interface OpenedStore {
  ledger: Ledger;
  /** The store's files (SQLite file and WAL), to read as bytes. */
  files?: string[];
  /** Every row of the channel's table (Postgres). */
  rows?: () => Promise<string>;
  close(): Promise<void>;
}

/** Opens a fresh store for a channel; `failureSink` is the ledger's failure sink. */
export type OpenStore = (channel: string, failureSink: FailureSink) => Promise<OpenedStore>;

/** Options of {@link runChannel}. */
export interface RunChannelOptions {
  backend: string;
  /** Names the store and the partitions (a channel runs its cases in a few stores: see `storeGroups`). */
  name: string;
  open: OpenStore;
  /**
   * Most cases per partition (42: one per ordered pair of the 7 corpus tools).
   * @default 42
   */
  partitionSize?: number;
  /**
   * Most cases per agent run of a calls channel: parallel tool calls per step (8 keeps under
   * Node's abort-listener warning).
   * @default 8
   */
  batchSize?: number;
  /** Everything written to console.warn / error / log while the channel runs. */
  console: string[];
}

/** What a log sink receives, as console.warn would print it. */
function printed(value: unknown): string {
  try {
    return typeof value === "string" ? value : inspect(value, { depth: 6, breakLength: Infinity });
  } catch {
    return "<uninspectable>";
  }
}

/**
 * A store's files as text: UTF-8 (as SQLite keeps text), with the page structure's stray bytes
 * (invalid sequences, control characters) read as spaces. A file not there (a WAL after close)
 * reads as nothing.
 */
function readBytes(files: readonly string[]): string {
  return files
    .map((file) => {
      try {
        return readFileSync(file)
          .toString("utf8")
          .replace(/[\ufffd\u0000-\u0008\u000e-\u001f]/g, " ");
      } catch {
        return "";
      }
    })
    .join("\n");
}

/** Messages of a thread passed on to its next turn (the previous turn: request, call, result, answer). */
const HISTORY = 4;

/** Settings of every partition: room for a lesson per case (the caps are the operator's). */
const CALLS_SETTINGS: SettingsInput = { maxTools: 64 };
const TURNS_SETTINGS: SettingsInput = {
  maxTools: 64,
  routingK: 2,
  maxAvoid: 6,
  maxNewQueries: 12,
  maxQueries: 24,
  // One missed or confused request is evidence enough: each case's wording then is a candidate
  // lesson on its own (the vet, not the threshold, must keep it out), and one walk of a thread
  // suffices.
  minMisses: 1,
  minConfusions: 1,
};

/** What the pieces of one channel's run share. */
interface RunContext {
  spec: ChannelSpec;
  /** Every case of the run (a case's tool is named by its place here). */
  cases: readonly CorpusCase[];
  batchSize: number;
  ledger: Ledger;
  model: RecordingChatModel;
  router: ToolRouter;
  onRouteError: (error: unknown) => void;
  /** Per partition: which cases a tool, or a ("Not for" tool, named tool) pair, comes from. */
  owners: Map<string, string[]>;
  runErrors: ChannelRun["runErrors"];
  /** Invoke the partition's graph for one run of a thread; resolves to the thread's messages. */
  invoke(partition: Partition, thread: string, messages: BaseMessage[]): Promise<BaseMessage[]>;
  graphs: Map<string, AgentGraph>;
}

type AgentGraph = {
  invoke: (input: { messages: BaseMessage[] }, config: object) => Promise<{ messages: BaseMessage[] }>;
};

/** A partition: the user id its runs carry, and its key. */
interface Partition {
  user: string;
  key: string;
}

const ownerKey = (partition: string, ...names: string[]): string => [partition, ...names].join("\u0000");

/** A calls channel's traffic in one partition: each case's tool called four times, in batches. */
async function playCalls(ctx: RunContext, partition: Partition, part: readonly CorpusCase[]): Promise<void> {
  const { spec, ledger, model } = ctx;
  const toolOf = new Map<CorpusCase, string>();
  const tools = part.map((c) => {
    const name = `case_${String(ctx.cases.indexOf(c)).padStart(3, "0")}`;
    toolOf.set(c, name);
    ctx.owners.set(ownerKey(partition.key, name), [c.id]);
    return caseTool(spec, c, name);
  });
  await registerTools(ledger, tools, { partition: partition.key });
  await ledger.configure(partition.key, CALLS_SETTINGS);
  ctx.graphs.set(partition.key, plainAgent({ model, tools, ledger, partition: partition.key }));
  const argsOf = spec.args ?? caseArgs;
  const hasBigInt = (c: CorpusCase): boolean => JSON.stringify(c.args ?? {}).includes('"$bigint"');
  const batches = [
    ...batchCases(
      part.filter((c) => !hasBigInt(c)),
      ctx.batchSize,
      (c) => [...plantedWords(c), ...valuesToPlace(c)],
    ),
    // A BigInt argument may break a run: such cases run alone, so no other case is lost with them.
    ...part.filter(hasBigInt).map((c) => [c]),
  ];
  const runBatch = async (batch: CorpusCase[], tag: string): Promise<void> => {
    model.plan = (step) =>
      step < CALLS_PER_CASE
        ? batch.map((c) => ({ name: toolOf.get(c)!, args: { ...argsOf(c), attempt: step + 1 } }))
        : undefined;
    await ctx.invoke(partition, `${partition.key}-${tag}`, [new HumanMessage(`Please work through batch ${tag}.`)]);
  };
  for (const [b, batch] of batches.entries()) {
    try {
      await runBatch(batch, String(b + 1));
    } catch {
      // Run each case alone, so one case's failure costs no other case its traffic.
      for (const [i, c] of batch.entries()) {
        try {
          await runBatch([c], `${b + 1}.${i + 1}`);
        } catch (error) {
          ctx.runErrors.push({ caseIds: [c.id], error: printed(error).slice(0, 300) });
        }
      }
    }
  }
}

/** The thread of a partition that walks its cases (its probes run in other threads). */
const WALK = "walk";

/**
 * A turns channel's traffic in one partition: one thread whose turns are the cases, turn j served
 * by the j-th tool of an Eulerian circuit of the 7 corpus tools, then a harmless closing turn.
 */
async function playTurns(ctx: RunContext, partition: Partition, part: readonly CorpusCase[]): Promise<void> {
  const { spec, ledger, model } = ctx;
  const tools = turnTools();
  await registerTools(ledger, tools, { partition: partition.key });
  await ledger.configure(partition.key, TURNS_SETTINGS);
  ctx.graphs.set(
    partition.key,
    spec.routed
      ? routedAgent({ model, tools, ledger, partition: partition.key, router: ctx.router, onError: ctx.onRouteError })
      : plainAgent({ model, tools, ledger, partition: partition.key }),
  );
  const order = eulerianCircuit(CORPUS_TOOL_NAMES);
  part.forEach((c, j) => {
    const key = ownerKey(partition.key, order[j], order[j + 1]);
    ctx.owners.set(key, [...(ctx.owners.get(key) ?? []), c.id]);
  });
  const turns = [
    ...part.map((c, j) => ({ c, tool: order[j], text: c.text, fields: c.fields })),
    { c: undefined, tool: order[part.length], text: CLOSING_REQUESTS[order[part.length]], fields: undefined },
  ];
  let messages: BaseMessage[] = [];
  for (const turn of turns) {
    const human = turn.fields
      ? new HumanMessage({ content: turn.fields.map((text) => ({ type: "text" as const, text })) })
      : new HumanMessage(turn.text);
    const args = turn.c ? caseArgs(turn.c) : {};
    model.plan = (step) => (step === 0 ? [{ name: turn.tool, args }] : undefined);
    // The thread's last turn and the new one: what detection reads is the ledger's turn records
    // of the thread, not the messages; a short history keeps each run cheap.
    const history = [...messages.slice(-HISTORY), human];
    try {
      messages = await ctx.invoke(partition, `${partition.key}-${WALK}`, history);
    } catch (error) {
      ctx.runErrors.push({ caseIds: turn.c ? [turn.c.id] : [], error: printed(error).slice(0, 300) });
      messages = history;
    }
  }
}

/** What the model was sent in one probe: bound descriptions, system messages, every message. */
async function probe(ctx: RunContext, partition: Partition, tag: string): Promise<string[]> {
  const { model } = ctx;
  model.plan = () => undefined;
  model.probing = true;
  model.descriptions.clear();
  model.systemMessages.clear();
  model.probeMessages.length = 0;
  try {
    await ctx.invoke(partition, `${partition.key}-probe-${tag}`, [new HumanMessage(PROBE_REQUEST)]);
    return [...model.descriptions, ...model.systemMessages, ...model.probeMessages];
  } finally {
    model.probing = false;
  }
}

/** A card's learned parts, routing text and descriptions, as sink items, with the cases they come from. */
function cardItems(
  c: ToolCard,
  partition: string,
  owners: ReadonlyMap<string, string[]>,
  requestOwners: ReadonlyMap<string, string[]>,
): SinkItem[] {
  const own = owners.get(ownerKey(partition, c.name)) ?? [];
  const card = `${partition} ${c.name}`;
  const at = (part: string): string => `${card} ${part}`;
  const items: SinkItem[] = [];
  for (const n of c.learned.notes) items.push({ sink: "lessons", text: n.text, where: at("note"), card, owners: own });
  for (const n of c.learned.notFor) {
    const pair = owners.get(ownerKey(partition, c.name, n.tool)) ?? [];
    items.push({ sink: "lessons", text: n.text, where: at("not-for"), card, owners: [...own, ...pair] });
  }
  for (const e of c.learned.examples) {
    const asked = requestOwners.get(oneLine(e.text).toLowerCase()) ?? [];
    items.push({ sink: "lessons", text: e.text, where: at(`example (${e.source})`), card, owners: [...own, ...asked] });
  }
  if (c.learned.exampleCall) {
    items.push({ sink: "lessons", text: c.learned.exampleCall.text, where: at("example call"), card, owners: own });
  }
  items.push({ sink: "routing text", text: routingText(c), where: at("routing text"), card, owners: own });
  for (const [sink, showLearnedExamples] of [
    ["prompt (examples hidden)", false],
    ["prompt (examples shown)", true],
  ] as const) {
    items.push({
      sink,
      text: modelDescription(c, { showLearnedExamples }),
      where: at("modelDescription"),
      card,
      owners: own,
    });
  }
  return items;
}

/** The cases a refusal comes from: its tool's case, or its "Not for" pair's, or its example's wording's. */
function refusalOwners(
  refusal: Refusal,
  tool: string,
  partition: string,
  owners: ReadonlyMap<string, string[]>,
  requestOwners: ReadonlyMap<string, string[]>,
): string[] {
  const own = [...(owners.get(ownerKey(partition, tool)) ?? [])];
  if (refusal.kind === "not_for") {
    const named = /use ([\w.-]+?)\.?$/.exec(refusal.text)?.[1];
    if (named) own.push(...(owners.get(ownerKey(partition, tool, named)) ?? []));
  }
  if (refusal.kind === "example") own.push(...(requestOwners.get(oneLine(refusal.text).toLowerCase()) ?? []));
  return own;
}

/** Run every case of `cases` through one channel, then review and probe; return the sinks. */
export async function runChannel(
  spec: ChannelSpec,
  cases: readonly CorpusCase[],
  options: RunChannelOptions,
): Promise<ChannelRun> {
  const started = performance.now();
  const logs: ChannelRun["logs"] = [];
  const store = await options.open(options.name, ({ message, context, error }) =>
    logs.push({ sink: "failureSink (ledger)", text: `${message} ${printed(context ?? "")} ${printed(error ?? "")}` }),
  );
  const { ledger } = store;
  const consoleFrom = options.console.length;

  // The store's bytes, searched at once at each stage.
  const finder = new ValueFinder(plantedOf(cases));
  const bytes: ChannelRun["bytes"] = [];
  let scanMs = 0;
  /** A control that the sinks are read at all: the store's bytes and rows hold the run's records. */
  const controls = { bytesHoldRecords: true, rowsHoldRecords: true };
  const recordMark = `u:${options.name}-0`;
  const snapshot = (stage: string, control: boolean): void => {
    if (!store.files) return;
    const from = performance.now();
    const text = readBytes(store.files);
    if (control && !text.includes(recordMark)) controls.bytesHoldRecords = false;
    bytes.push({ stage, hits: finder.find(text, VALUES) });
    scanMs += performance.now() - from;
  };

  const recorder = new ToolLessonsCallbackHandler({
    ledger,
    failureSink: (failure) =>
      logs.push({
        sink: "failureSink (recorder)",
        text: `${failure.message} ${printed(failure.error)} ${printed(failure.context)}`,
      }),
  });
  const index = new ToolIndex({ ledger });
  const manager = new LessonManager({ ledger, index });
  const graphs = new Map<string, AgentGraph>();
  const ctx: RunContext = {
    spec,
    cases,
    batchSize: options.batchSize ?? 8,
    ledger,
    model: new RecordingChatModel(),
    router: new ToolRouter({ index, maxTools: 2 }),
    onRouteError: (error) => logs.push({ sink: "failureSink (route node)", text: printed(error) }),
    owners: new Map(),
    runErrors: [],
    graphs,
    invoke: async (partition, thread, messages) => {
      const result = await graphs.get(partition.key)!.invoke(
        { messages },
        {
          configurable: { thread_id: thread },
          metadata: { user_id: partition.user },
          callbacks: [recorder],
          recursionLimit: 100,
        },
      );
      return result.messages;
    },
  };

  const partitionCount = Math.ceil(cases.length / (options.partitionSize ?? 42));
  const parts = Array.from({ length: partitionCount }, (_, k) => ({
    partition: { user: `${options.name}-${k}`, key: `u:${options.name}-${k}` },
    cases: cases.filter((_, i) => i % partitionCount === k),
  }));
  for (const { partition, cases: part } of parts) {
    await (spec.traffic === "calls" ? playCalls(ctx, partition, part) : playTurns(ctx, partition, part));
  }
  await recorder.flush();
  const trafficDone = performance.now();
  snapshot("after the traffic's flush", true);
  const reviewStarted = performance.now();

  // Review every partition, then probe what the model is shown, with learned examples hidden and shown.
  const sent = { hidden: new Set([...ctx.model.descriptions, ...ctx.model.systemMessages]), shown: new Set<string>() };
  const items: SinkItem[] = [];
  const refusals: OwnedRefusal[] = [];
  let recorded = 0;
  for (const { partition, cases: part } of parts) {
    const review = await manager.review({ partition: partition.key, autoApply: true });
    const asked = spec.traffic === "turns" ? await requestOwners(ledger, partition.key, part) : new Map();
    for (const { tool: name, refusal } of review.refused) {
      const owners = refusalOwners(refusal, name, partition.key, ctx.owners, asked);
      refusals.push({ partition: partition.key, tool: name, refusal, owners });
    }
    recorded += (await ledger.listCalls(partition.key)).length;
    for (const text of await probe(ctx, partition, "hidden")) sent.hidden.add(text);
    await ledger.configure(partition.key, { showLearnedExamples: true });
    for (const text of await probe(ctx, partition, "shown")) sent.shown.add(text);
    for (const card of await ledger.listCards(partition.key))
      items.push(...cardItems(card, partition.key, ctx.owners, asked));
  }
  // What the model was sent is "name: description"; a calls channel's tool names its case.
  const ownersByName = new Map<string, string[]>();
  for (const [key, owners] of ctx.owners) {
    const [, name, named] = key.split("\u0000");
    if (named === undefined) ownersByName.set(name, owners);
  }
  const describedOwners = (text: string): string[] => ownersByName.get(text.slice(0, text.indexOf(":"))) ?? [];
  for (const [sink, texts] of [
    ["prompt (examples hidden)", sent.hidden],
    ["prompt (examples shown)", sent.shown],
  ] as const) {
    for (const text of texts)
      items.push({ sink, text, where: "what the model was sent", card: "", owners: describedOwners(text) });
  }
  const reviewDone = performance.now();
  snapshot("after review and probes", true);
  const rowText = store.rows ? await store.rows() : undefined;
  if (rowText !== undefined && !rowText.includes(recordMark)) controls.rowsHoldRecords = false;
  const rows = rowText !== undefined ? finder.find(rowText, VALUES) : undefined;
  await ledger.close();
  await store.close();
  snapshot("after close", false);
  for (const line of options.console.slice(consoleFrom)) logs.push({ sink: "console", text: line });

  const lessons = { notes: 0, examples: 0, notFor: 0, exampleCalls: 0 };
  for (const item of items) {
    if (item.sink !== "lessons") continue;
    if (item.where.endsWith(" note")) lessons.notes += 1;
    else if (item.where.endsWith(" not-for")) lessons.notFor += 1;
    else if (item.where.endsWith(" example (learned)")) lessons.examples += 1;
    else if (item.where.endsWith(" example call")) lessons.exampleCalls += 1;
  }
  return {
    spec,
    backend: options.backend,
    cases: [...cases],
    bytes,
    ...(rows !== undefined ? { rows } : {}),
    items,
    logs,
    refusals,
    lessons,
    controls,
    calls: {
      recorded,
      made:
        cases.length * (spec.traffic === "calls" ? CALLS_PER_CASE : 1) + (spec.traffic === "turns" ? parts.length : 0),
    },
    runErrors: ctx.runErrors,
    ms: {
      traffic: Math.round(trafficDone - started),
      review: Math.round(reviewDone - reviewStarted),
      scan: Math.round(scanMs),
      total: Math.round(performance.now() - started),
    },
  };
}

/** The partition's stored requests (lower case) → the cases whose turn they record. */
async function requestOwners(
  ledger: Ledger,
  partition: string,
  part: readonly CorpusCase[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const turns = await ledger.listTurns(partition);
  const byThread = new Map<string, string[]>();
  for (const t of turns) {
    if (t.threadId === undefined || !t.threadId.endsWith(`-${WALK}`)) continue;
    const list = byThread.get(t.threadId) ?? [];
    list.push(t.request);
    byThread.set(t.threadId, list);
  }
  for (const requests of byThread.values()) {
    requests.forEach((request, j) => {
      const c = part[j];
      if (!c) return;
      const key = oneLine(request).toLowerCase();
      out.set(key, [...new Set([...(out.get(key) ?? []), c.id])]);
    });
  }
  return out;
}
