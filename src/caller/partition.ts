import { InvalidInput, PartitionUnresolved } from "../errors.js";
import { DEFAULT_PARTITION, MAX_ID_LENGTH } from "../ledger/keys.js";
import { isStorableName } from "../text/normalize.js";

/**
 * Partitions: whose traffic a record belongs to. Every ledger row lives in one partition, and
 * nothing is learned across partitions, so one tenant's (or user's) calls never shape another's
 * lessons. `docs/partitions.md` is the long form of what follows.
 *
 * ## One resolver, one order
 *
 * Every piece (the recorder, the nodes, the middleware, the router, the lesson retriever, the
 * recall tool, the manager) names the caller with {@link partitionOf}: `tenant_id`, `user_id` and
 * `agent_id` read from the app's `configurable`, then v1 `context`, then the client's `metadata`
 * (per id: the first source that has it wins), or the user's {@link PartitionSpec} (a resolver
 * function, or a namespace template such as `"t:{tenant_id}/u:{user_id}"`).
 *
 * ## Trust order
 *
 * `metadata` is what a client may send (LangGraph Platform's runs API takes it from the request);
 * `configurable` and `context` are what the app (or LangGraph's auth layer) set. So by default the
 * app's sources win: a client's `metadata.user_id` never overrides the app's `configurable.user_id`.
 * The user id is, in each source: LangGraph's authenticated user (`langgraph_auth_user_id`, or
 * `langgraph_auth_user.identity`), then `user_id`, then `langgraph_user_id` (LangMem's key).
 * {@link partitionTemplate}`({ order: "metadata-first" })` gives the other order. Every id is at most
 * {@link MAX_ID_LENGTH} characters.
 *
 * **Callbacks see only `metadata`**: LangGraph copies `thread_id` and a few of its own keys from
 * `configurable` into callback metadata, not yours, and never v1 `context`. A node resolves the
 * caller from its full config and remembers it for the thread (`ThreadCallers`, one per ledger); the
 * recorder, finding no ids in a run's metadata, files the run's records under that partition.
 *
 * ## Where it lives
 *
 * `src/caller/` sits below every stage that names a caller (record, routing, rules, serve, learn
 * and the adapters), so none of them reaches into another stage to learn who is calling. It
 * imports only `text`, the ledger's keys (`DEFAULT_PARTITION`) and the base modules.
 */

/** The parts of a partition. Only the parts present make up its key. */
export interface Partition {
  tenantId?: string;
  userId?: string;
  agentId?: string;
}

/** What a partition resolver is given. */
export interface PartitionContext {
  /** Callback metadata of the run (user metadata plus LangGraph's keys such as `thread_id`). */
  metadata: Record<string, unknown>;
  /** `configurable`, when the caller has it (nodes do; callbacks do not). */
  configurable?: Record<string, unknown>;
  /** The run being resolved, when known. */
  runId?: string;
}

/** A user function naming the partition: a ready key, or parts to build one from. */
export type PartitionResolver = (context: PartitionContext) => string | Partition | undefined;

/**
 * How a piece is told to name the caller: a {@link PartitionResolver}, or a namespace template
 * (see {@link partitionTemplate}); a string with no `{placeholder}` is one fixed partition.
 */
export type PartitionSpec = PartitionResolver | string;

/**
 * How an id becomes part of a partition key, written down because two callers must never share
 * a partition by accident:
 *
 * - only a string or a finite number is an id; a number is written in its decimal form (`42` and
 *   `"42"` are the same id);
 * - a string is kept exactly as given: no trimming, no case folding, no Unicode normalization, so
 *   two different non-blank ids always make two different keys (`"acme"`, `" acme"`, `"Acme"`
 *   and `"ａｃｍｅ"` are four partitions);
 * - an absent key (`undefined`) is no id: the part is left out;
 * - anything else present under an id key is refused with {@link InvalidInput} (never turned into
 *   `"default"`): `null`, `""` or a blank string, `NaN` or an infinite number, a boolean, a
 *   BigInt, an object or an array, a string longer than {@link MAX_ID_LENGTH} characters, and a
 *   string holding a control character or a lone UTF-16 surrogate (no store can hold one as a
 *   key). The error names the key and the kind of value, never the value.
 */
