import { describe, expect, it } from "vitest";
import { compareRuns } from "../../src/evaluate/compare.js";
import type { CaseResult } from "../../src/evaluate/confusion.js";
import { summarizeSelection } from "../../src/evaluate/harness.js";
import { lintDescriptions } from "../../src/evaluate/lint-descriptions.js";
import { escapeHtml, heatmapLabels, renderReport, reportData } from "../../src/evaluate/report.js";

const HOSTILE_TOOL = `<img src=x onerror="alert(1)">`;
const HOSTILE_TURN = `</script><script>alert("turn")</script> & more`;

function run(cases: { turn: string; expect: string[]; picks: (string | null)[] }[], label = "router") {
  const results: CaseResult[] = cases.map((c, i) => ({
    id: `line ${i + 1}`,
    turn: c.turn,
    expect: c.expect,
    outcomes: c.picks.map((tool) => ({ tool })),
  }));
  return summarizeSelection({
    mode: "router",
    label,
    runs: 2,
    tools: ["search", HOSTILE_TOOL],
    minScore: 0.1,
    warnings: [],
    seconds: 0,
    cases: results,
  });
}

const NOW = run([
  { turn: HOSTILE_TURN, expect: [HOSTILE_TOOL], picks: [HOSTILE_TOOL, "search"] },
  { turn: "find cats", expect: ["search"], picks: ["search", "search"] },
  { turn: "hi", expect: [], picks: [null, "search"] },
]);

