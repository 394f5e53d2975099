/**
 * A local HTTP server that speaks the two provider APIs the provider-deferred mode targets, for
 * the wire tests: Anthropic's Messages API (`POST /v1/messages`, what `ChatAnthropic` sends to
 * its `anthropicApiUrl`) and OpenAI's Responses API (`POST /v1/responses`, what `ChatOpenAI` with
 * `useResponsesApi` sends to its `baseURL`). `node:http` on 127.0.0.1, a random port.
 *
 * Every request body is kept, parsed, for the test to check against the documented shapes; each
 * is answered by the test's script with a reply body (non-streaming JSON).
 */
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as it arrived. */
export interface WireRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A running server: `url` is `http://127.0.0.1:PORT`. */
export interface WireServer {
  url: string;
  requests: WireRequest[];
  /** Answers every request from now on (a reply body, sent as 200 JSON). */
  onRequest(script: (request: WireRequest) => unknown): void;
  close(): Promise<void>;
}

export async function startWireServer(): Promise<WireServer> {
  const requests: WireRequest[] = [];
  let script: (request: WireRequest) => unknown = () => {
    throw new Error("no script set");
  };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let status = 200;
      let reply: unknown;
      try {
        const request = {
          path: (req.url ?? "").split("?")[0],
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
        };
        requests.push(request);
        reply = script(request);
      } catch (error) {
        status = 400;
        reply = { type: "error", error: { type: "invalid_request_error", message: String(error) } };
      }
      res.writeHead(status, { "content-type": "application/json", "request-id": `req_${requests.length}` });
      res.end(JSON.stringify(reply));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    onRequest(next) {
      script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An Anthropic Messages API reply. */
export function anthropicReply(
  n: number,
  content: Record<string, unknown>[],
  stop: "tool_use" | "end_turn",
): Record<string, unknown> {
  return {
    id: `msg_${n}`,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/** An OpenAI Responses API reply. */
export function responsesReply(n: number, output: Record<string, unknown>[]): Record<string, unknown> {
  return {
    id: `resp_${n}`,
    object: "response",
    created_at: 1_700_000_000 + n,
    model: "gpt-5.4",
    status: "completed",
    error: null,
    incomplete_details: null,
    metadata: {},
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: {
      input_tokens: 100,
      output_tokens: 10,
      total_tokens: 110,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
}
