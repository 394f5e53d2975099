/**
 * Rows from a finished run: its calls in order, then its turn, every text masked against every
 * argument value of the run (known only once it ends). Pure but for fresh ids; the writer calls
 * it once the fingerprint key is known.
 *
 * The rows are of the ledger's schema by construction: every part that came from outside was
 * checked where it entered (the handler keeps only non-empty strings for ids, finite numbers for
 * tokens; `writerSettings` checks the error rules; the tool name is checked here), and the rest
 * is made here. So they are marked built (`ledger/trusted.ts`) and appended without a second
 * schema pass; `test/record/rows.test.ts` parses them against the schema over the privacy corpus.
 */
import { timeOrderedId } from "../ledger/keys.js";
import type { CallRecord, ErrorClass, NewRecord, OutputSummary, TurnRecord } from "../ledger/schema.js";
import { trustBuilt } from "../ledger/trusted.js";
import { gateText } from "../text/gate.js";
import { findAimedAtModel } from "../text/injection.js";
import { isStorableName } from "../text/normalize.js";
import { parseJsonPrefix } from "../text/json-prefix.js";
import {
  createMasker,
  type FingerprintMemo,
  type MaskedArg,
  MASK_BUDGET,
  maskArgs,
  maskRequest,
  Unread,
  valueFingerprints,
  withinBudget,
} from "../text/mask.js";
import { staticAllowedWords } from "../text/free-text.js";
import type { AllowedWords } from "../text/vocabulary.js";
import { clip, isRecord, SEARCH_TOOLS_NAME } from "../internal.js";
import { classifyError, type ErrorInfo, type ErrorRule } from "./error-class.js";
import { captureToolOutput, maskToolOutput } from "./output.js";
import { type HumanTurn, hashedRequestId } from "../caller/request.js";
import { FIELD_NAMES_ONLY, isAppToolCall, type NameTrust } from "./registered-names.js";

/** Longest stored error message, in characters (after masking). */
const MAX_ERROR_LENGTH = 400;
/** Longest stored request text, in characters (after masking). */
const MAX_REQUEST_LENGTH = 2000;

/** A tool call the model asked for, from its AIMessage. */
export interface RequestedCall {
  name: string;
  args: Record<string, unknown>;
  /** The step's tokens divided evenly among the calls it requested. */
  tokens?: number;
  order: number;
}

/** A finished call, kept raw until the run ends (then masked against all of the run's values). */
export interface PendingCall {
  tool: string;
  args: Record<string, unknown> | undefined;
  /** The callback's input string, parsed when `args` is not known from the AIMessage. */
  input?: string;
  outcome: "success" | "error";
  error?: ErrorInfo;
  latencyMs?: number;
  tokens?: number;
  /**
   * A successful call's output as the tool returned it (a `ToolMessage`'s content, or the value),
   * by reference: the run's state holds it too. Read, bounded and masked only when the rows are
   * built, off the run's path.
   */
  output?: { raw: unknown };
  source: "callback" | "tool_message";
  at: number;
  order: number;
}

/** What rows are built from: one top-level run, as the callbacks saw it (raw). */
export interface RunTrace {
  /** The run id of the top-level run. */
  id: string;
  threadId?: string;
  /** Chain root (a graph or chain): gets a turn row when it has a request. */
  isChain: boolean;
  turn?: HumanTurn;
  requested: ReadonlyMap<string, RequestedCall>;
  calls: readonly PendingCall[];
}

/** The rows of one run; `refused` counts records left out (no storable tool name). */
export interface RunRows {
  calls: NewRecord<CallRecord>[];
  turn?: NewRecord<TurnRecord>;
  refused: number;
}

/**
 * What keeps only the words of a masked free text that may be kept (`WordReleases.keep` for the
 * run's partition, thread and caller): `allowed` is the run's static allow-list.
 */
export type FreeTextKeeper = (text: string, allowed: AllowedWords) => string;

/**
 * What a call row names a tool by when its name is not one the app registered or ran: a name the
 * model wrote (`mail_dana.whitfield@contoso-mail.net`) is masked like a value (`registered-names.ts`).
 */
export const UNREGISTERED_TOOL = "<unregistered_tool>";
/** What a call row names an argument by when its name is not in the tool's registered schema. */
export const UNREGISTERED_ARG = "<arg>";

/** Longest tool name recorded; a longer one is no tool a model was given. */
const MAX_TOOL_NAME_LENGTH = 256;

/** A tool name a store can key a namespace by: non-blank, not too long, storable as it is. */
function isStorableToolName(name: string): boolean {
  return name.trim() !== "" && name.length <= MAX_TOOL_NAME_LENGTH && isStorableName(name);
}

/**
 * Whether a call is evidence about a user's tool: every call but those of the package's own
 * `search_tools` (cache-keeping mode, by its registered name), which the model calls to find tools,
 * not to serve a request. Such a call is kept in its turn's `calls` (what the run did), but never
 * written as a call record nor named the turn's `servedBy`: no review, tally, wording, effect check
 * or tool memory reads it as a refusal, a miss, a confusion or a served request of any tool.
 */
