/**
 * A SQLite ledger for the tests of `tool-lessons report`: the synthetic travel tools registered,
 * get_weather having learned the users' words (so "now" differs from "before"), a pending
 * revision for search_flights from missed requests and refused calls, an applied revision of
 * convert_currency (too new for its effect to be judged: "not enough data"), a rule, and a usage flag.
 */
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { openLedger } from "../../src/ledger/open.js";
import type { ArgShape } from "../../src/ledger/schema.js";
import { TOOLS } from "./synthetic-data.js";

const PARTITION = "default";
const dateArg = (shape: string): ArgShape[] => [{ name: "date", kind: "string", shape }];

async function seed(ledger: Ledger): Promise<void> {
  await registerTools(
    ledger,
    TOOLS.map((t) => ({ name: t.name, description: t.description, schema: t.parameters ?? undefined })),
  );
  const weather = (await ledger.getCard(PARTITION, "get_weather"))!;
  const examples = ["will it rain tomorrow in boston", "do I need an umbrella in denver", "is it sunny today in kyoto"];
  await ledger.putCard({
    ...weather,
    learned: {
      ...weather.learned,
      examples: examples.map((text) => ({ text, source: "learned" as const, addedAt: 1 })),
    },
  });
  await ledger.configure(PARTITION, { routingK: 1 });
  // search_flights served two requests routing did not offer it, and refused two dates.
  const missed = [
    "any cheap plane ticket to lisbon, weather permitting",
    "a plane ticket to oslo for friday, whatever the weather",
  ];
  for (const [i, request] of missed.entries()) {
    const ids = { requestId: `miss-${i}`, threadId: `thread-${i}` };
    await ledger.appendRoutes([
      {
        partition: PARTITION,
        ...ids,
        request,
        offered: [{ tool: "get_weather", rank: 1, score: 0.4 }],
        allSent: false,
        k: 1,
      },
    ]);
    await ledger.appendCalls([
      {
        partition: PARTITION,
        tool: "search_flights",
        runId: `run-${i}`,
        ...ids,
        args: dateArg("####-##-##"),
        fingerprints: [],
        outcome: "success",
        source: "api",
      },
    ]);
    await ledger.appendTurns([
      {
        partition: PARTITION,
        ...ids,
        request,
        calls: [{ tool: "search_flights", outcome: "success" }],
        servedBy: "search_flights",
      },
    ]);
  }
  await ledger.appendCalls(
    [0, 1].map((i) => ({
      partition: PARTITION,
      tool: "search_flights",
      runId: `bad-${i}`,
      args: dateArg("##/##/####"),
      fingerprints: [],
      outcome: "error" as const,
      errorClass: "validation" as const,
      errorMessage: "date must be an ISO date",
      source: "api" as const,
    })),
  );
  // find_restaurant offered in five routed turns, never called: retrieved_never_called.
  for (let i = 0; i < 5; i++) {
    await ledger.appendRoutes([
      {
        partition: PARTITION,
        threadId: `t-r${i}`,
        requestId: `r${i}`,
        request: "somewhere nice",
        offered: [{ tool: "find_restaurant", rank: 1, score: 0.3 }],
        allSent: false,
        k: 1,
      },
    ]);
  }
  await ledger.putRule(PARTITION, {
    tool: "send_email",
    rule: "Never send email on weekends.",
    priority: "critical",
    source: "user_explicit",
  });
  // convert_currency refused two amounts written with a comma, and took two with a point.
  await ledger.appendCalls(
    [0, 1, 2, 3].map((i) => ({
      partition: PARTITION,
      tool: "convert_currency",
      runId: `fx-${i}`,
      args: [{ name: "amount", kind: "string" as const, shape: i < 2 ? "##,##" : "##.##" }],
      fingerprints: [],
      ...(i < 2
        ? { outcome: "error" as const, errorClass: "validation" as const, errorMessage: "amount must be a number" }
        : { outcome: "success" as const }),
      source: "api" as const,
    })),
  );
  const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
  const review = await manager.review({ partition: PARTITION });
  const tools = review.revisions.map((r) => r.tool).sort();
  if (tools.join() !== "convert_currency,search_flights") throw new Error(`unexpected revisions: ${tools.join()}`);
  const fx = review.revisions.find((r) => r.tool === "convert_currency")!;
  await manager.apply(fx.id, { partition: PARTITION, approvedBy: "ops" });
}

/** Write the ledger at `path`. */
export async function seedReportLedger(path: string): Promise<void> {
  const ledger = await openLedger({ path });
  try {
    await seed(ledger);
  } finally {
    await ledger.close();
  }
}
