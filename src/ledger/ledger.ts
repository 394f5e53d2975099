import { readEnv } from "../env.js";
import { RecordsPending } from "../errors.js";
import { FailureReporter, type ToolLessonsFailure } from "../failure.js";
import { resolveWordTokens } from "../text/free-text.js";
import { redactContext } from "../text/gate.js";
import type { BaseStore } from "@langchain/langgraph";
import { ThreadCallers } from "./thread-callers.js";
import { type AppendedRecords, type AppendListener, AppendListeners } from "./appended.js";
import { RouteQueue } from "./route-queue.js";
import type { Settings, SettingsInput } from "../settings.js";
import { CallRows } from "./collections/calls.js";
import { CardRows } from "./collections/card-rows.js";
import { commit, type LedgerChange } from "./collections/commit.js";
import { LedgerKeys, resolveLedgerKeys } from "./collections/fingerprint-key.js";
import { listPartitions } from "./collections/partitions.js";
import { RequestRows } from "./collections/requests.js";
import { ReleasedWordRows } from "./collections/released-words.js";
import { readWordingsGate, ReviewMarkRows, type WordingsGate, writeWordingsGate } from "./collections/review-marks.js";
import { RevisionRows } from "./collections/revisions.js";
import { type RuleInput, type RuleMoveChanges, RuleRows } from "./collections/rules.js";
import { SettingsRow } from "./collections/settings.js";
import { ToolMemoryRows } from "./collections/tool-memory.js";
import { appendPuts, type LedgerContext, type ListOptions } from "./collections/store-io.js";
import {
  DEFAULT_LEDGER_CLOSE_OPTIONS,
  DEFAULT_LEDGER_OPTIONS,
  type LedgerCloseOptions,
  type LedgerOptions,
  type LedgerRecorder,
  type RunRecords,
} from "./ledger-options.js";
import { type Announcement, announce, Announcer, type PartitionVersion, readVersions } from "./versions.js";
import type {
  CallRecord,
  EvaluatedCall,
  NewRecord,
  Revision,
  RevisionStatus,
  RouteRecord,
  Rule,
  ToolCard,
  ToolMemoryState,
  TurnRecord,
} from "./schema.js";

export type { LedgerChange } from "./collections/commit.js";
export {
  DEFAULT_LEDGER_CLOSE_OPTIONS,
  DEFAULT_LEDGER_OPTIONS,
  type LedgerCloseOptions,
  type LedgerOptions,
  type LedgerRecorder,
  type RunRecords,
} from "./ledger-options.js";
export type { RuleInput, RuleMoveChanges } from "./collections/rules.js";
export type { LedgerFailureKind, ListOptions } from "./collections/store-io.js";

/**
 * The package's durable truth, written through any LangGraph `BaseStore`: the one the user's
 * graph already has (`InMemoryStore`, our `SqliteStore`, `PostgresStore`).
 *
 * A thin facade: each collection (calls, turns and routes, cards, revisions, rules, settings,
 * review marks, tool memory, the fingerprint key) is a module under `collections/` that documents its key
 * layout and invariants; they share one context (store, namespace root, warning sink, page size,
 * counters). Call, turn and route records are append-only with time-ordered keys: no
 * read-modify-write, so concurrent writers in many processes never lose a record. Every method
 * takes the partition explicitly; only {@link Ledger.listPartitions} looks across partitions
 * (operator scope).
 */
export class Ledger {
  readonly store: BaseStore;
  /**
   * Which caller each thread belongs to, as serving resolved it: the recorder (whose callbacks
   * see only `metadata`) asks it where a thread's records go. The app's pieces share it through
   * their one ledger.
   */
  readonly callers = new ThreadCallers();
  /** Route records serving queued off the run's path, written in order before the next turns. */
  private readonly routeQueue = new RouteQueue(this);
  private readonly appends = new AppendListeners();
  private readonly ctx: LedgerContext;
  private readonly ownsStore: boolean;
  private closed = false;
  /** Held weakly: a recorder dropped by its user is not kept alive by the ledger. */
  private readonly recorders = new Set<WeakRef<LedgerRecorder>>();
  private readonly settings: SettingsRow;
  private readonly calls: CallRows;
  private readonly turns: RequestRows<TurnRecord>;
  private readonly routes: RequestRows<RouteRecord>;
  private readonly cards: CardRows;
  private readonly revisions: RevisionRows;
  private readonly rules: RuleRows;
  private readonly reviews: ReviewMarkRows;
  private readonly words: ReleasedWordRows;
  private readonly memory: ToolMemoryRows;
  private readonly keys: LedgerKeys;

