import { randomBytes } from "node:crypto";
import type { BaseStore, Item, Operation } from "@langchain/langgraph";
import type { z } from "zod";
import { InvalidInput, NotFound, RevisionConflict, StoreUnavailable } from "../errors.js";
import { DEFAULT_SETTINGS, parseSettings, type Settings, type SettingsInput } from "../settings.js";
import { type Collection, DEFAULT_NAMESPACE_ROOT, decodeLabel, namespaceFor, timeOrderedId } from "./keys.js";
import {
  CallRecordSchema,
  ErrorClassSchema,
  type CallRecord,
  type NewRecord,
  RevisionSchema,
  type Revision,
  type RevisionStatus,
  RouteRecordSchema,
  type RouteRecord,
  RuleSchema,
  type Rule,
  SCHEMA_VERSION,
  ToolCardSchema,
  type ToolCard,
  TurnRecordSchema,
  type TurnRecord,
} from "./schema.js";
import { byId, sortById } from "../internal.js";

/** Receives the ledger's warnings (a skipped row, a failed prune). Never thrown. */
export type WarningSink = (message: string, context?: Record<string, unknown>) => void;

/** Options of {@link Ledger}. */
export interface LedgerOptions {
  /**
   * First namespace label of every row, so the ledger can share a store with other data.
   * @default "tool-lessons"
   */
  namespaceRoot?: string;
  /**
   * Where warnings go (rows that do not parse, failed prunes).
   * @default console.warn with a "[tool-lessons]" prefix
   */
  onWarning?: WarningSink;
  /**
   * Most rows asked of the store in one request when listing a namespace. A namespace with
   * more is read in pages by `offset`, which is only consistent while nothing writes to it
   * (a prune or an update between two pages shifts rows past the boundary) and when the store
   * orders results stably; so the default reads any retained namespace in one request.
   * @default 1_000_000
   */
  pageSize?: number;
  /**
   * Whether {@link Ledger.close} also stops the store (`store.stop()`: closes the SQLite file
   * or ends the Postgres pool). `openLedger` sets it for a store it opened itself; a store you
   * pass in stays yours to close, since your graph may still be using it.
   * @default false
   */
  ownsStore?: boolean;
}

/**
 * Namespace label of ledger-wide rows. Not a partition: in an encoded label every "~" is
 * followed by two hex digits (see `encodeLabel`). Every store accepts it (`PostgresStore`
 * refuses "_" in labels).
 */
const META_LABEL = "~meta";

/**
 * How long a process that proposed the first fingerprint key waits for other processes'
 * proposals still being written before choosing among them. Longer than any store write.
 */
const KEY_SETTLE_MS = 250;

const DEFAULT_LEDGER_OPTIONS = {
  namespaceRoot: DEFAULT_NAMESPACE_ROOT,
  onWarning: ((message, context) => console.warn(`[tool-lessons] ${message}`, context ?? "")) as WarningSink,
  pageSize: 1_000_000,
  ownsStore: false,
} satisfies Required<LedgerOptions>;

/** Filters for listing append-only records. Results are oldest first. */
export interface ListOptions {
  /** Only records whose id sorts after this one (ids are time-ordered). */
  after?: string;
  /** Keep only the newest `limit` records (still returned oldest first). */
  limit?: number;
}

/** What a rule upsert takes: `id` and timestamps are optional. */
export type RuleInput = Omit<Rule, "v" | "id" | "partition" | "createdAt" | "updatedAt" | "tags"> & {
  id?: string;
  tags?: string[];
};

/**
 * The package's durable truth, written through any LangGraph `BaseStore`: the one the user's
 * graph already has (`InMemoryStore`, our `SqliteStore`, `PostgresStore`).
 *
 * Call, turn and route records are append-only with time-ordered keys: no read-modify-write,
 * so concurrent writers in many processes never lose a record. Every method takes the
 * partition explicitly; only {@link Ledger.listPartitions} looks across partitions (operator scope).
 */