function asId(key: string, value: unknown, maxLength = MAX_ID_LENGTH): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return String(value);
    throw refused(key, "a number that is not finite");
  }
  if (typeof value !== "string") throw refused(key, value === null ? "null" : `a ${kindOf(value)}`);
  if (value.length > maxLength) throw refused(key, `a string of ${value.length} characters (at most ${maxLength})`);
  if (value.trim() === "") throw refused(key, "a blank string");
  if (!isStorableName(value)) throw refused(key, "a string with a control character or a lone UTF-16 surrogate");
  return value;
}

export { MAX_ID_LENGTH };

/**
 * The longest partition key a resolver may answer: three ids, each percent-encoded at most
 * nine characters per character (a four-byte character), with their labels.
 */
export const MAX_PARTITION_KEY_LENGTH = 3 * (MAX_ID_LENGTH * 9 + 3);

function kindOf(value: unknown): string {
  return Array.isArray(value) ? "list" : typeof value;
}

function refused(key: string, what: string): InvalidInput {
  return new InvalidInput(
    `The partition id "${key}" is ${what}; only a non-blank string or a finite number names a partition. ` +
      "The run's records are not written (no partition is guessed for them).",
    { context: { key } },
  );
}

const PART_LABELS: readonly [keyof Partition, string][] = [
  ["tenantId", "t"],
  ["userId", "u"],
  ["agentId", "a"],
];

/** Keys read for each part, in `metadata` and `configurable`. */
const PART_KEYS: Record<keyof Partition, string> = {
  tenantId: "tenant_id",
  userId: "user_id",
  agentId: "agent_id",
};

/**
 * The characters an id keeps as they are in a key: ASCII letters, digits, `.`, `_` and `-`.
 * Every other character (including `/`, `:`, `%`, `~`, spaces, and every non-ASCII one) is
 * percent-encoded as the upper-case hex of its UTF-8 bytes, so:
 *
 * - the encoding is injective (`%` itself is encoded, so `decodeURIComponent` undoes it);
 * - an encoded id is made only of {@link ID_KEY_CHAR} characters, never `/`, `:` or `~`;
 * - ids of the usual shapes (`acme`, `42`, a UUID, `erin.smith`) read the same in the key.
 */
const ID_SAFE = /^[A-Za-z0-9._-]$/;

/** A character an encoded id may hold: the safe ones and the `%` of an escape (and its hex digits). */
export const ID_KEY_CHAR = /[A-Za-z0-9._%-]/;

const UTF8 = new TextEncoder();

/**
 * An id as it is written in a partition key: every character outside `[A-Za-z0-9._-]`
 * percent-encoded (UTF-8, upper-case hex). `escapeId("acme:bob")` → `"acme%3Abob"`,
 * `escapeId("~shared")` → `"%7Eshared"`. The id must already be one (see {@link asId}).
 */
