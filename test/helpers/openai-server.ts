/**
 * An OpenAI-compatible HTTP server for tests: a small `node:http` server on 127.0.0.1 (random
 * port) that `ChatOpenAI` and `OpenAIEmbeddings` from `@langchain/openai` talk to through their
 * `configuration.baseURL`, exactly as they talk to a hosted model, Ollama or vLLM.
 *
 * - `POST /v1/chat/completions`: answered by the test's script (`onChat`): an assistant message, tool
 *   calls, or a structured reply (`{ json }`), sent the way the request asked for it: as the message
 *   content for `response_format: json_schema` / `json_object`, as a call of the forced function when
 *   the request forces one (LangChain's function-calling structured output). Streamed (SSE) when
 *   the request says `stream: true`.
 * - `POST /v1/embeddings`: deterministic word-hashing vectors (unit length), as floats or as the
 *   base64 float32 the OpenAI SDK asks for by default.
 * - One-shot replies queued per endpoint (`enqueue`) come first: HTTP errors, 429s with
 *   `retry-after`, slow replies (`delayMs`), malformed bodies.
 * - What a hosted OpenAI refuses, this refuses too, with its 400 shape: a function name outside
 *   `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * Every request is recorded (path, headers, raw body, parsed body, arrival time) so a test can
 * assert what left the process.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as it arrived. */
export interface RecordedRequest {
  method: string;
  /** e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as sent. */
  raw: string;
  /** The body parsed as JSON, or undefined. */
  body: unknown;
  /** `performance.now()` when it arrived. */
  at: number;
}

/** A chat message as the OpenAI API carries it. */
export interface OpenAIMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
}

/** A function tool in a request. */
export interface OpenAIToolSpec {
  type: string;
  function: { name: string; description?: string; parameters?: unknown; strict?: boolean };
}

