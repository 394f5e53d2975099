/**
 * Serving a turn, once for every adapter: resolve the caller → register the agent's tools →
 * capture edicts → route (a retriever run with the run's callbacks) → record the route → read
 * cards, rules, guidelines and settings → retrieve normal rules → render the system block. The
 * lessons graph's inject node, the route node and the `createAgent` middleware call
 * {@link TurnServer.serve} and only adapt its input and output.
 *
 * Nothing the server already has is computed again ({@link TurnCache}): an unchanged request in a
 * partition whose index did not change is not routed again, the lessons of a partition no write
 * changed are not read again (over a store only this process writes), and a block whose cards,
 * rules and guidelines did not change is not rendered again. An adapter that resolved the caller for the run
 * already passes it (`ServeInput.partition`), so it is resolved once.
 *
 * One failure policy: every store, index or model call waits at most what is left of the turn's
 * bound (`timeoutMs`); whatever fails or runs past it is reported once per kind (stage `"serve"`)
 * and the turn goes on with what was already read: every tool and no block at worst.
 */
import type { BaseStore } from "@langchain/langgraph";
import { InvalidInput } from "../errors.js";
import { DEFAULT_FAILURE_SINK, FailureReporter } from "../failure.js";
import type { Ledger } from "../ledger/ledger.js";
import type { PartitionVersion } from "../ledger/versions.js";
import type { ToolCard } from "../ledger/schema.js";
import type { Guideline } from "../ledger/schema.js";
import { type BlockRule, renderLessonsBlock } from "../prompt/lessons-block.js";
import { shownCards } from "../prompt/describe.js";
import { resolveThreadCaller } from "../caller/thread-callers.js";
import { type HumanTurn, hashedRequestId, latestHumanTurn, toolsInUse } from "../caller/request.js";
import type { RoutedTools, RoutingSkipped, ToolRouter } from "../routing/router.js";
import { isUnscoped, type Rule, SHARED_SCOPE } from "../rules/model.js";
import { bindingRules, recordEdicts } from "../rules/store.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";
import { ServeBackends } from "./backends.js";
import { TurnBudget } from "./budget.js";
import { DEFAULT_SERVE, type ServeOptions } from "./options.js";
import { type Rendered, TurnCache } from "./turn-cache.js";
import type { ServeConfig, ServedTurn, ServeInput } from "./types.js";

/** What the sink is told per kind of failure. */
export const SERVE_FAILURES: Readonly<Record<string, string>> = Object.freeze({
  no_ledger: "no ledger: pass { ledger } or give the graph or agent a store. Every tool is sent as registered.",
  partition: "a caller's partition ids were refused: that request got every tool and nothing was recorded for it.",
  freshness:
    "reading or following the partition's version failed: the turn was served from what this process already had (a change made elsewhere shows on a later turn).",
  register: "registering the agent's tools in a partition failed; routing uses the cards already there.",
  edicts: "capturing the user's edicts failed; the turn went on.",
  routing: "routing failed: the request got every tool (routing was skipped).",
  route_record: "recording what routing offered failed; the turn went on.",
  ledger_read: "reading cards, rules or guidelines failed: the tools went out with their authors' descriptions.",
  retrieval: "retrieving normal-priority rules failed; the block went without them.",
});

const EMPTY_BLOCK = Object.freeze({ text: "", tokens: 0, cut: [] });
const NOTHING: Rendered = Object.freeze({ block: EMPTY_BLOCK, shownCards: [] });

/** The lessons read for the tools sent. */
interface Read {
  cards: ToolCard[];
  settings: Pick<Settings, "showLearnedExamples">;
  rules: Rule[];
  guidelines: { tool: string; guideline: Guideline | null }[];
}

/**
 * Serves turns for one adapter instance (a lessons graph, a route node, a middleware): holds the
 * per-ledger index, router, retriever and registration caches, and one failure reporter.
 */
export class TurnServer {
  readonly options: ServeOptions;
  /** Hears every failure of serving (stage `"serve"`), once per kind. */
  readonly reporter: FailureReporter;
  readonly backends: ServeBackends;
  /** The routed sets, lessons read and renders kept between turns. */
  readonly cache = new TurnCache<Read>();

