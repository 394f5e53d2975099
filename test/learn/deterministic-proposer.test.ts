import { beforeEach, describe, expect, it } from "vitest";
import { maskArgs } from "../../src/text/mask.js";
import { detect, type FailureGroup } from "../../src/learn/detect.js";
import {
  DeterministicProposer,
  rankExampleCandidates,
  sharedPhrase,
  usageNote,
} from "../../src/learn/deterministic-proposer.js";
import { buildExampleCall } from "../../src/learn/example-call.js";
import { buildToolEvidence } from "../../src/learn/proposer.js";
import { vetProposal } from "../../src/learn/vet.js";
import { evidenceMaps } from "../../src/learn/vet-context.js";
import { vetExampleCall } from "../../src/learn/vet-lines.js";
import { call, card, resetIds, route, str, turn } from "./learn-fixtures.js";

beforeEach(() => resetIds());

const group = (over: Partial<FailureGroup> = {}): FailureGroup => ({
  tool: "start_recovery",
  errorClass: "validation",
  errorMessage: "claim_ref is invalid",
  callIds: ["c1", "c2"],
  argNames: ["claim_ref"],
  shapes: [{ name: "claim_ref", calls: 2, kinds: ["string"], shapes: [{ shape: "######", count: 2 }] }],
  ...over,
});
const accepted = [
  { name: "claim_ref", calls: 3, kinds: ["string" as const], shapes: [{ shape: "CW-######", count: 3 }] },
];

describe("usageNote", () => {
  it("says which format works and which was refused", () => {
    expect(usageNote(group(), accepted)).toBe(
      "claim_ref must look like CW-######; calls with ###### were refused (validation).",
    );
  });

  it("never shows a refused shape that is not a format", () => {
    const g = group({
      shapes: [{ name: "claim_ref", calls: 2, kinds: ["string"], shapes: [{ shape: "Sarah-**", count: 2 }] }],
    });
    expect(usageNote(g, accepted)).toBe(
      "claim_ref must look like CW-######; calls with another format were refused (validation).",
    );
  });

  it("falls back to the error class and masked message, within maxLength", () => {
    expect(usageNote(group({ errorClass: "not_found", errorMessage: "no claim #####" }), [])).toBe(
      'Look up claim_ref first; do not guess them: 2 calls failed (not_found) with "no claim #####".',
    );
    expect(usageNote(group({ errorClass: "rate_limit", errorMessage: "" }), [])).toBe(
      "Do not call it again in quick succession: 2 calls failed (rate_limit).",
    );
    const long = usageNote(group({ errorMessage: "x ".repeat(300) }), [], 120);
    expect(long?.length).toBeLessThanOrEqual(120);
    expect(long).toContain("…");
  });
});

describe("rankExampleCandidates", () => {
  const misses = [
    { requestId: "q1", request: "kick off subrogation on the claim" },
    { requestId: "q2", request: "start subrogation against the other driver" },
    { requestId: "q3", request: "subrogation for this claim please" },
    { requestId: "q4", request: "what time is it" },
    { requestId: "q5", request: "kick off  subrogation on the claim" },
  ];

  it("ranks the most representative wording first, merges identical wordings and drops unsupported ones", () => {
    const ranked = rankExampleCandidates(misses, "start_recovery Start a recovery on a claim.");
    expect(ranked[0].text).toBe("kick off subrogation on the claim");
    expect(ranked[0].cites.slice(0, 2)).toEqual(["q1", "q5"]);
    expect(ranked.map((r) => r.text)).not.toContain("what time is it");
    for (const r of ranked) expect(new Set(r.cites).size).toBeGreaterThanOrEqual(2);
  });

  it("prefers a wording that adds words the routing text lacks", () => {
    const pair = [
      { requestId: "a", request: "recovery claim open" },
      { requestId: "b", request: "subrogation claim open" },
    ];
    expect(rankExampleCandidates(pair, "open a recovery on a claim")[0].text).toBe("subrogation claim open");
    expect(rankExampleCandidates(pair, "subrogation of a claim")[0].text).toBe("recovery claim open");
  });

  it("skips near-duplicates and excluded texts, and respects the limit", () => {
    const dupes = [
      { requestId: "a", request: "subrogation claim now" },
      { requestId: "b", request: "subrogations claims now" },
      { requestId: "c", request: "subrogation of claim for the car" },
    ];
    expect(rankExampleCandidates(dupes, "").map((r) => r.text)).toHaveLength(2);
    expect(rankExampleCandidates(dupes, "", { exclude: ["subrogation claim now"] }).map((r) => r.text)).toEqual([
      "subrogation of claim for the car",
    ]);
    expect(rankExampleCandidates(misses, "", { limit: 1 })).toHaveLength(1);
  });
});

