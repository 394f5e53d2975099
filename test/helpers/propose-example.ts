import { timeOrderedId } from "../../src/ledger/keys.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { Revision } from "../../src/ledger/schema.js";

/** Store a proposed revision adding one learned example request to a tool, against its card as it is now. */
export async function proposeExample(ledger: Ledger, partition: string, tool: string, text: string): Promise<Revision> {
  const card = await ledger.getCard(partition, tool);
  if (!card) throw new Error(`no card for ${tool} in ${partition}`);
  const now = Date.now();
  const revision: Revision = {
    v: 1,
    id: timeOrderedId(now),
    partition,
    tool,
    status: "proposed",
    notesAdded: [],
    queriesAdded: [text],
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
  };
  await ledger.putRevision(revision);
  return revision;
}