  /**
   * @param ledgerFor the ledger of a run's store, when the app that owns this server decides it
   * (`ToolLessons.ledgerFor`); by default the options' ledger, else one per store kept here
   */
  constructor(options: ServeOptions = {}, ledgerFor?: (store: BaseStore | undefined) => Ledger | undefined) {
    this.options = options;
    this.reporter = new FailureReporter("serve", options.failureSink ?? DEFAULT_FAILURE_SINK);
    this.backends = new ServeBackends(options, this.reporter, ledgerFor);
  }

  /**
   * Do now what a caller's first turn would otherwise pay for, at an app's start: resolve the
   * caller from `config` as a run would (or take `input.partition`), register the agent's tools in
   * its partition, build (or catch up) its routing index, read its versions and the lessons of all
   * its tools (kept under those versions, so the first turn reads none while they hold), and agree
   * on the ledger's fingerprint key. Returns the partition made ready. Unlike {@link serve} it throws
   * (`InvalidInput` without a ledger, the store's or index's own error), since a start-up that
   * cannot reach its store is worth knowing about; call it again for each partition to warm.
   */
  async setup(
    input: Pick<ServeInput, "tools" | "store" | "partition">,
    config?: ServeConfig,
  ): Promise<{ partition: string }> {
    const ledger = this.backends.ledger(input.store);
    if (!ledger) throw new InvalidInput(SERVE_FAILURES.no_ledger);
    const router = this.backends.router(ledger);
    const partition = input.partition ?? resolveThreadCaller(config, this.options.partition, undefined, ledger.callers);
    if (this.backends.needsRegistering(ledger, partition, input.tools))
      await this.backends.register(ledger, router, partition, input.tools);
    const [own, shared] = await ledger.readVersions([partition, SHARED_SCOPE]);
    const names = input.tools.map((t) => t.name);
    const [lessons] = await Promise.all([
      readLessons(ledger, partition, names, true),
      ledger.fingerprintKey(partition),
      router?.index.warm(partition),
    ]);
    // Kept under the versions read before it: any turn while they hold takes its tools' lessons from it.
    this.cache.keepRead(wholeKey(partition, true), ledger, `${own.seq}:${shared.seq}`, lessons);
    return { partition };
  }

  /** Serve one turn: see the module comment. Never throws for a failing store, index or caller. */
  async serve(input: ServeInput, config?: ServeConfig): Promise<ServedTurn> {
    const configurable = (config?.configurable ?? {}) as Record<string, unknown>;
    const threadId = typeof configurable.thread_id === "string" ? configurable.thread_id : undefined;
    const turn = latestHumanTurn(input.messages);
    const requestId = turn && (turn.id ?? hashedRequestId(threadId, turn));
    const names = input.tools.map((t) => t.name);
    const base = { partition: undefined, threadId, requestId, routing: undefined, tools: undefined };
    const unserved = (status: ServedTurn["status"]): ServedTurn => ({
      status,
      ...base,
      cards: [],
      shownCards: [],
      rules: [],
      guidelines: [],
      retrieved: [],
      block: EMPTY_BLOCK,
      failed: status === "no_turn" ? [] : [status],
    });
    if (!turn || requestId === undefined) return unserved("no_turn");
    const ledger = this.backends.ledger(input.store);
    const router = this.backends.router(ledger);
    if (!ledger && !router) {
      this.reporter.report("no_ledger", SERVE_FAILURES.no_ledger);
      return unserved("no_ledger");
    }
    let partition: string;
    try {
      partition = input.partition ?? resolveThreadCaller(config, this.options.partition, threadId, ledger?.callers);
    } catch (error) {
      // A caller whose ids are refused gets every tool and nothing recorded: no partition is guessed.
      this.reporter.report("partition", SERVE_FAILURES.partition, error);
      return unserved("refused");
    }

    const budget = new TurnBudget(this.options.timeoutMs ?? DEFAULT_SERVE.timeoutMs, this.reporter, SERVE_FAILURES);
    try {
      return await this.serveIn(budget, input, config, { ledger, router, partition, turn, names, threadId, requestId });
    } finally {
      budget.close();
    }
  }