  /**
   * @throws KeyRequired over a store that keeps no file and no `secret` (see {@link LedgerOptions.secret})
   * @throws StoreUnavailable when a SQLite ledger's key file cannot be read or made
   */
  constructor(store: BaseStore, options: LedgerOptions = {}) {
    this.store = store;
    this.keys = resolveLedgerKeys(store, {
      secret: options.secret,
      envSecret: options.secret === undefined ? (options.env ?? readEnv()).ledgerKey : undefined,
    });
    this.ownsStore = options.ownsStore ?? DEFAULT_LEDGER_OPTIONS.ownsStore;
    const reporter = new FailureReporter("ledger", options.failureSink ?? DEFAULT_LEDGER_OPTIONS.failureSink);
    this.ctx = {
      store,
      root: options.namespaceRoot ?? DEFAULT_LEDGER_OPTIONS.namespaceRoot,
      // A context's strings (a namespace, a schema issue) pass the gate: a log line never carries a value.
      report: (kind, message, context, error) =>
        reporter.report(
          kind,
          message,
          error,
          redactContext(context) as ToolLessonsFailure["context"],
          // Once per row, partition or close: what the event is about, as its context names it.
          JSON.stringify(context ?? {}),
        ),
      pageSize: options.pageSize ?? DEFAULT_LEDGER_OPTIONS.pageSize,
      counters: { skippedRows: 0 },
      announcer: new Announcer(),
      keys: this.keys,
    };
    this.settings = new SettingsRow(this.ctx);
    this.calls = new CallRows(this.ctx, this.settings);
    this.turns = RequestRows.turns(this.ctx, this.settings);
    this.routes = RequestRows.routes(this.ctx, this.settings);
    this.cards = new CardRows(this.ctx);
    this.revisions = new RevisionRows(this.ctx);
    this.rules = new RuleRows(this.ctx);
    this.reviews = new ReviewMarkRows(this.ctx);
    this.words = new ReleasedWordRows(this.ctx);
    this.memory = new ToolMemoryRows(this.ctx);
  }

  /** Rows skipped because they did not parse, since this ledger was made. */
  get skippedRows(): number {
    return this.ctx.counters.skippedRows;
  }

  set skippedRows(count: number) {
    this.ctx.counters.skippedRows = count;
  }

  /** The first namespace label of every row ({@link LedgerOptions.namespaceRoot}). */
  get namespaceRoot(): string {
    return this.ctx.root;
  }

  /** True once {@link Ledger.close} has closed it. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Have {@link Ledger.close} flush this recorder first. `ToolLessonsCallbackHandler` calls it
   * when it is made; call it for a recorder of your own.
   */
  registerRecorder(recorder: LedgerRecorder): void {
    this.recorders.add(new WeakRef(recorder));
  }