export class Ledger {
  readonly store: BaseStore;
  private readonly root: string;
  private readonly warn: WarningSink;
  private readonly pageSize: number;
  private readonly ownsStore: boolean;
  private closed = false;
  private readonly sinceCallPrune = new Map<string, number>();
  private readonly sinceTurnPrune = new Map<string, number>();
  private readonly settingsCache = new Map<string, Settings>();
  private keyPromise: Promise<string> | undefined;
  /** Rows skipped because they did not parse, since this ledger was made. */
  skippedRows = 0;

  constructor(store: BaseStore, options: LedgerOptions = {}) {
    this.store = store;
    this.root = options.namespaceRoot ?? DEFAULT_LEDGER_OPTIONS.namespaceRoot;
    this.warn = options.onWarning ?? DEFAULT_LEDGER_OPTIONS.onWarning;
    this.pageSize = options.pageSize ?? DEFAULT_LEDGER_OPTIONS.pageSize;
    this.ownsStore = options.ownsStore ?? DEFAULT_LEDGER_OPTIONS.ownsStore;
  }

  /**
   * Release what this ledger opened: stops the store when the ledger owns it (see
   * {@link LedgerOptions.ownsStore}), otherwise does nothing. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsStore) await this.store.stop();
  }

  // ---------------------------------------------------------------- records

  /** Append call records (one batch). Ids and timestamps are assigned when absent. */
  async appendCalls(records: NewRecord<CallRecord>[]): Promise<CallRecord[]> {
    if (records.length === 0) return [];
    const rows = records.map((r) => this.stamp(CallRecordSchema, r));
    await this.store.batch(rows.map((row) => this.putOp(row.partition, "calls", row.id, row, row.tool)));
    const touched = new Map<string, { partition: string; tool: string; n: number }>();
    for (const row of rows) {
      const key = `${row.partition}\u0000${row.tool}`;
      const t = touched.get(key) ?? { partition: row.partition, tool: row.tool, n: 0 };
      t.n += 1;
      touched.set(key, t);
    }
    for (const [key, t] of touched) {
      const since = (this.sinceCallPrune.get(key) ?? 0) + t.n;
      const settings = await this.getSettings(t.partition);
      if (since >= Math.max(10, Math.ceil(settings.retainCallsPerTool / 4))) {
        this.sinceCallPrune.set(key, 0);
        await this.pruneCalls(t.partition, t.tool, settings.retainCallsPerTool);
      } else {
        this.sinceCallPrune.set(key, since);
      }
    }
    return rows;
  }

  /** Append turn records: what a run did for one request. */
  async appendTurns(records: NewRecord<TurnRecord>[]): Promise<TurnRecord[]> {
    return this.appendRequestRows(TurnRecordSchema, "turns", records);
  }

  /** Append route records: what routing offered for one request. */
  async appendRoutes(records: NewRecord<RouteRecord>[]): Promise<RouteRecord[]> {
    return this.appendRequestRows(RouteRecordSchema, "routes", records);
  }

  /** Call records of one tool (or of every tool), oldest first. */
  async listCalls(partition: string, options: ListOptions & { tool?: string } = {}): Promise<CallRecord[]> {
    // One search for every tool (a store scans per search): keep the rows one level below.
    const items =
      options.tool !== undefined
        ? await this.listNamespace(namespaceFor(this.root, partition, "calls", options.tool))
        : await this.listNamespace(namespaceFor(this.root, partition, "calls"), 1);
    return newest(sortById(this.parseItems(CallRecordSchema, items, options.after, looksLikeCall)), options.limit);
  }

  /** Tools that have call records in a partition. */
  async listCalledTools(partition: string): Promise<string[]> {
    const prefix = namespaceFor(this.root, partition, "calls");
    const namespaces = await this.listAllNamespaces(prefix);
    const tools = new Set<string>();
    for (const ns of namespaces) {
      if (ns.length === prefix.length + 1 && prefix.every((label, i) => ns[i] === label)) {
        tools.add(decodeLabel(ns[prefix.length]));
      }
    }
    return [...tools].sort();
  }

