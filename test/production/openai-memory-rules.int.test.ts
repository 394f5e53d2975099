/**
 * The two model call sites that landed after the production path, through `ChatOpenAI` over real
 * HTTP against the local OpenAI-compatible server (test/helpers/openai-server.ts): the model
 * evaluator and synthesizer of tool memory, reached through `LessonManager` (`evaluateCalls`,
 * `summarize`), and edict confirmation (`recordEdicts` with a `model`). The calls they read are
 * recorded by the package's recorder from a real agent run (ChatOpenAI too) whose tool arguments
 * and outputs carry planted values; every body sent is read back from the server.
 */
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { InMemoryStore } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { EvaluationReplySchema, ModelEvaluator } from "../../src/memory/model-evaluator.js";
import { GuidelineReplySchema, ModelSynthesizer } from "../../src/memory/model-synthesizer.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { EdictVerdictsSchema } from "../../src/rules/confirm.js";
import { recordEdicts } from "../../src/rules/store.js";
import {
  byRole,
  edictCheckOf,
  edictScript,
  evaluatedRecordOf,
  evaluatorScript,
  roleOf,
  supportAgentScript,
  synthesizerScript,
} from "../helpers/openai-scripts.js";
import {
  type ChatCompletionBody,
  type ChatScript,
  errorBody,
  type OpenAITestServer,
  type RecordedRequest,
  startOpenAIServer,
} from "../helpers/openai-server.js";
import { ask, routedAgent } from "../helpers/routed-agent.js";
import { normalizedSchema, plantedIn } from "./wire.js";

/** Values in the tools' arguments and outputs (order ids, an email, amounts): none may leave in a package prompt. */
const PLANTED = ["482913", "771204", "660981", "zelda.quackenbush@example.test", "quackenbush", "zelda"];
/**
 * Each turn's calls: lookup_order refused (a bare id) then served (its output holds the id and a
 * total), send_email served (its output holds the address), get_account served (its output holds
 * the address).
 */
const TRAFFIC = [
  "Where is order 482913? It was a birthday present.",
  "Can you check on order 771204 for me?",
  "What's the status of order 660981?",
  "Send zelda.quackenbush@example.test an email that her refund went through.",
  "Show me the account of zelda.quackenbush@example.test please.",
];
/** Calls the traffic makes, per partition. */
const CALLS = 8;

let server: OpenAITestServer;
let ledger: Ledger;
let index: ToolIndex;

const chatBody = (r: RecordedRequest) => r.body as ChatCompletionBody;
const roleOfRequest = (r: RecordedRequest) =>
  roleOf({ body: chatBody(r), request: r, role: undefined, texts: [], lastUser: "", sinceUser: [], toolNames: [] });
const chatsOf = (role: ReturnType<typeof roleOfRequest>) =>
  server.requestsTo("chat").filter((r) => roleOfRequest(r) === role);

function chat(fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) {
  return new ChatOpenAI({
    model: "gpt-4o-mini",
    apiKey: "test-key",
    temperature: 0,
    configuration: { baseURL: server.baseURL },
    ...fields,
  });
}

/** The scripts of a healthy model behind the server. */
const healthy = () =>
  byRole({
    agent: supportAgentScript(),
    evaluator: evaluatorScript(),
    synthesizer: synthesizerScript(),
    edicts: edictScript(),
  });

/** Runs the traffic as `user` through the agent (ChatOpenAI) with the recorder; returns the partition. */
async function recordTraffic(user: string): Promise<string> {
  const tools = supportDeskTools();
  const graph = routedAgent({ model: chat(), tools, router: new ToolRouter({ index, maxTools: 3 }), ledger });
  const recorder = new ToolLessonsCallbackHandler({ ledger });
  for (const request of TRAFFIC) await ask(graph, recorder, request, { user_id: user });
  const partition = `u:${user}`;
  expect(await ledger.listCalls(partition)).toHaveLength(CALLS);
  return partition;
}

/** A manager whose memory evaluates and synthesizes with ChatOpenAI (no client retries: the evaluator's own). */
function manager(evaluator: ConstructorParameters<typeof ModelEvaluator>[1] = {}) {
  const model = chat({ maxRetries: 0 });
  return new LessonManager({
    ledger,
    index,
    memory: {
      evaluator: new ModelEvaluator(model, { initialDelayMs: 50, maxDelayMs: 2_000, ...evaluator }),
      synthesizer: new ModelSynthesizer(model),
    },
  });
}

const rateLimited = (retryAfter: string) => ({
  status: 429,
  body: errorBody("Rate limit reached for requests.", "requests", null, "rate_limit_exceeded"),
  headers: { "retry-after": retryAfter },
});