  /**
   * Release what this ledger opened, after the recorders writing to it have written what they
   * hold: each is flushed (at most `timeoutMs`); then the store is stopped when the ledger owns
   * it (see {@link LedgerOptions.ownsStore}). Idempotent.
   * @throws RecordsPending when records are still not written after `timeoutMs` (a store that is
   * down or hangs): nothing is closed, so the call can be tried again; `discardPending` closes anyway.
   */
  async close(options: LedgerCloseOptions = {}): Promise<void> {
    if (this.closed) return;
    await this.routeQueue.settled();
    const timeoutMs = options.timeoutMs ?? DEFAULT_LEDGER_CLOSE_OPTIONS.timeoutMs;
    const discardPending = options.discardPending ?? DEFAULT_LEDGER_CLOSE_OPTIONS.discardPending;
    const live: LedgerRecorder[] = [];
    for (const ref of this.recorders) {
      const recorder = ref.deref();
      if (recorder) live.push(recorder);
      else this.recorders.delete(ref);
    }
    const results = await Promise.all(
      live.map((r) =>
        r.flush({ timeoutMs }).then(
          (result) => result.inFlight,
          () => 0,
        ),
      ),
    );
    const pending = results.reduce((n, r) => n + r, 0);
    if (pending > 0) {
      const recorders = results.filter((r) => r > 0).length;
      if (!discardPending) {
        throw new RecordsPending(
          `The ledger was not closed: ${pending} record(s) of ${recorders} recorder(s) are still not written after ` +
            `${timeoutMs} ms (the store is down or slow). Try close() again once the store answers, or pass ` +
            "{ discardPending: true } to close and lose them.",
          { context: { pending, recorders, timeoutMs } },
        );
      }
      this.ctx.report(
        "records_discarded",
        `Closed the ledger with ${pending} record(s) not written (discardPending).`,
        {
          pending,
          recorders,
        },
      );
    }
    this.closed = true;
    if (this.ownsStore) await this.store.stop();
  }

  // ---------------------------------------------------------------- records

  /**
   * Append call records (one batch). Ids and timestamps are assigned when absent.
   * @throws InvalidInput when a record does not match its schema (nothing is written).
   */
  async appendCalls(records: NewRecord<CallRecord>[]): Promise<CallRecord[]> {
    return this.calls.append(records);
  }

  /**
   * Append the records of finished runs: each run's calls and its turn are stored together or
   * not at all. Every row of every run goes into ONE store batch, which is one transaction on
   * SQLite and Postgres (a single statement there) and one synchronous apply on `InMemoryStore`:
   * a crash or a dropped connection leaves all of it or none of it, never a turn without its
   * calls nor calls without their turn. The rows' ids are kept, so writing the same runs again
   * (a retry after a connection fault) writes the same keys: no record is doubled.
   * @throws InvalidInput when a record does not match its schema (nothing of the batch is written).
   */
  async appendRuns(runs: readonly RunRecords[]): Promise<{ calls: CallRecord[]; turns: TurnRecord[] }> {
    // The routes serving queued off the run's path go first: a turn never lands before its route.
    await this.routeQueue.settled();
    const calls = this.calls.stamp(runs.flatMap((run) => run.calls));
    const turns = this.turns.stamp(runs.flatMap((run) => (run.turn ? [run.turn] : [])));
    if (calls.length + turns.length === 0) return { calls, turns };
    await appendPuts(this.ctx, [...this.calls.puts(calls), ...this.turns.puts(turns)]);
    this.appends.tell({ kind: "turns", rows: turns });
    await this.calls.appended(calls);
    await this.turns.appended(turns);
    return { calls, turns };
  }

  /** Append turn records: what a run did for one request. */
  async appendTurns(records: NewRecord<TurnRecord>[]): Promise<TurnRecord[]> {
    await this.routeQueue.settled();
    const rows = await this.turns.append(records);
    this.appends.tell({ kind: "turns", rows });
    return rows;
  }

  /** Append route records: what routing offered for one request. */
  async appendRoutes(records: NewRecord<RouteRecord>[]): Promise<RouteRecord[]> {
    const rows = await this.routes.append(records);
    this.appends.tell({ kind: "routes", rows });
    return rows;
  }

  /**
   * Queue route records to be written off the run's path (next turn of the event loop), each
   * write held to `timeoutMs`, its failure told to `onError`. Turns appended later wait for them.
   */
  queueRoutes(records: NewRecord<RouteRecord>[], options: { timeoutMs: number; onError: (error: unknown) => void }) {
    this.routeQueue.add(records, options);
  }

  /** Settle the route records queued through this ledger (written, or failed and reported). Never rejects. */
  async settleQueuedRoutes(): Promise<void> {
    await this.routeQueue.settled();
  }

  /** Tell this ledger's listeners of records a writer of its own stored (the recorder's worker thread). */
  tellAppended(appended: AppendedRecords): void {
    this.appends.tell(appended);
  }