  /** Turn records, oldest first. */
  async listTurns(partition: string, options: ListOptions = {}): Promise<TurnRecord[]> {
    const items = await this.listNamespace(namespaceFor(this.root, partition, "turns"));
    return newest(sortById(this.parseItems(TurnRecordSchema, items, options.after, looksLikeTurn)), options.limit);
  }

  /** Route records, oldest first. */
  async listRoutes(partition: string, options: ListOptions = {}): Promise<RouteRecord[]> {
    const items = await this.listNamespace(namespaceFor(this.root, partition, "routes"));
    return newest(sortById(this.parseItems(RouteRecordSchema, items, options.after, looksLikeRoute)), options.limit);
  }

  // ---------------------------------------------------------------- cards

  async getCard(partition: string, tool: string): Promise<ToolCard | null> {
    return (await this.getCards(partition, [tool]))[0] ?? null;
  }

  /** The cards of these tools in one store batch, in the order asked; a tool with no card is left out. */
  async getCards(partition: string, tools: readonly string[]): Promise<ToolCard[]> {
    if (tools.length === 0) return [];
    const namespace = namespaceFor(this.root, partition, "cards");
    const items = await this.store.batch(tools.map((key) => ({ namespace, key })));
    return this.parseItems(
      ToolCardSchema,
      items.filter((item): item is Item => item !== null),
    );
  }