/**
 * A schema as {@link normalizedSchema} gives it, with `type: [a, b]` written as `anyOf` of the
 * types (how `ChatOpenAI` serialises a nullable field): the same statement about a reply.
 */
function schemaOf(schema: unknown): unknown {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== "object" || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "type" && Array.isArray(value)) out.anyOf = value.map((type: unknown) => ({ type }));
      else out[key] = walk(value);
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  };
  return walk(normalizedSchema(schema));
}

/**
 * Where a schema sent with `strict: true` breaks OpenAI's rule for strict structured outputs:
 * every object lists all its properties in `required` (optional fields are nullable instead).
 * A hosted OpenAI refuses such a request with a 400.
 */
function strictViolations(schema: unknown, path = "$"): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => strictViolations(s, `${path}[${i}]`));
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as { properties?: Record<string, unknown>; required?: string[] };
  const own = node.properties
    ? Object.keys(node.properties)
        .filter((key) => !(node.required ?? []).includes(key))
        .map((key) => `${path}.${key} not in required`)
    : [];
  return [...own, ...Object.entries(schema).flatMap(([key, value]) => strictViolations(value, `${path}.${key}`))];
}

/** Every evaluated call of a partition's memory windows. */
async function windowRows(partition: string) {
  const tools = await ledger.listMemoryTools(partition);
  return (await Promise.all(tools.map((t) => ledger.listEvaluatedCalls(partition, t)))).flat();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  server = await startOpenAIServer();
  server.onChat(healthy());
  ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, supportDeskTools());
  index = new ToolIndex({ ledger });
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.onChat(healthy());
});