describe("sharedPhrase", () => {
  it("uses the words every request has, in their order", () => {
    expect(
      sharedPhrase([
        { id: "a", request: "refer this large loss" },
        { id: "b", request: "this is a large loss, refer it" },
      ]),
    ).toEqual({ phrase: "refer large loss", covered: ["a", "b"] });
  });

  it("covers the requests greedily when no word is in all, skipping generic words", () => {
    const found = sharedPhrase([
      { id: "a", request: "I need help with a large loss" },
      { id: "b", request: "need help with a big fire" },
      { id: "c", request: "fire in the warehouse, large" },
    ]);
    expect(found?.covered).toEqual(["a", "b", "c"]);
    expect(found?.phrase).not.toMatch(/need|help/);
  });
});

/** A small claims desk: start_recovery is refused without the CW- prefix, missed for "subrogation", and confused with refer_llu. */
function claimsDesk() {
  const calls = [
    call("start_recovery", "error", maskArgs({ claim_ref: "104233" }), {
      errorClass: "validation",
      errorMessage: "claim_ref is invalid",
    }),
    call("start_recovery", "error", maskArgs({ claim_ref: "998812" }), {
      errorClass: "validation",
      errorMessage: "claim_ref is invalid",
    }),
    call("start_recovery", "success", maskArgs({ claim_ref: "CW-104233", file_mb: 3 })),
    call("start_recovery", "success", maskArgs({ claim_ref: "CW-555555", file_mb: 12 })),
  ];
  const turns = [
    turn("q1", "kick off subrogation on claim CW-######", [], { threadId: "a" }),
    turn("q2", "start recovery on claim CW-######", [{ tool: "start_recovery" }], { threadId: "a" }),
    turn("q3", "subrogation on claim CW-###### please", [], { threadId: "b" }),
    turn("q4", "start recovery on CW-######", [{ tool: "start_recovery" }], { threadId: "b" }),
    turn("q5", "refer this large loss", [{ tool: "start_recovery" }], { threadId: "c" }),
    turn("q6", "refer it to large loss unit", [{ tool: "refer_llu" }], { threadId: "c" }),
    turn("q7", "large loss referral for the warehouse fire", [{ tool: "refer_llu" }], { threadId: "d" }),
  ];
  const routes = [route("q7", ["start_recovery", "lookup_claim"], { threadId: "d" })];
  const tools = ["start_recovery", "refer_llu", "lookup_claim"];
  return { calls, turns, routes, tools };
}