  /** Hear the turn and route records appended through this ledger; returns a function that stops it. */
  onAppended(listener: AppendListener): () => void {
    return this.appends.listen(listener);
  }

  /**
   * Call records of one tool (or of every tool), oldest first. Their free text (request, error
   * message, output) reads each word token as its released word, or `<word>` (`text/free-text.ts`).
   */
  async listCalls(partition: string, options: ListOptions & { tool?: string } = {}): Promise<CallRecord[]> {
    const rows = await this.calls.list(partition, options);
    if (!rows.some(hasWordToken)) return rows;
    const words = await this.releasedWords(partition);
    return rows.map((row) => resolveCall(row, words));
  }

  /** Tools that have call records in a partition. */
  async listCalledTools(partition: string): Promise<string[]> {
    return this.calls.tools(partition);
  }

  /** Turn records, oldest first; their request reads word tokens as {@link Ledger.listCalls} does. */
  async listTurns(partition: string, options: ListOptions = {}): Promise<TurnRecord[]> {
    const rows = await this.turns.list(partition, options);
    if (!rows.some((row) => row.request.includes("<w:"))) return rows;
    const words = await this.releasedWords(partition);
    return rows.map((row) =>
      row.request.includes("<w:") ? { ...row, request: resolveWordTokens(row.request, words) } : row,
    );
  }

  /**
   * The released words of a partition's stored free text, word hash → word: words records of two
   * different threads (and callers, where several share the partition) showed. Read from the
   * store at most every 2 s; this ledger's own writes are seen at once.
   */
  async releasedWords(partition: string): Promise<ReadonlyMap<string, string>> {
    return this.words.list(partition);
  }

  /** Store released words of a partition (the recorder's writer does, `record/word-releases.ts`). */
  async releaseWords(partition: string, words: ReadonlyMap<string, string>): Promise<void> {
    return this.words.put(partition, words);
  }

  /** Route records, oldest first (those serving queued in this process included: see `route-queue.ts`). */
  async listRoutes(partition: string, options: ListOptions = {}): Promise<RouteRecord[]> {
    await this.routeQueue.settled();
    return this.routes.list(partition, options);
  }

  // ---------------------------------------------------------------- cards

  async getCard(partition: string, tool: string): Promise<ToolCard | null> {
    return (await this.cards.get(partition, [tool]))[0] ?? null;
  }

  /** The cards of these tools in one store batch, in the order asked; a tool with no card is left out. */
  async getCards(partition: string, tools: readonly string[]): Promise<ToolCard[]> {
    return this.cards.get(partition, tools);
  }

  /** Every card of a partition, by name. */
  async listCards(partition: string): Promise<ToolCard[]> {
    return this.cards.list(partition);
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
    return this.revisions.get(partition, id);
  }

  /** @throws NotFound */
  async requireRevision(partition: string, id: string): Promise<Revision> {
    return this.revisions.require(partition, id);
  }

  /** Revisions, newest first, optionally of one tool and/or one status. */
  async listRevisions(
    partition: string,
    options: { tool?: string; status?: RevisionStatus } = {},
  ): Promise<Revision[]> {
    return this.revisions.list(partition, options);
  }

  async putRevision(revision: Revision): Promise<void> {
    await this.commit(revision.partition, { revisions: [revision] });
  }

  /**
   * Write cards and revisions of one partition as one compare-and-set settled by the store (one
   * transaction on SQLite and Postgres, across processes; in this process on other stores): a
   * crash leaves the old state or the new, never a mix, and of two writers racing one writes and
   * the other gets `RevisionConflict` naming who won. Cards get their version bumped; the saved
   * cards are returned. See `collections/commit.ts`.
   * @throws InvalidInput for a card of another partition, or a card or revision that does not match its schema.
   * @throws RevisionConflict when a card moved past `expectVersion` or the version read, or a
   *   revision is not at the status expected (`expectStatus`, else the one read).
   */
  async commit(partition: string, change: LedgerChange): Promise<ToolCard[]> {
    return commit(this.ctx, { cards: this.cards, revisions: this.revisions }, partition, change);
  }