/** The chat-completions request body (the fields the scripts read). */
export interface ChatCompletionBody {
  model: string;
  messages: OpenAIMessage[];
  tools?: OpenAIToolSpec[];
  tool_choice?: unknown;
  response_format?: {
    type: string;
    json_schema?: { name: string; schema?: unknown; strict?: boolean; description?: string };
  };
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

/** What a chat script sees of one request. */
export interface ChatTurn {
  body: ChatCompletionBody;
  request: RecordedRequest;
  /** The `x-test-role` header, when the client set one (to tell the agent from the proposer). */
  role: string | undefined;
  /** Text of the messages, in order (tool call arguments included). */
  texts: string[];
  /** The newest user message's text. */
  lastUser: string;
  /** Messages after the newest user message (the agent's steps so far in this turn). */
  sinceUser: OpenAIMessage[];
  /** Names of the tools offered. */
  toolNames: string[];
}

/** An HTTP reply given as is: errors, 429s, malformed bodies. */
export interface HttpReply {
  status: number;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** A scripted answer to one chat-completions request. */
export type ChatReply =
  | { content: string; delayMs?: number }
  | { toolCalls: { name: string; args: unknown; id?: string }[]; content?: string; delayMs?: number }
  /** A structured reply: sent as the content, or as the forced function's arguments. */
  | { json: unknown; delayMs?: number }
  | HttpReply;

export type ChatScript = (turn: ChatTurn) => ChatReply | Promise<ChatReply>;

/** A running server. */
export interface OpenAITestServer {
  /** `http://127.0.0.1:PORT/v1`: the `baseURL` to give the clients. */
  baseURL: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Requests to one endpoint (`chat` or `embeddings`). */
  requestsTo(endpoint: Endpoint): RecordedRequest[];
  /** Set the chat script (replaces the previous one). */
  onChat(script: ChatScript): void;
  /** Queue one-shot replies for the next requests to an endpoint, answered before any script. */
  enqueue(endpoint: Endpoint, ...replies: HttpReply[]): void;
  /** Forget the recorded requests. */
  clearRequests(): void;
  close(): Promise<void>;
}

export type Endpoint = "chat" | "embeddings";

const PATHS: Record<Endpoint, string> = { chat: "/v1/chat/completions", embeddings: "/v1/embeddings" };
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Dimension of the server's embeddings (unless the request asks for `dimensions`). */
export const EMBEDDING_DIMENSION = 256;

/** Starts a server; `close()` it in `afterAll`. */
export async function startOpenAIServer(): Promise<OpenAITestServer> {
  const requests: RecordedRequest[] = [];
  const queues: Record<Endpoint, HttpReply[]> = { chat: [], embeddings: [] };
  let chatScript: ChatScript = () => ({
    status: 500,
    body: errorBody("No chat script set for this test.", "server_error"),
  });
  let ids = 0;
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = raw === "" ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const request: RecordedRequest = {
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0],
        headers: req.headers,
        raw,
        body,
        at: performance.now(),
      };
      requests.push(request);
      void answer(request, res).catch((error: unknown) => {
        if (!res.headersSent)
          send(res, { status: 500, body: errorBody(`test server: ${String(error)}`, "server_error") });
        else res.end();
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function answer(request: RecordedRequest, res: ServerResponse): Promise<void> {
    const endpoint = (Object.keys(PATHS) as Endpoint[]).find((e) => PATHS[e] === request.path);
    if (request.method !== "POST" || endpoint === undefined) {
      return send(res, {
        status: 404,
        body: errorBody(`Unknown path ${request.method} ${request.path}`, "invalid_request_error"),
      });
    }
    const queued = queues[endpoint].shift();
    if (queued) return send(res, queued);
    if (request.body === undefined)
      return send(res, {
        status: 400,
        body: errorBody("We could not parse the JSON body of your request.", "invalid_request_error"),
      });
    if (endpoint === "embeddings") return send(res, { status: 200, body: embeddingsReply(request.body) });

    const body = request.body as ChatCompletionBody;
    for (const [i, t] of (body.tools ?? []).entries()) {
      if (!FUNCTION_NAME.test(t.function.name)) {
        return send(res, {
          status: 400,
          body: errorBody(
            `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
            "invalid_request_error",
            `tools[${i}].function.name`,
            "invalid_value",
          ),
        });
      }
    }
    const reply = await chatScript(chatTurn(body, request));
    if ("status" in reply) return send(res, reply);
    if (reply.delayMs) await sleep(reply.delayMs);
    const message = assistantMessage(body, reply, () => `call_${++ids}`);
    if (body.stream) return stream(res, body, message, ++ids);
    send(res, { status: 200, body: completion(body, message, ++ids) });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    requestsTo: (endpoint) => requests.filter((r) => r.path === PATHS[endpoint]),
    onChat: (script) => {
      chatScript = script;
    },
    enqueue: (endpoint, ...replies) => {
      queues[endpoint].push(...replies);
    },
    clearRequests: () => {
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The body of an OpenAI error reply. */
export function errorBody(message: string, type: string, param: string | null = null, code: string | null = null) {
  return { error: { message, type, param, code } };
}

/** Text of a message's content (string or parts). */
export function messageText(message: OpenAIMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join("");
  return "";
}

function chatTurn(body: ChatCompletionBody, request: RecordedRequest): ChatTurn {
  const messages = body.messages ?? [];
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") last = i;
  });
  const role = request.headers["x-test-role"];
  return {
    body,
    request,
    role: typeof role === "string" ? role : undefined,
    texts: messages.map((m) => [messageText(m), ...(m.tool_calls ?? []).map((c) => c.function.arguments)].join("\n")),
    lastUser: last >= 0 ? messageText(messages[last]) : "",
    sinceUser: messages.slice(last + 1),
    toolNames: (body.tools ?? []).map((t) => t.function.name),
  };
}

/** The function a request forces (`tool_choice: { type: "function", function: { name } }`), if any. */
function forcedFunction(body: ChatCompletionBody): string | undefined {
  const choice = body.tool_choice;
  if (typeof choice === "object" && choice !== null && "function" in choice) {
    const fn = (choice as { function?: { name?: unknown } }).function;
    if (typeof fn?.name === "string") return fn.name;
  }
  if ((choice === "required" || choice === "any") && body.tools?.length === 1) return body.tools[0].function.name;
  return undefined;
}

function assistantMessage(
  body: ChatCompletionBody,
  reply: Exclude<ChatReply, HttpReply>,
  nextId: () => string,
): OpenAIMessage {
  if ("json" in reply) {
    const forced = body.response_format ? undefined : forcedFunction(body);
    if (forced) {
      return {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: nextId(), type: "function", function: { name: forced, arguments: JSON.stringify(reply.json) } },
        ],
      };
    }
    return { role: "assistant", content: JSON.stringify(reply.json) };
  }
  if ("toolCalls" in reply) {
    return {
      role: "assistant",
      content: reply.content ?? null,
      tool_calls: reply.toolCalls.map((c) => ({
        id: c.id ?? nextId(),
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    };
  }
  return { role: "assistant", content: reply.content };
}

/** Tokens, roughly: words of the request and of the reply. */
function usage(body: ChatCompletionBody, message: OpenAIMessage) {
  const words = (text: string) => (text.match(/\S+/g) ?? []).length;
  const prompt = body.messages.reduce((n, m) => n + words(messageText(m)), 0) + 10;
  const completion =
    words(messageText(message)) + (message.tool_calls ?? []).reduce((n, c) => n + words(c.function.arguments), 0) + 1;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function completion(body: ChatCompletionBody, message: OpenAIMessage, id: number) {
  return {
    id: `chatcmpl-${id}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: message.tool_calls ? "tool_calls" : "stop" }],
    usage: usage(body, message),
  };
}

function stream(res: ServerResponse, body: ChatCompletionBody, message: OpenAIMessage, id: number): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const base = {
    id: `chatcmpl-${id}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
  };
  const write = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  const delta: Record<string, unknown> = { role: "assistant", content: message.content ?? null };
  if (message.tool_calls) delta.tool_calls = message.tool_calls.map((c, index) => ({ index, ...c }));
  write({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] });
  write({
    ...base,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: message.tool_calls ? "tool_calls" : "stop" }],
  });
  if (body.stream_options?.include_usage) write({ ...base, choices: [], usage: usage(body, message) });
  res.end("data: [DONE]\n\n");
}

function embeddingsReply(body: unknown) {
  const { input, model, encoding_format, dimensions } = body as {
    input: string | string[];
    model: string;
    encoding_format?: string;
    dimensions?: number;
  };
  const texts = Array.isArray(input) ? input : [input];
  const dimension = dimensions ?? EMBEDDING_DIMENSION;
  return {
    object: "list",
    data: texts.map((text, index) => {
      const vector = embedText(String(text), dimension);
      return {
        object: "embedding",
        index,
        embedding:
          encoding_format === "base64" ? Buffer.from(new Float32Array(vector).buffer).toString("base64") : vector,
      };
    }),
    model,
    usage: { prompt_tokens: texts.length, total_tokens: texts.length },
  };
}

/**
 * The server's embedding: lower-cased words (and their first five letters, a crude stem) hashed
 * into `dimension` buckets, at unit length. Deterministic, so tests can compute what a request
 * embeds to.
 */
export function embedText(text: string, dimension = EMBEDDING_DIMENSION): number[] {
  const v = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    for (const key of word.length > 5 ? [word, `${word.slice(0, 5)}~`] : [word]) v[fnv(key) % dimension] += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function send(res: ServerResponse, reply: HttpReply): void {
  const write = () => {
    if (res.destroyed) return;
    const text =
      typeof reply.body === "string" ? reply.body : reply.body === undefined ? "" : JSON.stringify(reply.body);
    res.writeHead(reply.status, { "content-type": "application/json", ...(reply.headers ?? {}) });
    res.end(text);
  };
  if (reply.delayMs) setTimeout(write, reply.delayMs);
  else write();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