  /** Every card of a partition, by name. */
  async listCards(partition: string): Promise<ToolCard[]> {
    const items = await this.listNamespace(namespaceFor(this.root, partition, "cards"));
    return this.parseItems(ToolCardSchema, items).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Write a card, bumping its version. With `expectVersion`, refuses when the stored card has
   * moved on (another writer got there first).
   * @throws RevisionConflict
   */
  async putCard(card: ToolCard, options: { expectVersion?: number } = {}): Promise<ToolCard> {
    const [saved] = await this.commit(card.partition, { cards: [card], expectVersion: options.expectVersion });
    return saved;
  }

  // ---------------------------------------------------------------- revisions

  async getRevision(partition: string, id: string): Promise<Revision | null> {
    const item = await this.store.get(namespaceFor(this.root, partition, "revisions"), id);
    return item ? this.parseItem(RevisionSchema, item) : null;
  }

  /** @throws NotFound */
  async requireRevision(partition: string, id: string): Promise<Revision> {
    const revision = await this.getRevision(partition, id);
    if (!revision) {
      throw new NotFound(`No revision "${id}" in partition "${partition}".`, { context: { id, partition } });
    }
    return revision;
  }

  /** Revisions, newest first, optionally of one tool and/or one status. */
  async listRevisions(
    partition: string,
    options: { tool?: string; status?: RevisionStatus } = {},
  ): Promise<Revision[]> {
    const items = await this.listNamespace(namespaceFor(this.root, partition, "revisions"));
    return this.parseItems(RevisionSchema, items)
      .filter(
        (r) =>
          (options.tool === undefined || r.tool === options.tool) &&
          (options.status === undefined || r.status === options.status),
      )
      .sort((a, b) => byId(b, a));
  }

  async putRevision(revision: Revision): Promise<void> {
    await this.commit(revision.partition, { revisions: [revision] });
  }

  /**
   * Write cards and revisions of one partition in one store batch (one transaction on SQLite
   * and Postgres): a crash leaves the old state or the new, never a mix. Cards get their version
   * bumped; the saved cards are returned.
   * @throws RevisionConflict when `expectVersion` is given and the (single) card moved on.
   */
  async commit(
    partition: string,
    change: { cards?: ToolCard[]; revisions?: Revision[]; expectVersion?: number },
  ): Promise<ToolCard[]> {
    const now = Date.now();
    const cards = change.cards ?? [];
    const saved: ToolCard[] = [];
    for (const card of cards) {
      if (card.partition !== partition) {
        throw new InvalidInput(`Card "${card.name}" belongs to partition "${card.partition}", not "${partition}".`);
      }
      const current = await this.getCard(partition, card.name);
      if (change.expectVersion !== undefined && (current?.version ?? 0) !== change.expectVersion) {
        throw new RevisionConflict(
          `Card "${card.name}" is at version ${current?.version ?? 0}, expected ${change.expectVersion}: it was changed since.`,
          { context: { tool: card.name, partition } },
        );
      }
      saved.push(
        ToolCardSchema.parse({
          ...card,
          v: SCHEMA_VERSION,
          version: (current?.version ?? 0) + 1,
          createdAt: current?.createdAt ?? card.createdAt ?? now,
          updatedAt: now,
        }),
      );
    }
    const revisions = (change.revisions ?? []).map((r) => RevisionSchema.parse({ ...r, v: SCHEMA_VERSION }));
    const ops: Operation[] = [
      ...saved.map((c) => this.putOp(partition, "cards", c.name, c)),
      ...revisions.map((r) => this.putOp(partition, "revisions", r.id, r)),
    ];
    if (ops.length > 0) await this.store.batch(ops);
    return saved;
  }

  // ---------------------------------------------------------------- rules

  /**
   * Insert or update a tool-scoped rule. An update keeps `createdAt`.
   * @throws InvalidInput for a blank tool or blank text.
   */
  async putRule(partition: string, input: RuleInput): Promise<Rule> {
    if (!input.tool || !input.tool.trim()) throw new InvalidInput("A rule needs a tool name; got a blank one.");
    if (!input.rule || !input.rule.trim())
      throw new InvalidInput(`A rule for "${input.tool}" needs text; got a blank one.`);
    const now = Date.now();
    const id = input.id ?? timeOrderedId(now);
    const existing = await this.getRule(partition, id);
    const rule = RuleSchema.parse({
      ...input,
      v: SCHEMA_VERSION,
      id,
      partition,
      tags: input.tags ?? existing?.tags ?? [],
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    });
    await this.store.put(namespaceFor(this.root, partition, "rules"), id, rule);
    return rule;
  }

  async getRule(partition: string, id: string): Promise<Rule | null> {
    const item = await this.store.get(namespaceFor(this.root, partition, "rules"), id);
    return item ? this.parseItem(RuleSchema, item) : null;
  }

  /** Rules of a partition (optionally one tool); corrupt rows are skipped, never thrown. */
  async listRules(partition: string, options: { tool?: string } = {}): Promise<Rule[]> {
    const items = await this.listNamespace(namespaceFor(this.root, partition, "rules"));
    return this.parseItems(RuleSchema, items)
      .filter((r) => options.tool === undefined || r.tool === options.tool)
      .sort(byId);
  }

  async deleteRule(partition: string, id: string): Promise<boolean> {
    const ns = namespaceFor(this.root, partition, "rules");
    const existed = (await this.store.get(ns, id)) !== null;
    if (existed) await this.store.delete(ns, id);
    return existed;
  }

  // ---------------------------------------------------------------- settings

  /** The partition's stored settings over the defaults. A corrupt row gives the defaults. */
  async getSettings(partition: string): Promise<Settings> {
    const cached = this.settingsCache.get(partition);
    if (cached) return cached;
    const item = await this.store.get(namespaceFor(this.root, partition, "settings"), "current");
    let settings = DEFAULT_SETTINGS;
    if (item) {
      try {
        settings = parseSettings(item.value);
      } catch (error) {
        this.skippedRows += 1;
        this.warn("Stored settings do not parse; using the defaults.", { partition, error: String(error) });
      }
    }
    this.settingsCache.set(partition, settings);
    return settings;
  }

  /**
   * Store settings for a partition (merged over what is stored).
   * @throws InvalidInput naming each bad field.
   */
  async configure(partition: string, input: SettingsInput): Promise<Settings> {
    const settings = parseSettings(input, await this.getSettings(partition));
    await this.store.put(namespaceFor(this.root, partition, "settings"), "current", settings);
    this.settingsCache.set(partition, settings);
    return settings;
  }

  // ---------------------------------------------------------------- review watermarks

  /**
   * Newest record id each tool's last review read. Kept apart from the cards: marking a tool
   * reviewed must not bump the card's version (undo compares versions).
   */
  async reviewMarks(partition: string): Promise<Map<string, string>> {
    const items = await this.listNamespace(namespaceFor(this.root, partition, "reviews"));
    const marks = new Map<string, string>();
    for (const item of items) if (typeof item.value.through === "string") marks.set(item.key, item.value.through);
    return marks;
  }

  /** Record that a tool's review read everything up to `through`. */
  async markReviewed(partition: string, marks: ReadonlyMap<string, string>): Promise<void> {
    if (marks.size === 0) return;
    const ns = namespaceFor(this.root, partition, "reviews");
    await this.store.batch(
      [...marks].map(([tool, through]) => ({ namespace: ns, key: tool, value: { through }, index: false as const })),
    );
  }

  // ---------------------------------------------------------------- secrets

  /**
   * The key of the keyed hashes (fingerprints) of argument values. Made once per ledger and
   * stored in it, so every process that records or vets against this ledger agrees on it.
   * A fingerprint tells whether a text contains a value; it cannot be turned back into one.
   *
   * `BaseStore` has no compare-and-set, so the first key is agreed on without one: each process
   * that finds no key writes a candidate under its own row, waits {@link KEY_SETTLE_MS} for
   * candidates still in flight, and every process adopts the same one (earliest `createdAt`,
   * then smallest row key), which is then stored as the ledger's key. Only the first use of a
   * ledger pays the wait.
   */
  async fingerprintKey(): Promise<string> {
    this.keyPromise ??= this.loadFingerprintKey().catch((error: unknown) => {
      this.keyPromise = undefined;
      throw error;
    });
    return this.keyPromise;
  }

  private async loadFingerprintKey(): Promise<string> {
    const ns = [this.root, META_LABEL];
    const stored = keyOf(await this.store.get(ns, "fingerprint-key"));
    if (stored) return stored;

    const candidates = [this.root, META_LABEL, "fingerprint-key-candidates"];
    await this.store.put(candidates, timeOrderedId(), { key: randomBytes(32).toString("hex") }, false);
    await new Promise((resolve) => setTimeout(resolve, KEY_SETTLE_MS));
    // A process that settled before this one wrote its candidate already stored the winner.
    const settled = keyOf(await this.store.get(ns, "fingerprint-key"));
    if (settled) return settled;
    const winner = (await this.listNamespace(candidates))
      .filter((item) => keyOf(item) !== undefined)
      .sort((a, b) => time(a.createdAt) - time(b.createdAt) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))[0];
    const key = keyOf(winner);
    if (!key) throw new StoreUnavailable("The ledger's fingerprint key could not be read back from the store.");
    await this.store.put(ns, "fingerprint-key", { key }, false);
    return key;
  }

