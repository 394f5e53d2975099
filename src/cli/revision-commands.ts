/**
 * The operator's commands over a tool's revisions: review (propose vetted lessons), apply,
 * dismiss, undo, and history. Each opens the ledger session (`ledger-session.ts`), does one thing
 * through the `LessonManager`, and closes it.
 */
import { NotFound } from "../errors.js";
import {
  flag,
  nonEmpty,
  type OptionSpec,
  type ParsedArgs,
  parseCommandArgs,
  parseSettingAssignments,
  stringList,
  stringOption,
  UsageError,
} from "./args.js";
import {
  appliedLine,
  effectLine,
  renderLearned,
  renderReview,
  renderRevision,
  servedFromNextTurn,
  undoneLine,
} from "./format.js";
import { type Command, EXIT, println } from "./io.js";
import {
  EXIT_HELP,
  JSON_OPTION,
  json,
  LEDGER_HELP,
  LEDGER_OPTIONS,
  PARTITION_HELP,
  requiredBy,
  requireKnownPartition,
  withLedger,
} from "./ledger-session.js";

/**
 * The one argument of apply, dismiss, undo and history (a revision ID or a tool name), checked
 * non-empty, with the options: the ledger's, --json and, for `by`, --by.
 */
function oneTarget(
  argv: readonly string[],
  what: { name: string; label: string; by: boolean },
): { values: ParsedArgs["values"]; target: string } {
  const options: OptionSpec = { ...LEDGER_OPTIONS, ...JSON_OPTION, ...(what.by ? { by: { type: "string" } } : {}) };
  const { values, positionals } = parseCommandArgs(argv, options, { min: 1, max: 1, name: what.name });
  return { values, target: nonEmpty(positionals[0], what.label)! };
}

// ------------------------------------------------------------------ review

const REVIEW_OPTIONS: OptionSpec = {
  ...LEDGER_OPTIONS,
  ...JSON_OPTION,
  "dry-run": { type: "boolean" },
  "auto-apply": { type: "boolean" },
  set: { type: "string", multiple: true },
  tool: { type: "string", multiple: true },
};