  /** The steps of {@link TurnServer.serve} once the caller is known, within the turn's budget. */
  private async serveIn(
    budget: TurnBudget,
    input: ServeInput,
    config: ServeConfig | undefined,
    turnOf: {
      ledger: Ledger | undefined;
      router: ToolRouter | undefined;
      partition: string;
      turn: HumanTurn;
      names: string[];
      threadId: string | undefined;
      requestId: string;
    },
  ): Promise<ServedTurn> {
    const { ledger, router, partition, turn, names, threadId, requestId } = turnOf;
    if (ledger && this.backends.needsRegistering(ledger, partition, input.tools)) {
      await budget.step("register", () => this.backends.register(ledger, router, partition, input.tools));
    }
    const version = ledger ? await this.follow(budget, ledger, router, partition) : undefined;
    const capture = input.captureEdicts ?? this.options.captureEdicts ?? DEFAULT_SERVE.captureEdicts;
    // A text already searched and found to hold no edict sentence is not searched again (the search is pure).
    if (ledger && capture && turn.text.trim() !== "" && !this.cache.heldNoEdict(turn.text)) {
      const edicts = await budget.step("edicts", () =>
        recordEdicts(ledger, { partition, text: turn.text, tools: names }),
      );
      if (edicts.ok && isNothing(edicts.value)) this.cache.keepNoEdict(turn.text);
      if (edicts.ok && edicts.value.refused.length > 0) {
        // Refused as a rule (aimed at the app's instructions, a value, …): the turn goes on, the sink hears why.
        const reasons = [...new Set(edicts.value.refused.map((r) => String(r.refused)))].join(", ");
        this.reporter.report(
          "edict_refused",
          `a user's edict was not kept as a rule (${reasons}); the turn went on.`,
          undefined,
          {
            reasons,
          },
        );
      }
    }

    let routing: RoutedTools | undefined;
    let skipped: RoutingSkipped["reason"] | undefined = "index_failed";
    if (router) {
      const sticky = toolsInUse(input.messages);
      // An unchanged request over an unchanged index: its routed set is at hand, no step to wait on.
      const kept = budget.hasTimeLeft() ? this.keptRoute(router, turn.text, partition, sticky) : undefined;
      const routed = kept
        ? { ok: true as const, value: kept }
        : await budget.step("routing", () => this.route(router, turn.text, partition, sticky, config));
      if (routed.ok && routed.value.skipped) {
        // The router caught its own failure (or found no tools): every tool goes out, as when it throws.
        budget.failed.push("routing");
        this.reporter.report("routing", SERVE_FAILURES.routing, undefined, {
          reason: routed.value.skipped.reason,
          errorName: routed.value.skipped.errorName,
        });
        skipped = routed.value.skipped.reason;
      } else if (routed.ok) {
        routing = withAlways(routed.value, this.options.alwaysInclude ?? DEFAULT_SERVE.alwaysInclude, names);
        skipped = undefined;
      }
    }
    const routedSent = routing
      ? names.length > 0
        ? routing.tools.filter((t) => names.includes(t))
        : [...routing.tools]
      : names;
    // Cache-keeping: the thread's tools first, in their kept order, then what routing adds.
    const sent = input.kept ? [...new Set([...input.kept, ...routedSent])] : routedSent;

    if (ledger) {
      // Off the run's path: queued, written on the next turn of the event loop, before any turn row
      // appended over the same store (`ledger/route-queue.ts`); a failure is reported like any other.
      ledger.queueRoutes(
        [
          {
            partition,
            threadId,
            requestId,
            // Routing skipped: every tool was sent, no choice was made (such turns count for nothing).
            offered: routing?.offered ?? [],
            allSent: routing?.allSent ?? true,
            ...(skipped ? { skipped } : {}),
            k: this.options.maxTools ?? router?.maxTools ?? DEFAULT_SERVE.maxTools,
          },
        ],
        {
          timeoutMs: this.options.timeoutMs ?? DEFAULT_SERVE.timeoutMs,
          onError: (error) => this.reporter.report("route_record", SERVE_FAILURES.route_record, error),
        },
      );
    }
    const lessons = ledger
      ? await this.read(budget, ledger, partition, sent, input.lessons !== false, version)
      : undefined;
    const retrieved: BlockRule[] = [];
    // Rules retrieved for each request would change the block every turn: a kept thread goes without them.
    if (ledger && lessons && !input.kept && lessons.rules.some((r) => r.priority === "normal")) {
      const docs = await budget.step("retrieval", () =>
        this.backends.retriever(ledger).retrieve(turn.text, { partition }),
      );
      const wanted = new Set(sent);
      for (const doc of docs.ok ? docs.value : []) {
        const tool = String(doc.metadata.tool);
        if (wanted.has(tool) || isUnscoped({ tool })) retrieved.push({ tool, rule: doc.pageContent });
      }
    }
    const { block, shownCards: shown } = lessons
      ? this.render(lessons, sent, retrieved, input.lessons !== false)
      : NOTHING;
    return {
      status: "served",
      partition,
      threadId,
      requestId,
      routing,
      tools: routing ? sent : undefined,
      // Copies: what was read may be kept for later turns (see `read`).
      cards: [...(lessons?.cards ?? [])],
      shownCards: [...shown],
      rules: [...(lessons?.rules ?? [])],
      guidelines: [...(lessons?.guidelines ?? [])],
      retrieved,
      block: { ...block, cut: [...block.cut] },
      failed: [...budget.failed],
    };
  }

