import type { PutOperation } from "@langchain/langgraph";
import { RevisionConflict } from "../../errors.js";
import { type CasFailure, casField, compareAndSet } from "../cas.js";
import { announcedWrite } from "../versions.js";
import type { Revision, RevisionStatus, ToolCard } from "../schema.js";
import type { CardRows } from "./card-rows.js";
import { type RevisionClaim, RevisionRows } from "./revisions.js";
import { type LedgerContext, namespaceOf } from "./store-io.js";

export type { RevisionClaim } from "./revisions.js";

/** One change to a partition's cards and revisions, written together by {@link commit}. */
export interface LedgerChange {
  cards?: ToolCard[];
  revisions?: Revision[];
  /** The version every stored card must be at (0: no card yet); checked before anything is written. */
  expectVersion?: number;
  /**
   * Per revision id, the status its stored row must have for the change to be written (`null`:
   * no row yet). A revision not named here must still have the status it had when `commit` read
   * it.
   */
  expectStatus?: Record<string, RevisionStatus | null>;
  /** Claims of a review on the next revision of a tool (see `RevisionClaim`). */
  claims?: RevisionClaim[];
}

/**
 * The one write of cards and revisions: everything is checked first (partition, expected
 * version, schemas), then written as ONE compare-and-set (`../cas.ts`): every card must still be
 * at the version read, every revision at the status expected, every claim unmoved. The store
 * settles it (one transaction on `SqliteStore` and on the store `openPostgresStore` returns,
 * across processes; in this process for any other store). A crash leaves the old state or the
 * new, never a card without its revision; of two writers racing, one writes and the other gets
 * `RevisionConflict` naming who won, having written nothing. Returns the saved cards (versions
 * bumped).
 * @throws InvalidInput for a card of another partition, or a card or revision that does not
 *   match its schema.
 * @throws RevisionConflict when a check failed (`expectVersion` given and a card moved on, or a
 *   row changed between the read and the write): `context.winner` names who won (the operator who applied, dismissed or
 *   undid the revision, or the revision another review claimed the tool with), `context.reason`
 *   says which (`revision`, `card`, `claim`).
 */
export async function commit(
  ctx: LedgerContext,
  collections: { cards: CardRows; revisions: RevisionRows },
  partition: string,
  change: LedgerChange,
): Promise<ToolCard[]> {
  const now = Date.now();
  const { saved, checks: cardChecks } = await collections.cards.next(
    partition,
    change.cards ?? [],
    change.expectVersion,
    now,
  );
  const revisions = collections.revisions.next(change.revisions ?? []);
  const { checks: revisionChecks, writes: claimWrites } = await collections.revisions.casOf(
    partition,
    revisions,
    change.expectStatus ?? {},
    change.claims ?? [],
  );
  const writes: PutOperation[] = [
    ...saved.map((c) => put(namespaceOf(ctx, partition, "cards"), c.name, c)),
    ...revisions.map((r) => put(namespaceOf(ctx, partition, "revisions"), r.id, r)),
    ...claimWrites,
  ];
  if (writes.length === 0) return saved;
  // Revision and claim checks first: when both fail, the conflict names the operator who won.
  const checks = [...revisionChecks, ...cardChecks];
  const set = () => compareAndSet(ctx.store, checks, writes);
  const outcome =
    saved.length > 0
      ? await announcedWrite(ctx, [{ partition, kind: "cards", tools: saved.map((c) => c.name) }], set)
      : await set();
  if (!outcome.ok) throw conflict(collections.revisions, partition, checks, outcome.failed);
  return saved;
}

function put(namespace: string[], key: string, value: object): PutOperation {
  return { namespace, key, value: value as Record<string, unknown>, index: false };
}

/** The conflict of the first failed check, naming who won. */
function conflict(
  revisions: RevisionRows,
  partition: string,
  checks: Parameters<typeof compareAndSet>[1],
  failed: readonly CasFailure[],
): RevisionConflict {
  const { check: index, item } = failed[0];
  const check = checks[index];
  if (revisions.isClaim(check)) {
    const winner = String(casField(item?.value, "revision"));
    return new RevisionConflict(
      `Another review proposed revision ${winner} for "${check.key}" meanwhile; this review's proposal for it is not stored.`,
      { context: { reason: "claim", partition, tool: check.key, winner } },
    );
  }
  if (check.field === "status") {
    const { status, by } = RevisionRows.winnerOf(item);
    return new RevisionConflict(
      `Revision ${check.key} was ${status}${by ? ` by ${by}` : ""} meanwhile (expected ${check.oneOf.map(String).join(" or ")}); nothing was written.`,
      { context: { reason: "revision", partition, id: check.key, status, winner: by } },
    );
  }
  const version = casField(item?.value, "version") ?? 0;
  return new RevisionConflict(
    `The card of "${check.key}" is at version ${String(version)}: it was changed since (by another writer, or meanwhile); nothing was written.`,
    { context: { reason: "card", partition, tool: check.key, version } },
  );
}
