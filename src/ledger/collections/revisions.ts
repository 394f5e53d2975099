import type { Item, PutOperation } from "@langchain/langgraph";
import { clipForMessage, NotFound } from "../../errors.js";
import { byId } from "../../internal.js";
import { type CasCheck, casField } from "../cas.js";
import { type Revision, RevisionSchema, type RevisionStatus, SCHEMA_VERSION } from "../schema.js";
import { checked, type LedgerContext, listNamespace, namespaceOf, parseItem, parseItems } from "./store-io.js";

/**
 * A review's claim on the next revision of a tool: written with the new revision, in the same
 * compare-and-set, so two reviews that saw the same history cannot both propose for the tool.
 */
export interface RevisionClaim {
  tool: string;
  /** The id of the new revision. */
  revision: string;
  /** The newest revision of the tool the review saw (any status), `null` when it saw none. */
  seen: string | null;
}

/**
 * The label under the revisions namespace where the claims live (`[root, partition,
 * "revisions", "~claims"]`, key = raw tool name → `{ revision }`): one level below the
 * revisions, so a listing of revisions never sees them; `~` followed by no two hex digits is no
 * encoded tool name.
 */
const CLAIMS_LABEL = "~claims";

/**
 * Revisions: reviewable changes to one tool card (proposed → applied | dismissed; applied →
 * undone), with the evidence they rest on.
 *
 * Key layout: `[root, partition, "revisions"]`, key = the revision's time-ordered id → `Revision`.
 *
 * Invariants:
 * - written only through `commit`, in the same store batch as the card change they make; every
 *   write is a compare-and-set on the status the row had (`../cas.ts`: one transaction on
 *   SQLite and Postgres, in this process for other stores): apply and dismiss need `proposed`,
 *   undo needs `applied`, a new revision needs no row. Of two operators racing, one writes and
 *   the other gets `RevisionConflict` naming who won, and writes nothing;
 * - a new revision from a review claims the tool (`[…, "revisions", "~claims"]`, key = tool →
 *   the newest revision id) in the same compare-and-set, on the newest revision that review saw:
 *   of two reviews that read the same history, only the first proposes for the tool;
 * - never pruned: they are the history undo and review read;
 * - a corrupt row is skipped (left out of a listing, `null` from `getRevision`, `NotFound` from
 *   `requireRevision`), counted in `skippedRows` and warned about.
 */
export class RevisionRows {
  constructor(private readonly ctx: LedgerContext) {}

  async get(partition: string, id: string): Promise<Revision | null> {
    const item = await this.ctx.store.get(namespaceOf(this.ctx, partition, "revisions"), id);
    return item ? parseItem(this.ctx, RevisionSchema, item) : null;
  }

  /** @throws NotFound */
  async require(partition: string, id: string): Promise<Revision> {
    const revision = await this.get(partition, id);
    if (!revision) {
      throw new NotFound(`No revision "${clipForMessage(id)}" in partition "${clipForMessage(partition, 256)}".`, {
        context: { id: clipForMessage(id), partition: clipForMessage(partition, 256) },
      });
    }
    return revision;
  }

  /** Revisions, newest first, optionally of one tool and/or one status. */
  async list(partition: string, options: { tool?: string; status?: RevisionStatus }): Promise<Revision[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "revisions"));
    return parseItems(this.ctx, RevisionSchema, items)
      .filter(
        (r) =>
          (options.tool === undefined || r.tool === options.tool) &&
          (options.status === undefined || r.status === options.status),
      )
      .sort((a, b) => byId(b, a));
  }

  /**
   * The revisions as they are to be written (current schema version). Writes nothing.
   * @throws InvalidInput for a revision that does not match its schema.
   */
  next(revisions: readonly Revision[]): Revision[] {
    return revisions.map((r) => checked(RevisionSchema, { ...r, v: SCHEMA_VERSION }, `revision "${r.id}"`));
  }

  /**
   * The compare-and-set checks and writes of storing `revisions` (as {@link next} gave them) and
   * `claims`: each revision's stored status must be `expectStatus[id]` when given (`null`: no
   * row yet), else what it is now (read here, in one batch); each claim must still point at the
   * newest revision its review saw (or be absent).
   */
  async casOf(
    partition: string,
    revisions: readonly Revision[],
    expectStatus: Readonly<Record<string, RevisionStatus | null>>,
    claims: readonly RevisionClaim[],
  ): Promise<{ checks: CasCheck[]; writes: PutOperation[] }> {
    const namespace = namespaceOf(this.ctx, partition, "revisions");
    const unknown = revisions.filter((r) => !Object.hasOwn(expectStatus, r.id));
    const read = unknown.length === 0 ? [] : await this.ctx.store.batch(unknown.map((r) => ({ namespace, key: r.id })));
    const current = new Map(unknown.map((r, i) => [r.id, casField(read[i]?.value, "status")]));
    const checks: CasCheck[] = revisions.map((r) => ({
      namespace,
      key: r.id,
      field: "status",
      oneOf: [Object.hasOwn(expectStatus, r.id) ? (expectStatus[r.id] ?? null) : (current.get(r.id) ?? null)],
    }));
    const claimNs = [...namespace, CLAIMS_LABEL];
    const writes: PutOperation[] = [];
    for (const claim of claims) {
      checks.push({
        namespace: claimNs,
        key: claim.tool,
        field: "revision",
        oneOf: claim.seen === null ? [null] : [null, claim.seen],
      });
      writes.push({ namespace: claimNs, key: claim.tool, value: { revision: claim.revision }, index: false });
    }
    return { checks, writes };
  }

  /** Whether a failed check is on a claim row (another review proposed for the tool meanwhile). */
  isClaim(check: CasCheck): boolean {
    return check.namespace[check.namespace.length - 1] === CLAIMS_LABEL;
  }

  /** Who closed or approved a stored revision row, and its status, for a conflict message. */
  static winnerOf(item: Item | null): { status: string; by: string | undefined } {
    const status = casField(item?.value, "status");
    const by = casField(item?.value, status === "applied" ? "approvedBy" : "closedBy");
    return { status: status === null ? "gone" : String(status), by: by === null ? undefined : String(by) };
  }
}