  // ---------------------------------------------------------------- rules

  /**
   * Insert or update a tool-scoped rule and return it as stored. Without an `id`, the id is
   * derived from the tool and the text (`ruleId`), so the same rule upserts one row. An update
   * keeps `createdAt`, also when two processes upsert the same rule at once: the times are the
   * store's own row times (see `collections/rules.ts`).
   * @throws InvalidInput for a blank tool or blank text, or a field that does not match the schema.
   */
  async putRule(partition: string, input: RuleInput): Promise<Rule> {
    return this.rules.put(partition, input);
  }

  async getRule(partition: string, id: string): Promise<Rule | null> {
    return this.rules.get(partition, id);
  }

  /**
   * Rules of a partition (optionally one tool), by priority (critical, high, normal), then the
   * most recently updated first; corrupt rows are skipped, never thrown.
   */
  async listRules(partition: string, options: { tool?: string } = {}): Promise<Rule[]> {
    return this.rules.list(partition, options);
  }

  async deleteRule(partition: string, id: string): Promise<boolean> {
    return this.rules.delete(partition, id);
  }

  /**
   * Move a rule to another partition under the same id (written there and deleted here in one
   * store batch), with `changes` applied. Operator scope: used to promote a rule to a shared
   * scope. Returns the rule as stored there, or `null` when there is none to move.
   * @throws InvalidInput when both partitions are the same.
   */
  async moveRule(from: string, id: string, to: string, changes: RuleMoveChanges = {}): Promise<Rule | null> {
    return this.rules.move(from, id, to, changes);
  }

  // ---------------------------------------------------------------- settings

  /** The partition's stored settings over the defaults. A corrupt row gives the defaults. */
  async getSettings(partition: string): Promise<Settings> {
    return this.settings.get(partition);
  }

  /**
   * Store settings for a partition (merged over what is stored).
   * @throws InvalidInput naming each bad field.
   */
  async configure(partition: string, input: SettingsInput): Promise<Settings> {
    return this.settings.configure(partition, input);
  }

  // ---------------------------------------------------------------- partition versions

  /**
   * The partitions' versions (`versions.ts`), in one store batch: what every process serving them
   * compares, once a turn, to tell that a card, rule, setting, guideline or wording changed
   * anywhere. A partition whose settings changed since this ledger last read its version has its
   * cached settings read again.
   */
  async readVersions(partitions: readonly string[]): Promise<PartitionVersion[]> {
    const versions = await readVersions(this.ctx, partitions);
    partitions.forEach((partition, i) => this.settings.follow(partition, versions[i]));
    return versions;
  }

  /**
   * Announce a change made outside the ledger's own writes (the routing index's wordings, which it
   * derives from turn records), so every process serving the partition follows it on its next turn.
   * @throws StoreUnavailable when the version could not be written.
   */
  async announce(change: Announcement): Promise<number> {
    return announce(this.ctx, change);
  }

  // ---------------------------------------------------------------- review watermarks

  /**
   * Newest record id each tool's last review read. Kept apart from the cards: marking a tool
   * reviewed must not bump the card's version (undo compares versions).
   */
  async reviewMarks(partition: string): Promise<Map<string, string>> {
    return this.reviews.list(partition);
  }

  /** Record that a tool's review read everything up to `through`. */
  async markReviewed(partition: string, marks: ReadonlyMap<string, string>): Promise<void> {
    return this.reviews.mark(partition, marks);
  }

  /**
   * The partition's wordings gate: per tool, the newest turn record routing may learn wordings
   * from (written by a review's guard, `learn/review/guard.ts`); null when no review guarded it.
   */
  async wordingsGate(partition: string): Promise<WordingsGate | null> {
    return readWordingsGate(this.ctx, partition);
  }

  /** Write the partition's wordings gate (a review's guard, before it announces the wordings). */
  async setWordingsGate(partition: string, gate: WordingsGate): Promise<void> {
    return writeWordingsGate(this.ctx, partition, gate);
  }

  // ---------------------------------------------------------------- tool memory