describe("the HTML report", () => {
  it("escapes every untrusted text: tool names, turns, in content, attributes and the embedded JSON", async () => {
    const lint = await lintDescriptions([
      { name: HOSTILE_TOOL, description: `Ignore <b>this</b>` },
      { name: "search", description: "Search." },
    ]);
    const html = renderReport({ run: NOW, lint, generatedAt: "2026-12-01 10:00 UTC", title: `<i>t</i>` });
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>this");
    expect(html).not.toContain("<i>t</i>");
    expect(html).toContain(escapeHtml(HOSTILE_TOOL));
    // The only <script> is the data block, and no text closes it early.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    const json = /<script type="application\/json" id="tool-lessons-report">([\s\S]*?)<\/script>/.exec(html)![1];
    expect(json).not.toContain("<");
    expect(JSON.parse(json).run.agreement.disagreements[0].turn).toBe(HOSTILE_TURN);
    expect(escapeHtml(`a&b<c>"d"'e'`)).toBe("a&amp;b&lt;c&gt;&quot;d&quot;&#39;e&#39;");
  });

  it("is self-contained: no URL to fetch, a policy that forbids fetching", () => {
    const html = renderReport({ run: NOW, generatedAt: "x" });
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    );
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<link /);
  });

  it("heatmap cells carry the matrix counts, by index into its labels", () => {
    const html = renderReport({ run: NOW, generatedAt: "x" });
    const cells = [
      ...html.matchAll(/<td class="cell[^"]*" data-row="(\d+)" data-col="(\d+)" data-count="(\d+)"[^>]*>(\d*)<\/td>/g),
    ];
    expect(cells).toHaveLength(NOW.matrix.labels.length ** 2);
    for (const [, r, c, n, text] of cells) {
      expect(Number(n)).toBe(NOW.matrix.counts[Number(r)][Number(c)]);
      expect(text).toBe(Number(n) === 0 ? "" : n);
    }
  });

  it("keeps the tools with the most errors when the matrix is large, and says so", () => {
    const cases = Array.from({ length: 30 }, (_, i) => ({
      turn: `t${i}`,
      expect: [`tool${i}`],
      picks: [i < 5 ? "tool0" : `tool${i}`, `tool${i}`],
    }));
    const big = run(cases);
    const keep = heatmapLabels(big, 6);
    expect(keep.map((i) => big.matrix.labels[i])).toEqual(["tool0", "tool1", "tool2", "tool3", "tool4", null]);
    const html = renderReport({ run: big, generatedAt: "x" }, { maxHeatmapLabels: 6 });
    expect(html).toContain("Showing 6 of 31 labels");
    expect(reportData({ run: big, generatedAt: "x" }, { maxHeatmapLabels: 6 }).heatmap).toEqual({
      labels: keep,
      of: 31,
    });
  });

  it("shows before and after with the verdicts, the ledger's sections, and renders the same bytes twice", () => {
    const before = run(
      [
        { turn: HOSTILE_TURN, expect: [HOSTILE_TOOL], picks: ["search", "search"] },
        { turn: "find cats", expect: ["search"], picks: ["search", "search"] },
        { turn: "hi", expect: [], picks: ["search", "search"] },
      ],
      "before",
    );
    const input = {
      run: NOW,
      before,
      comparison: compareRuns(before, NOW),
      ledger: { partition: "acme", revisions: [], rules: [], flags: [] },
      generatedAt: "2026-12-01 10:00 UTC",
    };
    const html = renderReport(input);
    expect(html).toContain("accuracy before (before)");
    expect(html).toContain('<h2 id="revisions">Pending revisions (partition acme)</h2>');
    expect(html).toContain("No revision is waiting.");
    expect(renderReport(input)).toBe(html);
    expect(html).not.toContain('id="effects"');
    const measured = renderReport({
      ...input,
      ledger: {
        ...input.ledger,
        effects: [
          {
            id: "r1",
            tool: "lookup_order",
            partition: "acme",
            verdict: "no_effect",
            flag: "no measured effect on what it answered (failure:validation 12/24 → 12/24)",
            targets: [
              {
                target: { kind: "failure", errorClass: "validation" },
                before: { opportunities: 24, events: 12 },
                after: { opportunities: 24, events: 12 },
                change: 0,
                verdict: "no_effect",
              },
            ],
          },
        ],
      },
    });
    expect(measured).toContain('<a href="#effects">effects</a>');
    expect(measured).toContain(
      '<tr data-revision="r1" data-verdict="no_effect" class="flagged"><td>lookup_order</td><td><code>r1</code></td><td>FLAGGED no effect</td><td>failure:validation 12/24 → 12/24</td></tr>',
    );
    const none = renderReport({ run: NOW, generatedAt: "x", ledger: { missing: "No ledger here." } });
    expect(none).toContain("<p>No ledger here.</p>");
    expect(none).not.toContain('id="revisions"');
  });
});

describe("the report's ranking and no-tool figures", () => {
  it("shows recall@k and the no-tool AUROC when the run has a ranking and scores, and not otherwise", () => {
    const ranked = summarizeSelection({
      mode: "router",
      label: "router",
      runs: 1,
      tools: ["search", "other"],
      minScore: 0.1,
      warnings: [],
      seconds: 0,
      k: [1, 2],
      cases: [
        { id: "a", turn: "find cats", expect: ["search"], outcomes: [{ tool: "other" }], ranked: ["other", "search"] },
        { id: "b", turn: "find dogs", expect: ["search"], outcomes: [{ tool: "search" }], ranked: ["search", "other"] },
        { id: "c", turn: "hi", expect: [], outcomes: [{ tool: null }], ranked: ["other", "search"] },
      ],
      scores: [0.4, 0.6, 0.05],
    });
    const html = renderReport({ run: ranked, generatedAt: "x" });
    expect(html).toContain(
      `<div class="value">50.0%</div><div class="what">recall@1: a right tool among routing&#39;s first 1`,
    );
    expect(html).toContain(
      `<div class="value">100.0%</div><div class="what">recall@2: a right tool among routing&#39;s first 2`,
    );
    expect(html).toContain(`<div class="value">1.000</div><div class="what">&quot;no tool&quot; AUROC`);
    expect(renderReport({ run: NOW, generatedAt: "x" })).not.toContain("recall@");
  });
});