const review: Command = {
  name: "review",
  summary: "find what repeats in the ledger and propose vetted lessons (one revision per tool)",
  help: `Usage: tool-lessons review [--dry-run] [--auto-apply] [--tool NAME ...] [--set key=value ...] [--json]

Reads the partition's records, detects failures, missed and confused requests per tool, proposes
lessons with the deterministic proposer, vets them, and stores each tool's kept lessons as a
proposed revision. Nothing reaches a card until it is applied. Then each applied revision's
measured effect (see \`tool-lessons effects\`): helped, no effect or hurt (FLAGGED), or not
enough data. Last, every revision of the partition waiting for apply, this review's and earlier
ones (an agent's own reviews propose them too), each tool with the revision ID apply takes.

Options:
  --dry-run               show what would be proposed; store nothing
  --auto-apply            apply every revision at once, approved by tool-lessons:auto
  --tool NAME             review only this tool (repeatable)
  --set key=value         a setting for this review only (repeatable), e.g. --set minMisses=3
  --json                  print the review as JSON (with "effects", as \`effects --json\` gives,
                          and "waiting": the revisions waiting for apply, { id, tool, createdAt })
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons review --ledger .tool-lessons/ledger.db --set minMisses=3 --dry-run
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, REVIEW_OPTIONS);
    const config = parseSettingAssignments(stringList(values, "set"), "--set");
    const dryRun = flag(values, "dry-run");
    const autoApply = flag(values, "auto-apply");
    if (dryRun && autoApply) throw new UsageError("--dry-run and --auto-apply exclude each other.");
    const tools = stringList(values, "tool").map((t) => nonEmpty(t, "--tool")!);
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      await requireKnownPartition(ledger, partition);
      if ((await ledger.listCalledTools(partition)).length === 0) {
        println(
          io.stderr,
          `review: partition "${partition}" has no recorded tool calls yet: there is nothing to learn from.`,
        );
      }
      const result = await manager.review({
        partition,
        dryRun,
        autoApply,
        config,
        ...(tools.length > 0 ? { tools } : {}),
      });
      // What the lessons already applied did: measured, never undone here (that is `effects --undo`).
      const effects = await manager.effects({ partition, ...(tools.length > 0 ? { tools } : {}) });
      // What apply takes: every stored revision still proposed, whichever review proposed it.
      const waiting = (await ledger.listRevisions(partition, { status: "proposed" })).map((r) => ({
        id: r.id,
        tool: r.tool,
        createdAt: r.createdAt,
      }));
      if (flag(values, "json")) json(io, { ...result, effects, waiting });
      else println(io.stdout, renderReview(result, { dryRun, autoApply, effects, waiting }));
      return EXIT.ok;
    });
  },
};

// ------------------------------------------------------------------ apply / dismiss / undo

const apply: Command = {
  name: "apply",
  summary: "apply a proposed revision to its tool's card (--by who approved it)",
  help: `Usage: tool-lessons apply ID --by NAME [--json]

Applies a proposed revision: its examples, notes, "Not for" lines and example call go on the card.
Routing is checked again first: an example that would push another tool out of the offered set
for a request that tool served is withdrawn (the revision records which and why). Agents already
running over the ledger serve it from their next turn (no restart).

Options:
  --by NAME               who approved it (required; kept on the revision)
  --json                  print the applied revision as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons apply 0mx35itpy000037c6f33e15 --by alice
`,
  async run(argv, io) {
    const { values, target: id } = oneTarget(argv, {
      name: "a revision ID (`tool-lessons review` lists those waiting; or `history TOOL`)",
      label: "the revision ID",
      by: true,
    });
    const by = requiredBy(values, "apply");
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      const revision = await manager.apply(id, { partition, approvedBy: by });
      if (flag(values, "json")) {
        json(io, revision);
        return EXIT.ok;
      }
      const card = await ledger.getCard(partition, revision.tool);
      println(io.stdout, [appliedLine(revision, partition), "", ...renderRevision(revision)]);
      if (card) println(io.stdout, ["", ...renderLearned(card)]);
      return EXIT.ok;
    });
  },
};

const dismiss: Command = {
  name: "dismiss",
  summary: "dismiss a proposed revision",
  help: `Usage: tool-lessons dismiss ID [--by NAME] [--json]

Dismisses a proposed revision; the card is not touched. The tool is reviewed again once it has
new calls, but nothing the dismissed revision held is proposed again (refused as turned_down).

Options:
  --by NAME               who dismissed it (kept on the revision)
  --json                  print the dismissed revision as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons dismiss 0mx35itpy000037c6f33e15 --by alice
`,
  async run(argv, io) {
    const { values, target: id } = oneTarget(argv, { name: "a revision ID", label: "the revision ID", by: true });
    const by = nonEmpty(stringOption(values, "by"), "--by");
    return withLedger(values, io, async ({ manager, partition }) => {
      const revision = await manager.dismiss(id, { partition, ...(by !== undefined ? { by } : {}) });
      if (flag(values, "json")) json(io, revision);
      else println(io.stdout, `dismissed revision ${revision.id} of ${revision.tool}${by ? ` (by ${by})` : ""}`);
      return EXIT.ok;
    });
  },
};

const undo: Command = {
  name: "undo",
  summary: "take back the newest applied revision of a tool",
  help: `Usage: tool-lessons undo TOOL --by NAME [--json]

Takes back the newest applied revision of TOOL, restoring what its card learned before (synthetic
examples that gave way included). Refused if the card was changed after that revision. Agents
already running over the ledger serve the card as it was from their next turn.

Options:
  --by NAME               who approved the undo (required)
  --json                  print the undone revision as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons undo search_flights --by alice
`,
  async run(argv, io) {
    const { values, target: tool } = oneTarget(argv, { name: "a tool name", label: "the tool name", by: true });
    const by = requiredBy(values, "undo");
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      const revision = await manager.undo(tool, { partition, approvedBy: by });
      if (flag(values, "json")) {
        json(io, revision);
        return EXIT.ok;
      }
      const card = await ledger.getCard(partition, tool);
      println(io.stdout, undoneLine(revision, partition, by));
      if (card) println(io.stdout, ["", ...renderLearned(card)]);
      return EXIT.ok;
    });
  },
};

// ------------------------------------------------------------------ history / flags / cards

const history: Command = {
  name: "history",
  summary: "revisions of a tool, newest first",
  help: `Usage: tool-lessons history TOOL [--json]

Every revision of TOOL, newest first: status, what it added, evidence, routing ranks, refusals,
who approved, dismissed or undid it (and why, when the effect check undid it), and for an applied
revision its measured effect (see \`tool-lessons effects\`).

Options:
  --json                  print the revisions as a JSON array
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons history search_flights
`,
  async run(argv, io) {
    const { values, target: tool } = oneTarget(argv, { name: "a tool name", label: "the tool name", by: false });
    return withLedger(values, io, async ({ ledger, manager, partition }) => {
      const revisions = await manager.history(tool, { partition });
      if (revisions.length === 0 && !(await ledger.getCard(partition, tool))) {
        throw new NotFound(
          `No tool "${tool}" is registered in partition "${partition}"; \`tool-lessons cards\` lists them.`,
        );
      }
      if (flag(values, "json")) {
        json(io, revisions);
        return EXIT.ok;
      }
      if (revisions.length === 0) println(io.stdout, `no revisions of ${tool} yet`);
      const effects = new Map((await manager.effects({ partition, tools: [tool] })).map((e) => [e.id, e]));
      revisions.forEach((r, i) =>
        println(io.stdout, [...(i > 0 ? [""] : []), ...renderRevision(r, effects.get(r.id))]),
      );
      return EXIT.ok;
    });
  },
};

const effects: Command = {
  name: "effects",
  summary: "whether each applied lesson helped: what it answered, before and after",
  help: `Usage: tool-lessons effects [--tool NAME ...] [--undo --by NAME] [--json]

For each applied revision: the evidence it answered (its tool's refused calls of that error
class, its misses, its confusions with that neighbour) counted in the window its review read and
in the records since it was applied. "helped" when a rate fell past chance, "hurt" when one rose,
"no effect" when none moved; "not enough data" until each side has 20 opportunities. A lesson
with no effect or a negative one is FLAGGED. Counts only: no value, no request text.

Options:
  --tool NAME             only this tool's revisions (repeatable)
  --undo                  undo each flagged revision that is its tool's newest applied one,
                          recording the reason on it
  --by NAME               who undoes (required with --undo)
  --json                  print the effects as a JSON array
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons effects
  tool-lessons effects --undo --by alice
`,
  async run(argv, io) {
    const options: OptionSpec = {
      ...LEDGER_OPTIONS,
      ...JSON_OPTION,
      tool: { type: "string", multiple: true },
      undo: { type: "boolean" },
      by: { type: "string" },
    };
    const { values } = parseCommandArgs(argv, options);
    const undo = flag(values, "undo");
    const by = undo ? requiredBy(values, "effects --undo") : undefined;
    const tools = stringList(values, "tool");
    return withLedger(values, io, async ({ manager, partition }) => {
      const found = await manager.effects({
        partition,
        ...(tools.length > 0 ? { tools } : {}),
        ...(undo ? { undoFlagged: true, by } : {}),
      });
      if (flag(values, "json")) {
        json(io, found);
        return EXIT.ok;
      }
      if (found.length === 0) println(io.stdout, "no applied revision to measure");
      for (const e of found) {
        const undone = e.undone ? "  (undone)" : "";
        println(io.stdout, `${e.tool}  revision ${e.id}: ${effectLine(e)}${undone}`);
      }
      const undone = found.filter((e) => e.undone).length;
      if (undone > 0) {
        const what = undone === 1 ? "1 flagged revision" : `${undone} flagged revisions`;
        println(io.stdout, `undid ${what}; ${servedFromNextTurn(`the cards without ${undone === 1 ? "it" : "them"}`)}`);
      }
      return EXIT.ok;
    });
  },
};

/** The commands over revisions, in the order `--help` lists them. */
export const REVISION_COMMANDS: readonly Command[] = [review, apply, dismiss, undo, history, effects];