  /** Route a request (none kept for it, see {@link TurnServer.keptRoute}), and keep the routed set. */
  private async route(
    router: ToolRouter,
    request: string,
    partition: string,
    sticky: string[],
    config: ServeConfig | undefined,
  ): Promise<RoutedTools> {
    const revision = router.index.revision(partition);
    const key = TurnCache.routeKey(partition, revision, this.options.maxTools ?? router.maxTools, sticky, request);
    const routed = await router.route(request, { partition, sticky, maxTools: this.options.maxTools }, config);
    // Only a choice made over an index that did not change meanwhile, in the caller's own partition, is kept.
    if (!routed.skipped && !routed.routedFrom && router.index.revision(partition) === revision) {
      this.cache.keepRoute(key, routed);
    }
    return routed;
  }

  /**
   * The versions of the partition and of the shared scope (one store batch), and the routing index
   * caught up with what any process changed since (`ToolIndex.follow`): what is served this turn
   * is what the store holds, wherever it was written. `undefined` when the read failed (reported).
   */
  private async follow(
    budget: TurnBudget,
    ledger: Ledger,
    router: ToolRouter | undefined,
    partition: string,
  ): Promise<Versions | undefined> {
    const read = await budget.step("freshness", () => ledger.readVersions([partition, SHARED_SCOPE]));
    if (!read.ok) return undefined;
    const [own, shared] = read.value;
    if (router) {
      const index = router.index;
      // An index over another ledger (an app's own, another root) reads its own partition's version.
      const same = index.ledger.store === ledger.store && index.ledger.namespaceRoot === ledger.namespaceRoot;
      await budget.step("freshness", () => index.follow(partition, same ? own : undefined));
    }
    return { own, shared };
  }

  /** The lessons of the tools sent: kept from an earlier turn when no write changed them since, else read. */
  private async read(
    budget: TurnBudget,
    ledger: Ledger,
    partition: string,
    sent: readonly string[],
    withBlock: boolean,
    version: Versions | undefined,
  ): Promise<Read | undefined> {
    // Read before the lessons: a write announced during the read moves it, so the next turn reads again.
    const stamp = version && `${version.own.seq}:${version.shared.seq}`;
    const key = TurnCache.readKey(partition, sent, withBlock);
    const kept = stamp === undefined ? undefined : this.cache.read(key, ledger, stamp);
    if (kept) return kept;
    // The lessons of every tool, read by setup() under the same versions, hold these too.
    const whole = stamp === undefined ? undefined : this.cache.read(wholeKey(partition, withBlock), ledger, stamp);
    const part = whole && lessonsOf(whole, sent);
    if (part) {
      this.cache.keepRead(key, ledger, stamp!, part);
      return part;
    }
    const got = await budget.step("ledger_read", () => readLessons(ledger, partition, sent, withBlock));
    if (!got.ok) return undefined;
    if (stamp !== undefined) this.cache.keepRead(key, ledger, stamp, got.value);
    return got.value;
  }