describe("DeterministicProposer", () => {
  it("proposes a note per repeated failure, missed wordings as examples and a Not-for line, and the vet keeps them all", async () => {
    const desk = claimsDesk();
    const detection = detect({ ...desk, settings: { maxCallsPerTool: 24 } });
    const td = detection.tools.get("start_recovery");
    if (!td) throw new Error("no detection");
    const evidence = buildToolEvidence({
      card: card("start_recovery", {}, "Start a recovery on a claim."),
      detection: td,
      tools: desk.tools.map((name) => ({ name, description: `The ${name} tool.` })),
    });
    expect(evidence.neighbours[0].name).toBe("refer_llu");
    expect(JSON.stringify(evidence)).not.toMatch(/104233|998812|555555/);

    const proposal = await new DeterministicProposer().propose(evidence);
    expect(proposal.notes).toEqual([
      {
        text: "claim_ref must look like CW-######; calls with ###### were refused (validation).",
        cites: [desk.calls[0].id, desk.calls[1].id],
      },
    ]);
    expect(proposal.examples.map((e) => e.text)).toContain("kick off subrogation on claim CW-######");
    expect(proposal.notFor).toEqual([
      { text: "Not for large loss requests; use refer_llu.", tool: "refer_llu", cites: ["q5", "q7"] },
    ]);

    const result = vetProposal(proposal, {
      tool: "start_recovery",
      registeredTools: desk.tools,
      learned: { examples: [], notes: [], notFor: [] },
      ...evidenceMaps(td),
      containsValue: () => false,
    });
    expect(result.refused).toEqual([]);
    expect(result.kept).toEqual(proposal);

    const exampleCall = buildExampleCall(td.successes, td.refusedCount, 2);
    expect(exampleCall).toBe('Example call: {"claim_ref": "CW-######", "file_mb": "<number>"}');
    expect(vetExampleCall(exampleCall ?? "", { containsValue: () => false })).toBeNull();
  });

  it("respects thresholds, the room left on the card and lines already kept", async () => {
    const desk = claimsDesk();
    const td = detect(desk).tools.get("start_recovery");
    if (!td) throw new Error("no detection");
    const full = card("start_recovery", {
      notes: Array.from({ length: 4 }, (_, i) => ({ text: `note ${i}`, revisionId: "r" })),
      notFor: [{ text: "Not for large losses; use refer_llu.", tool: "refer_llu", revisionId: "r" }],
    });
    const evidence = buildToolEvidence({ card: full, detection: td, tools: [], settings: { minMisses: 3 } });
    const proposal = await new DeterministicProposer().propose(evidence);
    expect(proposal.notes).toEqual([]);
    expect(proposal.notFor).toEqual([]);
    for (const e of proposal.examples) expect(e.cites.length).toBeGreaterThanOrEqual(3);
  });

  it("never writes a Not-for line in the words of the tool's own description", async () => {
    const turns = [
      turn("q1", "recovery on a large loss claim", [{ tool: "start_recovery" }], { threadId: "a" }),
      turn("q2", "large loss unit", [{ tool: "refer_llu" }], { threadId: "a" }),
      turn("q3", "claim recovery for the warehouse loss", [{ tool: "start_recovery" }], { threadId: "b" }),
      turn("q4", "refer the warehouse", [{ tool: "refer_llu" }], { threadId: "b" }),
    ];
    const td = detect({ calls: [], turns, routes: [], tools: ["start_recovery", "refer_llu"] }).tools.get(
      "start_recovery",
    );
    if (!td) throw new Error("no detection");
    const evidence = buildToolEvidence({
      card: card("start_recovery", {}, "Start a recovery on a claim."),
      detection: td,
      tools: [],
    });
    const [line] = (await new DeterministicProposer().propose(evidence)).notFor;
    expect(line.text).toBe("Not for loss requests; use refer_llu.");
  });

  it("takes a swapped ranking function", async () => {
    const desk = claimsDesk();
    const td = detect(desk).tools.get("start_recovery");
    if (!td) throw new Error("no detection");
    const evidence = buildToolEvidence({ card: card("start_recovery"), detection: td, tools: [] });
    const proposer = new DeterministicProposer({
      rankExamples: () => [{ text: "picked", cites: ["q1", "q3"], score: 1, novelWords: [] }],
    });
    expect((await proposer.propose(evidence)).examples).toEqual([{ text: "picked", cites: ["q1", "q3"] }]);
  });
});
