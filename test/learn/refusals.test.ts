import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { RefusalReasonSchema, RefusalSchema, type Revision, RevisionSchema } from "../../src/ledger/schema.js";
import type { AugmentRefusalCode } from "../../src/learn/augment.js";
import type { ProposalRejectionReason } from "../../src/learn/types.js";
import { revision } from "../ledger/contract.js";

/**
 * One list of refusal reasons for the vet, both proposers and augmentation; rows written with
 * an older name still read.
 */
describe("refusal reasons", () => {
  it("are one list: the proposer's and augmentation's codes are in it", () => {
    const proposal: ProposalRejectionReason[] = ["model_error", "reply_not_json", "reply_wrong_shape"];
    const augment: AugmentRefusalCode[] = [
      "reply_not_json",
      "reply_wrong_shape",
      "empty",
      "wrong_count",
      "fenced_json",
    ];
    for (const r of [...proposal, ...augment]) expect(RefusalReasonSchema.options).toContain(r);
    expect(RefusalReasonSchema.options).not.toContain("not_json");
    expect(RefusalReasonSchema.safeParse("something_else").success).toBe(false);
  });

  it("reads legacy reasons under today's codes", () => {
    expect(RefusalSchema.parse({ kind: "augmentation", text: "", reason: "not_json" }).reason).toBe("reply_not_json");
    expect(RefusalSchema.parse({ kind: "augmentation", text: "", reason: "wrong_shape" }).reason).toBe(
      "reply_wrong_shape",
    );
    expect(RefusalSchema.parse({ kind: "note", text: " ", reason: "empty_text" }).reason).toBe("empty");
  });

  it("reads a failed proposer call stored as a note with no text as a proposal refusal; a real note stays a note", () => {
    expect(RefusalSchema.parse({ kind: "note", text: "", reason: "model_error", detail: "down" })).toEqual({
      kind: "proposal",
      text: "",
      reason: "model_error",
      detail: "down",
    });
    expect(RefusalSchema.parse({ kind: "note", text: "", reason: "empty" }).kind).toBe("note");
    expect(RefusalSchema.parse({ kind: "note", text: "Ask first.", reason: "below_threshold" }).kind).toBe("note");
  });

  it("keeps a revision row stored with the old strings readable through the ledger", async () => {
    const legacy = {
      ...revision("default", "lookup_order", "proposed"),
      refused: [
        { kind: "note", text: "", reason: "reply_not_json", detail: "the reply is not JSON" },
        { kind: "note", text: "Ask Sarah.", reason: "contains_value" },
        { kind: "augmentation", text: "", reason: "not_json" },
      ],
    };
    expect(RevisionSchema.safeParse(legacy).success).toBe(true);
    const warnings: string[] = [];
    const ledger = new Ledger(new InMemoryStore(), { failureSink: (f) => warnings.push(f.message) });
    await ledger.putRevision(legacy as unknown as Revision);
    const [read] = await ledger.listRevisions("default");
    expect(warnings).toEqual([]);
    expect(read.refused).toEqual([
      { kind: "proposal", text: "", reason: "reply_not_json", detail: "the reply is not JSON" },
      { kind: "note", text: "Ask Sarah.", reason: "contains_value" },
      { kind: "augmentation", text: "", reason: "reply_not_json" },
    ]);
  });
});