  /** The routed set kept for this request over the partition's index as it is now, if any. */
  private keptRoute(router: ToolRouter, request: string, partition: string, sticky: string[]): RoutedTools | undefined {
    const k = this.options.maxTools ?? router.maxTools;
    return this.cache.route(TurnCache.routeKey(partition, router.index.revision(partition), k, sticky, request));
  }

  /** The block and the shown cards: kept from an earlier turn when what they are rendered from is unchanged. */
  private render(lessons: Read, sent: readonly string[], retrieved: BlockRule[], withBlock: boolean): Rendered {
    const maxTokens = this.options.maxTokens ?? DEFAULT_SERVE.maxTokens;
    const key = TurnCache.renderKey({
      sent,
      cards: lessons.cards,
      showLearnedExamples: lessons.settings.showLearnedExamples,
      rules: lessons.rules,
      guidelines: lessons.guidelines,
      retrieved,
      maxTokens,
      lessons: withBlock,
    });
    return this.cache.render(key, () => ({
      block: withBlock
        ? renderLessonsBlock(
            { rules: lessons.rules, guidelines: lessons.guidelines, retrieved, tools: sent },
            { maxTokens },
          )
        : EMPTY_BLOCK,
      shownCards: shownCards(lessons.cards, lessons.settings),
    }));
  }
}

/** True when an edict search found nothing at all (no rule stored, refused or dropped). */
function isNothing(recorded: Awaited<ReturnType<typeof recordEdicts>>): boolean {
  return (
    recorded.stored.length === 0 &&
    recorded.refused.length === 0 &&
    recorded.dropped.length === 0 &&
    recorded.modelRejected === undefined
  );
}

/** The always-included tools the router did not already add, among the agent's tools when known. */
function withAlways(routed: RoutedTools, always: readonly string[], names: readonly string[]): RoutedTools {
  const added = always.filter((t) => (names.length === 0 || names.includes(t)) && !routed.tools.includes(t));
  if (added.length === 0) return routed;
  return { ...routed, always: [...routed.always, ...added], tools: [...routed.tools, ...added] };
}

/** The versions a turn read: its partition's and the shared scope's. */
interface Versions {
  own: PartitionVersion;
  shared: PartitionVersion;
}

/** The read-cache key of the lessons of every tool of a partition (what setup() reads). */
function wholeKey(partition: string, withBlock: boolean): string {
  return TurnCache.readKey(partition, ["\u0000all"], withBlock);
}

/** The lessons of `sent` out of a read of more tools, or `undefined` when a sent tool has no card there. */
function lessonsOf(read: Read, sent: readonly string[]): Read | undefined {
  const cards = new Map(read.cards.map((c) => [c.name, c]));
  const guidelines = new Map(read.guidelines.map((g) => [g.tool, g.guideline]));
  if (!sent.every((tool) => cards.has(tool) && guidelines.has(tool))) return undefined;
  const wanted = new Set(sent);
  return {
    cards: sent.map((tool) => cards.get(tool)!),
    settings: read.settings,
    rules: read.rules.filter((r) => wanted.has(r.tool)),
    guidelines: sent.map((tool) => ({ tool, guideline: guidelines.get(tool) ?? null })),
  };
}

/** Cards, settings, rules and guidelines of the tools sent, read in parallel (cards only without `lessons`). */
async function readLessons(
  ledger: Ledger,
  partition: string,
  sent: readonly string[],
  lessons: boolean,
): Promise<Read> {
  if (!lessons)
    return { cards: await ledger.getCards(partition, sent), settings: DEFAULT_SETTINGS, rules: [], guidelines: [] };
  const [cards, settings, rules, memories] = await Promise.all([
    ledger.getCards(partition, sent),
    ledger.getSettings(partition),
    bindingRules(ledger, partition, sent),
    ledger.getToolMemories(partition, sent),
  ]);
  return {
    cards,
    settings,
    rules,
    guidelines: sent.map((tool, i) => ({ tool, guideline: memories[i]?.guideline ?? null })),
  };
}
