import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { registerTools } from "../../src/learn/register.js";
import { DEFAULT_NAMESPACE_ROOT, namespaceFor } from "../../src/ledger/keys.js";
import { openLedger } from "../../src/ledger/open.js";
import { runCli, tempDir } from "./run-cli.js";

/** The CLI's ledger prints the ledger's failures on stderr, redacted, and goes on. */
describe("the CLI's ledger failure sink", () => {
  const { dir, cleanup } = tempDir();
  afterAll(cleanup);

  it("prints a skipped row as a warning line with its context, no value, and still answers", async () => {
    const path = join(dir, "ledger.db");
    const ledger = await openLedger({ path, failureSink: () => undefined });
    await registerTools(ledger, [{ name: "search_docs", description: "Search the product documentation." }]);
    const ns = namespaceFor(DEFAULT_NAMESPACE_ROOT, "default", "calls", "search_docs");
    await ledger.store.put(ns, "sarah@example.com", { nonsense: true });
    await ledger.close();

    const run = await runCli("stats", "search_docs", "--ledger", path);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^warning: Skipped a ledger row that does not match its schema\. \{"namespace":/m);
    expect(run.stderr).not.toContain("sarah@example.com");
  });
});