  // ---------------------------------------------------------------- operator scope

  /** Every partition with any row. Operator scope: the only cross-partition read. */
  async listPartitions(): Promise<string[]> {
    const namespaces = await this.listAllNamespaces([this.root]);
    const partitions = new Set<string>();
    for (const ns of namespaces) {
      if (ns[0] === this.root && ns.length > 1 && ns[1] !== META_LABEL) partitions.add(decodeLabel(ns[1]));
    }
    return [...partitions].sort();
  }

  /** Delete call records of one tool beyond the newest `keep`. */
  async pruneCalls(partition: string, tool: string, keep: number): Promise<number> {
    const ns = namespaceFor(this.root, partition, "calls", tool);
    return this.pruneNamespace(ns, keep);
  }

  // ---------------------------------------------------------------- internals

  private async appendRequestRows<T extends TurnRecord | RouteRecord>(
    schema: z.ZodType<T>,
    collection: "turns" | "routes",
    records: NewRecord<T>[],
  ): Promise<T[]> {
    if (records.length === 0) return [];
    const rows = records.map((r) => this.stamp(schema, r));
    await this.store.batch(rows.map((row) => this.putOp(row.partition, collection, row.id, row)));
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.partition, (counts.get(row.partition) ?? 0) + 1);
    for (const [partition, n] of counts) {
      const key = `${partition}\u0000${collection}`;
      const since = (this.sinceTurnPrune.get(key) ?? 0) + n;
      const settings = await this.getSettings(partition);
      if (since >= Math.max(100, Math.ceil(settings.retainTurns / 10))) {
        this.sinceTurnPrune.set(key, 0);
        await this.pruneNamespace(namespaceFor(this.root, partition, collection), settings.retainTurns);
      } else {
        this.sinceTurnPrune.set(key, since);
      }
    }
    return rows;
  }

  private stamp<T extends { partition: string; id: string; at: number }>(
    schema: z.ZodType<T>,
    input: object & { id?: string; at?: number },
  ): T {
    const at = input.at ?? Date.now();
    const parsed = schema.safeParse({ ...input, v: SCHEMA_VERSION, id: input.id ?? timeOrderedId(at), at });
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      throw new InvalidInput(`Refused a ledger record that does not match its schema: ${issues}`);
    }
    if (!parsed.data.partition) throw new InvalidInput("A ledger record needs a non-empty partition.");
    return parsed.data;
  }

  private putOp(partition: string, collection: Collection, key: string, value: object, tool?: string): Operation {
    return {
      namespace: namespaceFor(this.root, partition, collection, tool),
      key,
      value: value as Record<string, unknown>,
      index: false,
    };
  }

  private async pruneNamespace(ns: string[], keep: number): Promise<number> {
    try {
      const items = await this.listNamespace(ns);
      if (items.length <= keep) return 0;
      const keys = items.map((i) => i.key).sort();
      const doomed = keys.slice(0, keys.length - keep);
      await this.store.batch(doomed.map((key) => ({ namespace: ns, key, value: null })));
      return doomed.length;
    } catch (error) {
      this.warn("Pruning old records failed; they will be pruned later.", {
        namespace: ns.join("/"),
        error: String(error),
      });
      return 0;
    }
  }

  /**
   * Every item of exactly this namespace. Stores differ (InMemoryStore and PostgresStore match
   * prefixes as strings, so ["calls","a"] also finds ["calls","ab"]): keep exact matches only.
   */
  private async listNamespace(ns: string[], depthBelow = 0): Promise<Item[]> {
    const depth = ns.length + depthBelow;
    const inside = (item: Item): boolean => {
      if (item.namespace.length !== depth) return false;
      for (let i = 0; i < ns.length; i++) if (item.namespace[i] !== ns[i]) return false;
      return true;
    };
    const first = await this.store.search(ns, { limit: this.pageSize, offset: 0 });
    if (first.length < this.pageSize) return first.filter(inside);
    // Several pages: rows may shift between pages as others write, so keep each row once.
    const out = new Map<string, Item>();
    let page = first;
    for (let offset = 0; ;) {
      for (const item of page)
        if (inside(item)) out.set(`${item.namespace.slice(ns.length).join("/")}\u0000${item.key}`, item);
      if (page.length < this.pageSize) break;
      offset += this.pageSize;
      page = await this.store.search(ns, { limit: this.pageSize, offset });
    }
    return [...out.values()];
  }

  private async listAllNamespaces(prefix: string[]): Promise<string[][]> {
    const out: string[][] = [];
    for (let offset = 0; ; offset += this.pageSize) {
      const page = await this.store.listNamespaces({ prefix, limit: this.pageSize, offset });
      out.push(...page);
      if (page.length < this.pageSize) break;
    }
    return out;
  }

  private parseItem<T>(schema: z.ZodType<T>, item: Item): T | null {
    const parsed = schema.safeParse(item.value);
    if (parsed.success) return parsed.data;
    this.skippedRows += 1;
    this.warn("Skipped a ledger row that does not match its schema.", {
      namespace: item.namespace.join("/"),
      key: item.key,
      issues: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`),
    });
    return null;
  }

  /**
   * Parse many rows. With `looksValid`, a row that passes that cheap structural check (the shape
   * this version writes) is taken as is; zod parses the rest, so a row that does not fit is still
   * skipped and counted. Append-only records are read by the hundred thousand in a review.
   */
  private parseItems<T>(
    schema: z.ZodType<T>,
    items: Item[],
    after?: string,
    looksValid?: (value: Record<string, unknown>) => boolean,
  ): T[] {
    const out: T[] = [];
    for (const item of items) {
      if (after !== undefined && item.key <= after) continue;
      const row = looksValid?.(item.value) ? (item.value as T) : this.parseItem(schema, item);
      if (row !== null) out.push(row);
    }
    return out;
  }
}

// Cheap structural checks of the append-only records as this version writes them (see
// `parseItems`): every required field present with its type. Anything else goes through zod.
const str = (v: unknown): boolean => typeof v === "string";
const optStr = (v: unknown): boolean => v === undefined || typeof v === "string";
const num = (v: unknown): boolean => typeof v === "number";

function looksLikeRequestRow(v: Record<string, unknown>): boolean {
  return (
    v.v === SCHEMA_VERSION &&
    str(v.id) &&
    str(v.partition) &&
    str(v.requestId) &&
    str(v.request) &&
    num(v.at) &&
    optStr(v.threadId)
  );
}

const ERROR_CLASSES = new Set<unknown>(ErrorClassSchema.options);
const optClass = (v: unknown): boolean => v === undefined || ERROR_CLASSES.has(v);
const outcome = (v: unknown): boolean => v === "success" || v === "error";
const every = (v: unknown, ok: (x: Record<string, unknown>) => boolean): boolean =>
  Array.isArray(v) && v.every((x) => typeof x === "object" && x !== null && ok(x as Record<string, unknown>));

function looksLikeCall(v: Record<string, unknown>): boolean {
  return (
    v.v === SCHEMA_VERSION &&
    str(v.id) &&
    str(v.partition) &&
    str(v.tool) &&
    str(v.runId) &&
    num(v.at) &&
    outcome(v.outcome) &&
    optClass(v.errorClass) &&
    optStr(v.errorMessage) &&
    optStr(v.requestId) &&
    optStr(v.threadId) &&
    (v.source === "callback" || v.source === "tool_message" || v.source === "api") &&
    Array.isArray(v.fingerprints) &&
    v.fingerprints.every(str) &&
    every(v.args, (a) => str(a.name) && str(a.kind) && str(a.shape))
  );
}

function looksLikeTurn(v: Record<string, unknown>): boolean {
  return (
    looksLikeRequestRow(v) &&
    optStr(v.servedBy) &&
    every(v.calls, (c) => str(c.tool) && outcome(c.outcome) && optClass(c.errorClass))
  );
}

function looksLikeRoute(v: Record<string, unknown>): boolean {
  return (
    looksLikeRequestRow(v) &&
    typeof v.allSent === "boolean" &&
    Number.isInteger(v.k) &&
    every(v.offered, (o) => str(o.tool) && Number.isInteger(o.rank) && (o.rank as number) >= 1 && num(o.score))
  );
}

function keyOf(item: Item | null | undefined): string | undefined {
  const key = item?.value.key;
  return typeof key === "string" && key.length > 0 ? key : undefined;
}

function time(date: Date | string | number): number {
  return new Date(date).getTime();
}

function newest<T>(rows: T[], limit: number | undefined): T[] {
  return limit !== undefined && rows.length > limit ? rows.slice(rows.length - limit) : rows;
}