describe("the model evaluator and synthesizer of tool memory, through LessonManager and ChatOpenAI", () => {
  it("evaluates each recorded call with one structured-output request, the declared schema, no planted value", async () => {
    const partition = await recordTraffic("alice");
    // The planted values are there to be found: in the user's own conversation with the agent.
    expect(
      plantedIn(
        chatsOf("agent")
          .map((r) => r.raw)
          .join("\n"),
        PLANTED,
      ),
    ).toEqual(expect.arrayContaining(["482913", "771204", "660981", "zelda"]));
    server.clearRequests();

    const report = await manager().evaluateCalls({ partition });
    expect(report.evaluator).toBe("model:gpt-4o-mini");
    const byTool = Object.fromEntries(report.tools.map((t) => [t.tool, t]));
    expect(report.tools.flatMap((t) => t.unevaluated)).toEqual([]);
    expect(report.tools.reduce((n, t) => n + t.evaluated + t.duplicates, 0)).toBe(CALLS);
    expect(byTool.lookup_order.evaluated + byTool.lookup_order.duplicates).toBe(6);

    const requests = server.requestsTo("chat");
    expect(requests.every((r) => roleOfRequest(r) === "evaluator")).toBe(true);
    expect(requests).toHaveLength(report.tools.reduce((n, t) => n + t.evaluated, 0));
    for (const r of requests) {
      const format = chatBody(r).response_format!;
      expect(format.type).toBe("json_schema");
      expect(format.json_schema!.name).toBe("evaluate_tool_call");
      expect(normalizedSchema(format.json_schema!.schema)).toEqual(
        normalizedSchema(toJsonSchema(EvaluationReplySchema)),
      );
      expect(chatBody(r).tools).toBeUndefined();
      expect(plantedIn(r.raw, PLANTED), r.raw.slice(0, 300)).toEqual([]);
    }
    // What the model read is the masked record: shapes, and outputs with the values masked.
    const seen = requests.map((r) =>
      evaluatedRecordOf({ body: chatBody(r), lastUser: chatBody(r).messages.at(-1)!.content as string } as never),
    );
    const lookups = seen.filter((s) => s.tool === "lookup_order");
    expect(lookups.map((s) => s.outcome)).toContain("error");
    expect(lookups.flatMap((s) => s.arguments.map((a) => a.shape))).toEqual(expect.arrayContaining(["ORD-######"]));
    expect(seen.find((s) => s.tool === "send_email")?.output?.text).toMatch(/<email>|<value>/);

    // The scores are the model's: refused calls 0, served ones 1.
    const stats = await manager().stats("lookup_order", { partition });
    expect(stats.successRate).toBeCloseTo(0.5, 1);
    expect(stats.avgScore).toBeCloseTo(0.5, 1);

    // A guideline written by the model from the window: one request, its own declared schema, no value.
    server.clearRequests();
    const summary = await manager().summarize(["lookup_order"], {
      partition,
      config: { minEvaluatedCalls: 2 },
    });
    expect(summary.tools[0].status).toBe("summarized");
    expect(summary.tools[0].guideline?.commonIssues).toEqual([
      "Calls with a bare number as the order id were refused.",
    ]);
    const synth = server.requestsTo("chat");
    expect(synth.map(roleOfRequest)).toEqual(["synthesizer"]);
    expect(chatBody(synth[0]).response_format?.json_schema?.name).toBe("write_tool_guideline");
    expect(normalizedSchema(chatBody(synth[0]).response_format?.json_schema?.schema)).toEqual(
      normalizedSchema(toJsonSchema(GuidelineReplySchema)),
    );
    expect(strictViolations(chatBody(synth[0]).response_format?.json_schema?.schema)).toEqual([]);
    expect(plantedIn(synth[0].raw, PLANTED)).toEqual([]);
  });

  it("a malformed reply leaves the call unevaluated (wrong shape, a broken body); the next pass evaluates it", async () => {
    const partition = await recordTraffic("bob");
    server.clearRequests();
    let first = true;
    const good = evaluatorScript();
    // The first reply of the wrong shape (a score outside 0 / 0.5 / 1), the second a broken body.
    server.onChat(
      byRole({
        evaluator: (turn) => {
          if (!first) return good(turn);
          first = false;
          return { json: { summary: "fine", evaluation: "fine", score: 7, issues: [] } };
        },
      }),
    );
    server.enqueue("chat", {
      status: 200,
      body: '{"id": "chatcmpl-1", "choices": [',
      headers: { "content-type": "application/json" },
    });
    const mgr = manager({ concurrency: 1 });
    const report = await mgr.evaluateCalls({ partition });
    const unevaluated = report.tools.flatMap((t) => t.unevaluated);
    // ChatOpenAI's structured output checks the reply against the schema itself and throws, so a
    // reply of the wrong shape comes back as model_error naming the field, not reply_wrong_shape.
    expect(unevaluated).toHaveLength(2);
    expect(unevaluated.every((u) => u.reason === "model_error" || u.reason === "reply_wrong_shape")).toBe(true);
    expect(unevaluated.map((u) => u.detail).join("\n")).toMatch(/Invalid input/);
    const evaluated = report.tools.reduce((n, t) => n + t.evaluated, 0);
    const rows = await windowRows(partition);
    expect(rows.map((r) => r.id)).not.toEqual(expect.arrayContaining(unevaluated.map((u) => u.callId)));
    expect(rows).toHaveLength(evaluated);

    server.clearRequests();
    server.onChat(healthy());
    const again = await mgr.evaluateCalls({ partition });
    expect(server.requestsTo("chat")).toHaveLength(2);
    expect(again.tools.reduce((n, t) => n + t.evaluated, 0)).toBe(2);
    expect(again.tools.flatMap((t) => t.unevaluated)).toEqual([]);
    expect((await windowRows(partition)).map((r) => r.id)).toEqual(
      expect.arrayContaining(unevaluated.map((u) => u.callId)),
    );
  });

  it("a 429 with retry-after is backed off by the evaluator itself (the client does not retry), then used", async () => {
    const partition = await recordTraffic("carol");
    server.clearRequests();
    server.enqueue("chat", rateLimited("1"));
    const report = await manager({ concurrency: 1 }).evaluateCalls({ partition, tools: ["send_email"] });
    expect(report.tools[0]).toMatchObject({ tool: "send_email", evaluated: 1, unevaluated: [] });
    const [limited, retried] = server.requestsTo("chat");
    expect(server.requestsTo("chat")).toHaveLength(2);
    // initialDelayMs is 50: the wait is the server's retry-after (1 s).
    expect(retried.at - limited.at).toBeGreaterThanOrEqual(950);
    expect(retried.raw).toBe(limited.raw);

    // Rate limited past maxRetries: left unevaluated as rate_limited, tried again by the next pass.
    server.clearRequests();
    server.enqueue("chat", rateLimited("0"), rateLimited("0"));
    const exhausted = await manager({ concurrency: 1, maxRetries: 1 }).evaluateCalls({
      partition,
      tools: ["get_account"],
    });
    expect(exhausted.tools[0].unevaluated.map((u) => u.reason)).toEqual(["rate_limited"]);
    expect(server.requestsTo("chat")).toHaveLength(2);
  });

  it("holds the concurrency limit over HTTP: at most `concurrency` requests in flight at the server", async () => {
    const partition = await recordTraffic("dave");
    server.clearRequests();
    let inFlight = 0;
    let most = 0;
    const good = evaluatorScript();
    const slow: ChatScript = async (turn) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await sleep(120);
      inFlight -= 1;
      return good(turn);
    };
    server.onChat(byRole({ evaluator: slow }));
    const started = performance.now();
    const report = await manager({ concurrency: 2 }).evaluateCalls({ partition });
    const evaluated = report.tools.reduce((n, t) => n + t.evaluated, 0);
    expect(evaluated).toBeGreaterThanOrEqual(4);
    expect(server.requestsTo("chat")).toHaveLength(evaluated);
    expect(most).toBe(2);
    // Two at a time, not one: the pass takes about half the serial time.
    expect(performance.now() - started).toBeLessThan(evaluated * 120 - 100);
  });
});