export function isEvidenceCall(call: { tool: string }): boolean {
  return call.tool !== SEARCH_TOOLS_NAME;
}

/**
 * A tool's callback input (JSON of its arguments, or a plain string) as arguments. An input longer
 * than {@link MASK_BUDGET}`.maxInputChars` is read from its start ({@link parseJsonPrefix}):
 * parsing it whole would block the event loop for as long as it is (a million numbers: about 0.3 s),
 * and its `unread` part makes the run's texts masked strictly.
 */
function argsFromInput(input: string | undefined): { args: Record<string, unknown>; unread: boolean } {
  if (input === undefined) return { args: {}, unread: false };
  let parsed: unknown;
  let unread = false;
  if (input.length > MASK_BUDGET.maxInputChars) {
    const prefix = parseJsonPrefix(input, MASK_BUDGET.maxInputChars);
    if (prefix === undefined) return { args: { input: input.slice(0, MASK_BUDGET.maxInputChars) }, unread: true };
    parsed = prefix.value;
    unread = true;
  } else {
    try {
      parsed = JSON.parse(input);
    } catch {
      return { args: { input }, unread: false };
    }
  }
  if (isRecord(parsed) && !Array.isArray(parsed)) return { args: parsed, unread };
  return { args: { input: parsed }, unread };
}

/**
 * The records of a finished run: its calls in order, then its turn. Every text is masked
 * against every argument value of the run (known only now, which is why records wait for the
 * run's end). Calls whose tool name no store can key by are left out and counted in `refused`.
 *
 * Names the model wrote are untrusted (`registered-names.ts`): a tool name `trust` does not vouch
 * for (and no call of the run ran under) is stored as {@link UNREGISTERED_TOOL}, an argument name
 * outside the tool's schema as {@link UNREGISTERED_ARG}; both are masked in the run's texts and
 * fingerprinted like values, and neither joins the allow-list of free text.
 */
