/**
 * The operator's process of the fleet tests (test/serve/fleet.int.test.ts): opens the ledger the
 * running agent serves from (a SQLite file or a Postgres schema) with its own `LessonManager` and
 * index, makes one change through the operator's API, prints one JSON line and exits.
 *
 * env: BACKEND (sqlite | postgres), DB (sqlite file), POSTGRES_URL, PG_SCHEMA, ACTION
 * (learn-example | undo | rule), PARTITION, TOOL, TEXT.
 */
import { Ledger } from "../../src/ledger/ledger.js";
import { openChildStore } from "./child-store.js";
import { LessonManager } from "../../src/learn/manager.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { proposeExample } from "./propose-example.js";

const env = process.env;
const partition = env.PARTITION ?? "default";
const tool = env.TOOL ?? "";
const text = env.TEXT ?? "";

const store = await openChildStore();
const ledger = new Ledger(store, { ownsStore: true });
const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
let outcome: unknown;
if (env.ACTION === "learn-example") {
  const applied = await manager.apply((await proposeExample(ledger, partition, tool, text)).id, {
    approvedBy: "ops",
    partition,
  });
  outcome = { status: applied.status, queriesAdded: applied.queriesAdded, withdrawn: applied.queriesWithdrawn };
} else if (env.ACTION === "undo") {
  const undone = await manager.undo(tool, { approvedBy: "ops", partition });
  outcome = { status: undone.status };
} else if (env.ACTION === "rule") {
  const rule = await manager.putRule({ tool, rule: text, priority: "critical", source: "programmatic" }, { partition });
  outcome = { id: rule.id };
} else {
  throw new Error(`unknown ACTION ${String(env.ACTION)}`);
}
await ledger.close();
console.log(JSON.stringify(outcome));