describe("edict confirmation through ChatOpenAI", () => {
  const TOOLS = supportDeskTools().map((t) => t.name);
  const TEXT = "Never refund more than the order total. Don't email customers on weekends.";

  it("asks once with the declared schema, keeps and drops by the verdicts, and sends no tool-call value", async () => {
    await recordTraffic("erin");
    server.clearRequests();
    server.onChat(
      byRole({
        edicts: edictScript((c) => ({ edict: !c.rule.includes("weekends") })),
      }),
    );
    const got = await recordEdicts(ledger, {
      partition: "u:erin",
      text: TEXT,
      tools: TOOLS,
      calledTools: ["lookup_order", "send_email"],
      model: chat(),
    });
    const requests = server.requestsTo("chat");
    expect(requests.map(roleOfRequest)).toEqual(["edicts"]);
    const format = chatBody(requests[0]).response_format!;
    expect(format.type).toBe("json_schema");
    expect(format.json_schema!.name).toBe("edict_verdicts");
    expect(schemaOf(format.json_schema!.schema)).toEqual(schemaOf(toJsonSchema(EdictVerdictsSchema)));
    expect(plantedIn(requests[0].raw, PLANTED)).toEqual([]);
    const seen = edictCheckOf({ lastUser: chatBody(requests[0]).messages.at(-1)!.content as string } as never);
    expect(seen.candidates.length).toBeGreaterThanOrEqual(2);
    expect(got.modelRejected).toBeUndefined();
    expect(got.stored.map((r) => r.rule)).toEqual(["Never refund more than the order total."]);
    expect(got.stored[0]).toMatchObject({ tool: "refund_order", priority: "critical", source: "user_explicit" });
    expect(got.dropped.map((c) => c.rule)).toEqual([expect.stringContaining("weekends")]);
  });

  it("a malformed reply (wrong shape, a broken body, a 500) leaves the code's decision: every candidate stored", async () => {
    const cases: { name: string; arrange: () => void; reason: string }[] = [
      {
        name: "shape",
        arrange: () => server.onChat(byRole({ edicts: () => ({ json: { verdicts: "all fine" } }) })),
        reason: "reply_wrong_shape|model_error",
      },
      {
        name: "body",
        arrange: () =>
          server.enqueue("chat", {
            status: 200,
            body: '{"id": "chatcmpl-1", "choices": [',
            headers: { "content-type": "application/json" },
          }),
        reason: "model_error",
      },
      {
        name: "500",
        arrange: () =>
          server.enqueue("chat", { status: 500, body: errorBody("The server had an error.", "server_error") }),
        reason: "model_error",
      },
    ];
    for (const c of cases) {
      server.onChat(healthy());
      server.clearRequests();
      c.arrange();
      const got = await recordEdicts(ledger, {
        partition: `u:frank-${c.name}`,
        text: TEXT,
        tools: TOOLS,
        model: chat({ maxRetries: 0 }),
      });
      expect(got.modelRejected?.reason, c.name).toMatch(new RegExp(`^(${c.reason})$`));
      expect(got.dropped, c.name).toEqual([]);
      const code = await recordEdicts(ledger, { partition: `u:frank-${c.name}-code`, text: TEXT, tools: TOOLS });
      expect(
        got.stored.map((r) => [r.tool, r.rule]),
        c.name,
      ).toEqual(code.stored.map((r) => [r.tool, r.rule]));
      expect(got.stored.length, c.name).toBeGreaterThanOrEqual(2);
      expect(server.requestsTo("chat"), c.name).toHaveLength(1);
    }
  });

  // A strict schema must list every property as required, or a hosted OpenAI refuses it with a
  // 400 and every edict check ends as model_error (it once declared `tool` optional).
  it("sends a schema a hosted OpenAI accepts in strict mode (every property required)", async () => {
    server.clearRequests();
    await recordEdicts(ledger, { partition: "u:gina", text: TEXT, tools: TOOLS, model: chat() });
    const format = chatBody(server.requestsTo("chat")[0]).response_format!;
    expect(format.json_schema!.strict).toBe(true);
    expect(strictViolations(format.json_schema!.schema)).toEqual([]);
  });
});
