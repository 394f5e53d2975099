import { timeOrderedId } from "../../src/ledger/keys.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { Revision } from "../../src/ledger/schema.js";

/** Store a proposed revision of a tool making `changes` (what it adds), against its card as it is now. */
export async function proposeRevision(
  ledger: Ledger,
  partition: string,
  tool: string,
  changes: Partial<Pick<Revision, "notesAdded" | "queriesAdded">>,
): Promise<Revision> {
  const card = await ledger.getCard(partition, tool);
  if (!card) throw new Error(`no card for ${tool} in ${partition}: register the tool first`);
  const now = Date.now();
  const revision: Revision = {
    v: 1,
    id: timeOrderedId(now),
    partition,
    tool,
    status: "proposed",
    notesAdded: [],
    queriesAdded: [],
    avoidAdded: [],
    callExample: null,
    queriesWithdrawn: [],
    displaced: [],
    queriesDisplaced: [],
    evidence: [],
    ranks: [],
    refused: [],
    proposer: "test",
    cardVersionBefore: card.version,
    createdAt: now,
    updatedAt: now,
    ...changes,
  };
  await ledger.putRevision(revision);
  return revision;
}

/** Store a proposed revision adding one learned example request to a tool. */
export function proposeExample(ledger: Ledger, partition: string, tool: string, text: string): Promise<Revision> {
  return proposeRevision(ledger, partition, tool, { queriesAdded: [text] });
}
