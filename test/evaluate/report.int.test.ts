/**
 * The report in a real browser: Debian's Chromium driven by playwright-core. The page made by a
 * real `tool-lessons report` process renders without a console error, fetches nothing, runs no
 * text as code, and every heatmap cell carries the count of the JSON output.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASES } from "../cli/measure-data.js";
import { seedReportLedger } from "../cli/report-ledger.js";
import { runCliProcess, tempDir, writeJsonl } from "../cli/run-cli.js";
import { TOOLS } from "../cli/synthetic-data.js";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(
    `report.int.test.ts: skipped: no browser at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it).`,
  );

const HOSTILE_TOOL = `<img src=x onerror="window.__pwned=1">`;
const HOSTILE_TURN = `</script><script>window.__pwned=2</script> cheap plane ticket to oslo`;
const SCREENSHOT = join(import.meta.dirname, "../../test-results/report.png");

interface ReportJson {
  run: {
    matrix: { labels: (string | null)[]; counts: number[][] };
    perTool: { tool: string | null; recall: number | null; expected: number }[];
  };
  heatmap: { labels: number[] };
}

describe.skipIf(!haveChromium)("the report in Chromium", () => {
  const tmp = tempDir();
  let page: string;
  let data: ReportJson;

  beforeAll(async () => {
    const ledger = join(tmp.dir, "ledger.db");
    await seedReportLedger(ledger);
    const tools = writeJsonl(tmp.dir, "tools.jsonl", [
      ...TOOLS,
      { name: HOSTILE_TOOL, description: "Does <b>nothing</b> at all.", parameters: null },
    ]);
    const cases = writeJsonl(tmp.dir, "cases.jsonl", [
      ...CASES,
      { turn: HOSTILE_TURN, expect: [HOSTILE_TOOL, "search_flights"] },
    ]);
    page = join(tmp.dir, "report.html");
    const run = await runCliProcess([
      "report",
      "--tools",
      tools,
      "--cases",
      cases,
      "--out",
      page,
      "--ledger",
      ledger,
      "--min-score",
      "0.15",
      "--runs",
      "2",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    data = JSON.parse(run.stdout);
  });
  afterAll(() => tmp.cleanup());

  it("renders without console errors, fetches nothing, and the heatmap cells carry the JSON's numbers", async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    try {
      const tab = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      const problems: string[] = [];
      const requests: string[] = [];
      tab.on("console", (m) =>
        m.type() === "error" || m.type() === "warning" ? problems.push(`${m.type()}: ${m.text()}`) : undefined,
      );
      tab.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      tab.on("dialog", (d) => {
        problems.push(`dialog: ${d.message()}`);
        void d.dismiss();
      });
      tab.on("request", (r) => requests.push(r.url()));
      await tab.goto(pathToFileURL(page).href, { waitUntil: "load" });
      expect(problems).toEqual([]);
      expect(requests).toEqual([pathToFileURL(page).href]);
      expect(await tab.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

      const cells = await tab.$$eval("#heatmap td.cell", (tds) =>
        tds.map((td) => ({
          row: Number(td.getAttribute("data-row")),
          col: Number(td.getAttribute("data-col")),
          count: Number(td.getAttribute("data-count")),
          text: td.textContent ?? "",
        })),
      );
      const { labels, counts } = data.run.matrix;
      expect(cells).toHaveLength(data.heatmap.labels.length ** 2);
      for (const c of cells) {
        expect(c.count).toBe(counts[c.row][c.col]);
        expect(c.text).toBe(c.count === 0 ? "" : String(c.count));
      }
      expect(cells.reduce((s, c) => s + c.count, 0)).toBe(counts.flat().reduce((a, b) => a + b, 0));
      // Row headers in the matrix's order; the hostile name is text, not an element.
      const rowHeads = await tab.$$eval("#heatmap tbody th", (ths) => ths.map((th) => th.textContent));
      expect(rowHeads).toEqual(data.heatmap.labels.map((i) => labels[i] ?? "no tool"));
      expect(rowHeads).toContain(HOSTILE_TOOL);
      expect(await tab.$$eval("img, b", (els) => els.length)).toBe(0);
      expect(await tab.textContent("#disagreements, #lint-findings")).toBeTruthy();

      // Recall bars: one per expected tool, as wide as its recall.
      const bars = await tab.$$eval("table.bars tr[data-tool]", (rows) =>
        rows.map((r) => ({
          tool: r.getAttribute("data-tool"),
          width: (r.querySelector(".fill:not(.before)") as unknown as { style: { width: string } }).style.width,
        })),
      );
      const expected = data.run.perTool.filter((t) => t.expected > 0);
      expect(bars).toHaveLength(expected.length);
      for (const b of bars) {
        const t = expected.find((x) => (x.tool ?? "no tool") === b.tool)!;
        expect(b.width).toMatch(/%$/);
        expect(Number.parseFloat(b.width)).toBeCloseTo((t.recall ?? 0) * 100, 1);
      }
      const sections = await tab.$$eval("h2", (hs) => hs.map((h) => h.id));
      expect(sections).toEqual([
        "accuracy",
        "matrix",
        "diagnoses",
        "recall",
        "lint",
        "revisions",
        "effects",
        // The last review's verdict of the guard on the whole (learn/review/guard.ts).
        "guard",
        "rules",
        "flags",
      ]);
      // The applied revision's measured effect: too new to judge, counts only.
      const effects = await tab.$$eval("#effects-table tr[data-revision]", (rows) =>
        rows.map((r) => ({
          verdict: r.getAttribute("data-verdict"),
          cells: [...r.children].map((c) => c.textContent),
        })),
      );
      expect(effects).toEqual([
        {
          verdict: "not_enough_data",
          cells: [
            "convert_currency",
            expect.any(String),
            "not enough data",
            expect.stringMatching(/^failure:validation 2\/\d+ → 0\/0$/),
          ],
        },
      ]);

      mkdirSync(join(SCREENSHOT, ".."), { recursive: true });
      await tab.screenshot({ path: SCREENSHOT, fullPage: false });
      expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
    } finally {
      await browser.close();
    }
  });
});