export function buildRecords(
  root: RunTrace,
  partition: string,
  key: string,
  rules: readonly ErrorRule[],
  memo: FingerprintMemo,
  keepWords?: FreeTextKeeper,
  trust: NameTrust = FIELD_NAMES_ONLY,
): RunRows {
  const calls = [...root.calls].sort((a, b) => a.order - b.order);
  // A tool that ran through the callbacks, or whose arguments its schema refused, is the app's:
  // LangChain starts no tool the model made up, and checks arguments only against a tool it has.
  const ran = new Set(calls.filter(isAppToolCall).map((c) => c.tool));
  const isTool = (tool: string): boolean => ran.has(tool) || trust.isTool(tool);
  const argsOf = new Map<PendingCall, Record<string, unknown>>();
  let unread = false;
  for (const call of calls) {
    if (call.args !== undefined) argsOf.set(call, call.args);
    else {
      const read = argsFromInput(call.input);
      argsOf.set(call, read.args);
      unread ||= read.unread;
    }
  }
  const runValues: unknown[] = [...argsOf.values(), ...[...root.requested.values()].map((r) => r.args)];
  const names = namesOf(root, calls, argsOf, isTool, trust);
  // Names the model wrote are values: masked wherever the run's texts repeat them.
  if (names.untrusted.length > 0) runValues.push(names.untrusted);
  // An input read in part: values were left unread, so the run's texts are masked strictly.
  if (unread) runValues.push(Unread.instance);
  const requestId = root.turn ? (root.turn.id ?? hashedRequestId(root.threadId, root.turn)) : undefined;
  // One masker per run: its request, calls and errors are masked against the same values, one way.
  const masker = createMasker(runValues);
  // Free text keeps only the words that may be kept: the run's tool and argument names, the
  // common vocabulary (not when values went unread: a name of common words may be one of them),
  // words released in the partition; any other word is stored as its token.
  // A call's masked arguments: names the app vouches for, and shapes whose letter parts are format.
  const maskedOf = new Map<PendingCall, MaskedArg[]>();
  for (const call of calls) {
    const trusted = (name: string): boolean => isTool(call.tool) && trust.isArgName(call.tool, name);
    maskedOf.set(call, maskedArgs(argsOf.get(call) ?? {}, trusted));
  }
  const shapes = [...maskedOf.values()].flatMap((args) => args.map((a) => a.shape)).slice(0, MAX_NAMES);
  const allowed = keepWords ? staticAllowedWords(names.tools, [...names.args, ...shapes], masker.strict) : undefined;
  const untrustedPrints = names.untrusted.length > 0 ? valueFingerprints({ n: names.untrusted }, key, memo) : [];
  const keep = (text: string): string => (keepWords && allowed ? keepWords(text, allowed) : text);
  const masked = root.turn ? maskRequest(root.turn.text, { masker, maxLength: MAX_REQUEST_LENGTH }) : undefined;
  const request = masked !== undefined ? keep(masked) : undefined;
  // Checked on the request as the user wrote it: masking digits can hide an escaped payload.
  const requestAimed = root.turn ? findAimedAtModel(withinBudget(root.turn.text)) : undefined;
  const common = {
    partition,
    runId: root.id,
    ...(root.threadId !== undefined ? { threadId: root.threadId } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  };
  let refused = 0;
  const out: NewRecord<CallRecord>[] = [];
  const turnCalls: { tool: string; outcome: "success" | "error"; errorClass?: ErrorClass }[] = [];
  for (const call of calls) {
    const args = argsOf.get(call) ?? {};
    const errorClass = call.error ? classifyError(call.error, rules) : undefined;
    const tool = isTool(call.tool) ? call.tool : UNREGISTERED_TOOL;
    // Error text is data: stored masked, and flagged when it speaks to the model (never learned from).
    const error = call.error ? gateText(call.error.message, { kind: "stored", masker }) : undefined;
    const record: NewRecord<CallRecord> = {
      ...common,
      id: timeOrderedId(),
      ...(request !== undefined ? { request } : {}),
      tool,
      args: maskedOf.get(call) ?? [],
      fingerprints: withPrints(valueFingerprints(args, key, memo), untrustedPrints),
      outcome: call.outcome,
      ...(errorClass !== undefined ? { errorClass } : {}),
      ...(error ? { errorMessage: keep(clip(error.text, MAX_ERROR_LENGTH)) } : {}),
      ...(error?.aimed !== undefined ? { errorAimed: error.aimed } : {}),
      ...(call.latencyMs !== undefined ? { latencyMs: call.latencyMs } : {}),
      ...(call.tokens !== undefined ? { tokens: call.tokens } : {}),
      ...(call.output ? { output: keptOutput(maskToolOutput(captureToolOutput(call.output.raw), masker), keep) } : {}),
      source: call.source,
      at: call.at,
    };
    if (isStorableToolName(call.tool)) {
      if (isEvidenceCall(call)) out.push(trustBuilt(record));
      turnCalls.push({ tool, outcome: call.outcome, ...(errorClass ? { errorClass } : {}) });
    } else {
      refused += 1;
    }
  }
  if (!root.isChain || requestId === undefined || request === undefined) return { calls: out, refused };
  const servedBy = [...turnCalls].reverse().find((c) => c.outcome === "success" && isEvidenceCall(c))?.tool;
  const turn: NewRecord<TurnRecord> = {
    partition,
    ...(root.threadId !== undefined ? { threadId: root.threadId } : {}),
    requestId,
    request,
    ...(requestAimed !== undefined ? { requestAimed } : {}),
    calls: turnCalls,
    ...(servedBy !== undefined ? { servedBy } : {}),
    id: timeOrderedId(),
  };
  return { calls: out, turn: trustBuilt(turn), refused };
}

/** An output summary with its text through the free-text keeper. */
function keptOutput(summary: OutputSummary, keep: (text: string) => string): OutputSummary {
  return { ...summary, text: keep(summary.text) };
}

/** The names of a run: those the app vouches for (the allow-list's), and the others (values). */
interface RunNames {
  tools: string[];
  args: string[];
  untrusted: string[];
}

/** Names kept per run, at most, of each list. */
const MAX_NAMES = 200;

/** The tool and argument names of a run (its calls' and those the model asked for), sorted by trust. */
function namesOf(
  root: RunTrace,
  calls: readonly PendingCall[],
  argsOf: ReadonlyMap<PendingCall, Record<string, unknown>>,
  isTool: (tool: string) => boolean,
  trust: NameTrust,
): RunNames {
  const tools = new Set<string>();
  const args = new Set<string>();
  const untrusted = new Set<string>();
  const tool = (name: string): void => {
    if (isTool(name)) tools.add(name);
    else if (untrusted.size < MAX_NAMES) untrusted.add(name);
  };
  const argNames = (toolName: string, value: Record<string, unknown>): void => {
    for (const name of safeKeys(value)) {
      if (isTool(toolName) && trust.isArgName(toolName, name)) {
        if (args.size < MAX_NAMES) args.add(name);
      } else if (untrusted.size < MAX_NAMES) untrusted.add(name);
    }
  };
  for (const call of calls) {
    tool(call.tool);
    argNames(call.tool, argsOf.get(call) ?? {});
  }
  for (const requested of root.requested.values()) {
    tool(requested.name);
    if (isRecord(requested.args)) argNames(requested.name, requested.args);
  }
  return { tools: [...tools], args: [...args], untrusted: [...untrusted] };
}

/** A call's masked arguments, each name the app does not vouch for replaced by {@link UNREGISTERED_ARG}. */
function maskedArgs(args: Record<string, unknown>, trusted: (name: string) => boolean): MaskedArg[] {
  const masked = maskArgs(args);
  const names = safeKeys(args);
  return masked.map((arg, i) =>
    i < names.length && arg.name !== "…" && !trusted(names[i]) ? { ...arg, name: UNREGISTERED_ARG } : arg,
  );
}

/** A call's fingerprints with those of the run's untrusted names, sorted, each once. */
function withPrints(prints: string[], extra: readonly string[]): string[] {
  return extra.length === 0 ? prints : [...new Set([...prints, ...extra])].sort();
}

function safeKeys(value: object): string[] {
  try {
    return Object.keys(value);
  } catch {
    return [];
  }
}