export function escapeId(id: string): string {
  let out = "";
  for (const ch of id) {
    if (ID_SAFE.test(ch)) out += ch;
    else for (const byte of UTF8.encode(ch)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * The first character of every scope name the package reserves for itself (the shared scope
 * `~shared`, and any it adds later). No caller's partition can start with it: an encoded id
 * never holds it, a template may not start with it, and a resolver may not answer one.
 */
export const RESERVED_SCOPE_PREFIX = "~";

/**
 * Whether a partition key is a scope the package reserves: `"default"` (where a run that names
 * no caller goes, and where routing falls back) or any name starting with `~` (the shared scope).
 * No caller's id can produce one (see {@link partitionTemplate}).
 */
export function isReservedPartition(key: string): boolean {
  return key === DEFAULT_PARTITION || key.startsWith(RESERVED_SCOPE_PREFIX);
}

function reservedAnswer(key: string, from: string): InvalidInput {
  return new InvalidInput(
    `The partition ${from} named "${key}", a scope the package reserves ("${DEFAULT_PARTITION}" or a name starting with ` +
      `"${RESERVED_SCOPE_PREFIX}"); no caller is put there. The run's records are not written.`,
    { context: { from } },
  );
}

/**
 * The partition's key: `"default"` when no part is present, else the present parts in a fixed
 * order, e.g. `{ tenantId: "acme", userId: "42", agentId: "desk" }` → `"t:acme/u:42/a:desk"`,
 * `{ userId: "42" }` → `"u:42"`.
 */
export function partitionKey(partition: Partition = {}): string {
  const parts: string[] = [];
  for (const [field, label] of PART_LABELS) {
    const value = asId(PART_KEYS[field], partition[field]);
    if (value !== undefined) parts.push(`${label}:${escapeId(value)}`);
  }
  return parts.length === 0 ? DEFAULT_PARTITION : parts.join("/");
}

/**
 * Where each id is read first: the app's sources (`configurable`, then v1 `context`) before the
 * client's `metadata` (`"app-first"`, the default), or the other way round (`"metadata-first"`).
 */
export type CallerOrder = "app-first" | "metadata-first";

/** The default {@link CallerOrder}. */
export const DEFAULT_CALLER_ORDER: CallerOrder = "app-first";

/** The keys that name the user, in the order read within one source. */
const USER_KEYS = ["langgraph_auth_user_id", "user_id", "langgraph_user_id"] as const;

/**
 * The user an auth layer named: LangGraph's `langgraph_auth_user.identity` (an object, so read
 * apart from the plain ids), as an id read under the key `langgraph_auth_user`.
 */
function authIdentity(source: Record<string, unknown> | undefined): string | undefined {
  const user = source?.langgraph_auth_user;
  if (user === undefined || user === null || typeof user !== "object") return undefined;
  return asId("langgraph_auth_user.identity", (user as { identity?: unknown }).identity);
}

/** One id of a source: the user under any of its keys, any other id under its own key. */
function idIn(source: Record<string, unknown> | undefined, key: string): string | undefined {
  if (source === undefined) return undefined;
  if (key !== PART_KEYS.userId) return asId(key, source[key]);
  const auth = asId(USER_KEYS[0], source[USER_KEYS[0]]) ?? authIdentity(source);
  if (auth !== undefined) return auth;
  for (const name of USER_KEYS.slice(1)) {
    const id = asId(name, source[name]);
    if (id !== undefined) return id;
  }
  return undefined;
}

/** Reads ids from `app` (configurable over context) and `metadata` in `order`: the first that has one wins. */
function readId(
  metadata: Record<string, unknown> | undefined,
  app: Record<string, unknown> | undefined,
  order: CallerOrder,
): (key: string) => string | undefined {
  const sources = order === "metadata-first" ? [metadata, app] : [app, metadata];
  return (key) => {
    for (const source of sources) {
      const id = idIn(source, key);
      if (id !== undefined) return id;
    }
    return undefined;
  };
}

/** A resolver that carries the order its ids are read in ({@link callerIds}). */
export interface OrderedResolver extends PartitionResolver {
  readonly callerOrder: CallerOrder;
}

/** Options of {@link callerIds}. */
export interface CallerIdsOptions {
  /**
   * Which source's ids win: the app's `configurable` / `context` (and LangGraph's authenticated
   * user) over the client's `metadata`, or the client's `metadata` first (only for an app whose
   * clients are its own code: LangGraph Platform's runs API takes `metadata` from the request).
   * @default "app-first"
   */
  order?: CallerOrder;
  /** A namespace template (see {@link partitionTemplate}) filled in that order; else the ids' key. */
  template?: string;
}

/**
 * The partition spec that reads the caller's ids in a given order (behind {@link partitionTemplate},
 * which every piece's `partition` option takes: `partitionTemplate({ order: "metadata-first" })`).
 * Without options it is the default resolution.
 * @throws InvalidInput for a malformed template
 */
export function callerIds(options: CallerIdsOptions = {}): OrderedResolver {
  const order = options.order ?? DEFAULT_CALLER_ORDER;
  if (order !== "app-first" && order !== "metadata-first") {
    throw new InvalidInput('partitionTemplate: order is "app-first" or "metadata-first".', {
      context: { field: "order" },
    });
  }
  const template = options.template === undefined ? undefined : templateResolver(options.template, order);
  const resolver = (context: PartitionContext): string | Partition | undefined => {
    if (template) return template(context);
    const ids = idsOf(context.metadata, context.configurable, order);
    // No id: no answer, so the caller counts as naming none (never a named "default").
    return Object.keys(ids).length > 0 ? ids : undefined;
  };
  return Object.assign(resolver, { callerOrder: order });
}

/** The order a spec reads ids in: its own ({@link callerIds}), else the default. */
export function orderOf(spec: PartitionSpec | undefined): CallerOrder {
  return typeof spec === "function" && (spec as Partial<OrderedResolver>).callerOrder === "metadata-first"
    ? "metadata-first"
    : DEFAULT_CALLER_ORDER;
}

/** The ids a run carries, read in `order`, as the parts of a partition. */
function idsOf(
  metadata: Record<string, unknown>,
  app: Record<string, unknown> | undefined,
  order: CallerOrder,
): Partition {
  const read = readId(metadata, app, order);
  const partition: Partition = {};
  for (const [field, key] of Object.entries(PART_KEYS) as [keyof Partition, string][]) {
    const value = read(key);
    if (value !== undefined) partition[field] = value;
  }
  return partition;
}

/** Where a resolved partition came from: the user's resolver or template, the ids, or nothing (`"default"`). */
export type PartitionSource = "resolver" | "ids" | "none";

/** A resolved partition and where it came from. */
export interface ResolvedCaller {
  partition: string;
  from: PartitionSource;
}

/**
 * {@link resolvePartition}, saying where the answer came from: `"none"` when no resolver answered
 * and no id was found (the partition is then `"default"`). The recorder uses it to tell a run that
 * named its caller from one that did not.
 * @throws InvalidInput as {@link resolvePartition} does; {@link PartitionUnresolved} when a
 * template names an id the run does not carry.
 */
export function resolveCaller(
  metadata: Record<string, unknown> = {},
  configurable?: Record<string, unknown>,
  spec?: PartitionSpec,
): ResolvedCaller {
  const resolver = toResolver(spec);
  if (resolver) {
    const answer = resolver({ metadata, ...(configurable ? { configurable } : {}) });
    if (typeof answer === "string") {
      const key = asId("resolver", answer, MAX_PARTITION_KEY_LENGTH) as string;
      // A template checked its own key (a fixed one may be "default"); a function may not name a reserved scope.
      if (typeof spec !== "string" && isReservedPartition(key)) throw reservedAnswer(key, "resolver");
      return { partition: key, from: "resolver" };
    }
    if (answer && typeof answer === "object") return { partition: partitionKey(answer), from: "resolver" };
  }
  const partition = idsOf(metadata, configurable, orderOf(spec));
  return { partition: partitionKey(partition), from: Object.keys(partition).length > 0 ? "ids" : "none" };
}

/**
 * The partition key of a run. With a resolver, its answer wins (a string is used as the key
 * as is; parts are turned into one with {@link partitionKey}; `undefined` falls back to the
 * ids); a template string fills its placeholders ({@link partitionTemplate}). Without one,
 * `tenant_id`, `user_id` and `agent_id` are read from `configurable`, then from `metadata` (see
 * "Trust order" above). Nothing found gives `"default"`.
 * @throws InvalidInput when an id key holds something that is not an id (see {@link asId}), or a
 * resolver answers a blank string: the caller is refused, never put in `"default"`.
 */
export function resolvePartition(
  metadata: Record<string, unknown> = {},
  configurable?: Record<string, unknown>,
  resolver?: PartitionSpec,
): string {
  return resolveCaller(metadata, configurable, resolver).partition;
}

/** A template placeholder: `{name}`, the name a key of metadata / configurable / context. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Why a template is refused, or `undefined` for a good one. Literal text between two placeholders
 * must hold a character no encoded id can hold (anything but `[A-Za-z0-9._%-]`, e.g. `:` or `/`):
 * that character marks where one id ends, so two different tuples of ids can never fill the
 * template to the same key. (Parse a key left to right: after the fixed prefix, the first
 * character outside the id alphabet is the first such character of the next literal, whose
 * length is known, so the id before it is fixed; the last id ends where the fixed suffix begins.
 * `escapeId` is injective, so equal ids-as-written are equal ids.) The literal text may not
 * start with `~` (the package's reserved scopes).
 */
function templateFlaw(template: string): string | undefined {
  const literal = template.replace(PLACEHOLDER, "");
  if (template.trim() === "" || /[{}]/.test(literal) || !isStorableName(literal)) {
    return 'write ids as {key} (letters, digits, _), with no other braces and no control characters, e.g. "t:{tenant_id}/u:{user_id}"';
  }
  if (template.startsWith(RESERVED_SCOPE_PREFIX)) {
    return `it starts with "${RESERVED_SCOPE_PREFIX}", which marks the package's reserved scopes (the shared scope)`;
  }
  const between = template.split(PLACEHOLDER_SPLIT).slice(1, -1);
  // split with one capture group alternates literal, key, literal …: the literals are the even entries.
  const inner = between.filter((_, i) => i % 2 === 1);
  if (inner.some((text) => [...text].every((ch) => ID_KEY_CHAR.test(ch)))) {
    return (
      "two ids are separated only by characters an id may hold (letters, digits, . _ - %), so two different " +
      'callers could fill it to one key; separate them with ":" or "/", e.g. "{tenant_id}:{user_id}"'
    );
  }
  return undefined;
}

const PLACEHOLDER_SPLIT = /\{([A-Za-z_][A-Za-z0-9_]*)\}/;

/**
 * A namespace template as a resolver, like LangMem's `("memories", "{langgraph_user_id}")`:
 * `partitionTemplate("t:{tenant_id}/u:{user_id}")` names the partition `t:acme/u:42` for a run
 * carrying `tenant_id: "acme"` and `user_id: 42` (the same key {@link partitionKey} builds from
 * those ids). Each `{key}` is read like the ids (`metadata`, then `configurable`, then v1
 * `context`), must be an id by the same rules (a non-blank string or a finite number, see
 * {@link asId}) and is written with {@link escapeId} (every character outside
 * `[A-Za-z0-9._-]` percent-encoded), so a value cannot forge another part. Any key may be named
 * (`{org}`, `{langgraph_user_id}`).
 *
 * No two different tuples of ids fill one template to the same key, and no caller fills it to a
 * reserved scope ({@link isReservedPartition}): templates whose ids are separated only by
 * characters an id may hold (`{a}{b}`, `{a}.{b}`, `{a}-{b}`) are refused, and a filled key that
 * is `"default"` (a template `{user_id}` and a user id `default`) refuses that caller.
 *
 * `options.order` reads the keys in the other trust order (`"metadata-first"`, see "Trust order"
 * above); `partitionTemplate({ order: "metadata-first" })`, with no template, reads the plain ids
 * in that order. Give the same spec to every piece.
 * @throws InvalidInput at once for a malformed template (a stray `{` or `}`, a blank one, a
 * control character, ids not separated, a leading `~`) or an unknown order; {@link PartitionUnresolved} at
 * resolution when the run lacks a named key; `InvalidInput` when the filled key is reserved.
 */
export function partitionTemplate(
  template: string | CallerIdsOptions,
  options: Pick<CallerIdsOptions, "order"> = {},
): OrderedResolver {
  return typeof template === "string" ? callerIds({ ...options, template }) : callerIds(template);
}

/** A template's resolver, reading its keys in `order` (see {@link partitionTemplate}). */
function templateResolver(template: string, order: CallerOrder): PartitionResolver {
  const flaw = templateFlaw(template);
  if (flaw !== undefined) {
    throw new InvalidInput(`The partition template "${template}" is refused: ${flaw}.`, { context: { template } });
  }
  const hasPlaceholder = PLACEHOLDER_SPLIT.test(template);
  return ({ metadata, configurable }) => {
    const key = template.replace(PLACEHOLDER, (_, name: string) => {
      const value = readId(metadata, configurable, order)(name);
      if (value === undefined) {
        throw new PartitionUnresolved(
          `The partition template "${template}" needs "${name}", which this run does not carry in its metadata, ` +
            `configurable or context. Pass it on invoke (e.g. metadata: { ${name}: ... }), or change the template. ` +
            "No partition is guessed for the run.",
          { context: { key: name, template } },
        );
      }
      return escapeId(value);
    });
    if (hasPlaceholder && isReservedPartition(key)) throw reservedAnswer(key, `template "${template}"`);
    return key;
  };
}

/** A {@link PartitionSpec} as a resolver: a template string compiled, a function as is. */
export function toResolver(spec: PartitionSpec | undefined): PartitionResolver | undefined {
  return typeof spec === "string" ? partitionTemplate(spec) : spec;
}

/** Where a run carries the caller's ids: the parts of a `RunnableConfig` the resolver reads. */
export interface CallerSources {
  metadata?: Record<string, unknown>;
  configurable?: Record<string, unknown>;
  /** LangGraph / langchain v1 runtime context (`invoke(input, { context })`). */
  context?: Record<string, unknown>;
}

/**
 * The one way every piece names the caller's partition from a run's config: `configurable`
 * first, then v1 `context`, then `metadata` (or the order of a {@link callerIds} spec; with a
 * resolver or template, its answer first; see {@link resolvePartition}).
 * @throws InvalidInput when an id is not one (see {@link resolvePartition});
 * {@link PartitionUnresolved} when a template names an id the run does not carry.
 */
export function partitionOf(config: CallerSources | undefined, resolver?: PartitionSpec): string {
  return callerOf(config, resolver).partition;
}

/** {@link partitionOf}, saying where the answer came from (see {@link resolveCaller}). */
export function callerOf(config: CallerSources | undefined, resolver?: PartitionSpec): ResolvedCaller {
  return resolveCaller(config?.metadata ?? {}, laterSources(config), resolver);
}

/** `configurable` over v1 `context`: where ids are read after `metadata`. */
function laterSources(config: CallerSources | undefined): Record<string, unknown> | undefined {
  const configurable = config?.configurable;
  const context = config?.context;
  return context || configurable ? { ...(context ?? {}), ...(configurable ?? {}) } : undefined;
}

/**
 * Who the caller is, within a partition several callers may share (a template or resolver that
 * groups them, e.g. `"t:{tenant_id}"`): the key of the `tenant_id` and user id the run carries,
 * read the one way every piece reads ids (the spec's order: by default `configurable`, then v1
 * `context`, then `metadata`; the user is LangGraph's authenticated user, `user_id` or
 * `langgraph_user_id`; written as {@link partitionKey} writes them, so `42` and `"42"` are one
 * caller), e.g. `"t:acme/u:42"`. Undefined when the run names no user or an id is not one: no
 * known caller. Word releases tell callers apart by it (`record/word-releases.ts`).
 */
export function callerIdOf(config: CallerSources | undefined, spec?: PartitionSpec): string | undefined {
  try {
    const read = readId(config?.metadata, laterSources(config), orderOf(spec));
    const userId = read(PART_KEYS.userId);
    return userId === undefined ? undefined : partitionKey({ tenantId: read(PART_KEYS.tenantId), userId });
  } catch (error) {
    if (error instanceof InvalidInput) return undefined;
    throw error;
  }
}