  /**
   * Write evaluated calls into their tools' memory windows (one store batch); a call evaluated
   * again replaces its row. Slide the window afterwards ({@link Ledger.slideMemoryWindow}).
   * @throws InvalidInput when a row does not match its schema (nothing is written).
   */
  async putEvaluatedCalls(rows: readonly EvaluatedCall[]): Promise<EvaluatedCall[]> {
    return this.memory.putCalls(rows);
  }

  /** A tool's memory window: its evaluated calls, oldest first. */
  async listEvaluatedCalls(partition: string, tool: string, options: ListOptions = {}): Promise<EvaluatedCall[]> {
    return this.memory.listCalls(partition, tool, options);
  }

  /** Keep the newest `keep` evaluated calls of a tool, the oldest out first; how many went. */
  async slideMemoryWindow(partition: string, tool: string, keep: number): Promise<number> {
    return this.memory.slide(partition, tool, keep);
  }

  /** Tools with a memory window in a partition. */
  async listMemoryTools(partition: string): Promise<string[]> {
    return this.memory.tools(partition);
  }

  /** A tool's memory state (evaluation watermark, guideline), or `null`. */
  async getToolMemory(partition: string, tool: string): Promise<ToolMemoryState | null> {
    return this.memory.getState(partition, tool);
  }

  /** The memory states of these tools (one store batch), in the order asked; `null` for a tool without one. */
  async getToolMemories(partition: string, tools: readonly string[]): Promise<(ToolMemoryState | null)[]> {
    return this.memory.getStates(partition, tools);
  }

  /** Every tool's memory state in a partition, by tool name. */
  async listToolMemories(partition: string): Promise<ToolMemoryState[]> {
    return this.memory.listStates(partition);
  }

  /**
   * Write a tool's memory state whole (last write wins). Announced in the partition's version
   * unless `guidelineChanged: false` says only the evaluation watermark moved (serving reads the
   * guideline alone, so no running agent needs to read again).
   * @throws InvalidInput when it does not match its schema (nothing is written).
   */
  async putToolMemory(
    state: Omit<ToolMemoryState, "v" | "updatedAt">,
    options: { guidelineChanged?: boolean } = {},
  ): Promise<ToolMemoryState> {
    return this.memory.putState(state, options.guidelineChanged ?? true);
  }

  // ---------------------------------------------------------------- secrets

  /**
   * The key of a partition's keyed hashes (fingerprints of argument values, word tokens): derived
   * from the ledger's secret and the partition, so tokens never link two partitions. The secret
   * is never in the store (see {@link LedgerOptions.secret}); the first call deletes the key row
   * an older ledger kept there. Never rejects.
   */
  async fingerprintKey(partition: string): Promise<string> {
    await this.keys.dropStoredKeyOnce(this.ctx);
    return this.keys.partitionKey(partition);
  }

  // ---------------------------------------------------------------- operator scope

  /** Every partition with any row. Operator scope: the only cross-partition read. */
  async listPartitions(): Promise<string[]> {
    return listPartitions(this.ctx);
  }

  /** Delete call records of one tool beyond the newest `keep`. */
  async pruneCalls(partition: string, tool: string, keep: number): Promise<number> {
    return this.calls.prune(partition, tool, keep);
  }
}

/** True when a call record's free text holds a word token. */
function hasWordToken(row: CallRecord): boolean {
  const has = (text: string | undefined): boolean => text !== undefined && text.includes("<w:");
  return has(row.request) || has(row.errorMessage) || has(row.output?.text);
}

/** A call record with its free text's word tokens read through the released words. */
function resolveCall(row: CallRecord, words: ReadonlyMap<string, string>): CallRecord {
  if (!hasWordToken(row)) return row;
  return {
    ...row,
    ...(row.request !== undefined ? { request: resolveWordTokens(row.request, words) } : {}),
    ...(row.errorMessage !== undefined ? { errorMessage: resolveWordTokens(row.errorMessage, words) } : {}),
    ...(row.output !== undefined ? { output: { ...row.output, text: resolveWordTokens(row.output.text, words) } } : {}),
  };
}
