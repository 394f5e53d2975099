/**
 * A real MCP server over stdio (`@modelcontextprotocol/sdk`), for tests: run as a child process
 * (`node --import tsx test/helpers/mcp-server.ts`), its tools loaded with `@langchain/mcp-adapters`.
 * Tool names carry `.` and `/`, as MCP servers' names do. `MCP_TOOL_DESCRIPTIONS=v2` starts the
 * "new release" of the server: the same tools, one of them described (and its schema) anew.
 *
 * - `crm.lookup_customer`: refuses a customer id without its `CUS-` prefix, as an MCP error result;
 * - `crm.create_ticket`: opens a ticket for a customer;
 * - `files/read_file`: reads a (made-up) file.
 */
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

/** This file, for the stdio connection's `args`. */
export const MCP_SERVER_PATH = fileURLToPath(import.meta.url);

/** Descriptions of the server's two releases. */
export const MCP_DESCRIPTIONS = {
  v1: {
    "crm.lookup_customer": "Look up a customer in the CRM: name, plan and open tickets.",
    "crm.create_ticket": "Open a support ticket for a customer.",
    "files/read_file": "Read a text file from the shared drive.",
  },
  v2: {
    "crm.lookup_customer": "Look up a customer record in the CRM: contact details, plan, open tickets and last order.",
    "crm.create_ticket": "Open a support ticket for a customer.",
    "files/read_file": "Read a text file from the shared drive.",
  },
} as const;

export type McpRelease = keyof typeof MCP_DESCRIPTIONS;

/** The `mcpServers` entry that starts this server as a stdio child of the test. */
export function mcpStdioConnection(release: McpRelease) {
  return {
    transport: "stdio" as const,
    command: process.execPath,
    args: ["--import", "tsx", MCP_SERVER_PATH],
    env: { ...(process.env as Record<string, string>), MCP_TOOL_DESCRIPTIONS: release },
    // The SDK warns about "/" in tool names (allowed, not recommended): keep the test output clean.
    stderr: "ignore" as const,
  };
}

const CUSTOMER_ID = /^CUS-\d{5}$/;

function serve(release: McpRelease): McpServer {
  const describe = MCP_DESCRIPTIONS[release];
  const server = new McpServer({ name: "crm", version: release === "v1" ? "1.0.0" : "2.0.0" });
  const lookup = async ({ customer_id }: { customer_id: string }) => {
    if (!CUSTOMER_ID.test(customer_id)) {
      return {
        isError: true,
        content: [
          {
            type: "text" as const,
            text: `Invalid customer id "${customer_id}": customer ids must start with "CUS-" followed by five digits.`,
          },
        ],
      };
    }
    const n = Number(customer_id.slice(-5));
    return {
      content: [
        {
          type: "text" as const,
          text: JSON.stringify({ customer_id, plan: n % 2 ? "plus" : "basic", open_tickets: n % 3 }),
        },
      ],
    };
  };
  const customerId = z.string().describe("The customer's id.");
  if (release === "v1") {
    server.registerTool(
      "crm.lookup_customer",
      { description: describe["crm.lookup_customer"], inputSchema: { customer_id: customerId } },
      lookup,
    );
  } else {
    server.registerTool(
      "crm.lookup_customer",
      {
        description: describe["crm.lookup_customer"],
        inputSchema: { customer_id: customerId, include_orders: z.boolean().optional() },
      },
      lookup,
    );
  }
  server.registerTool(
    "crm.create_ticket",
    { description: describe["crm.create_ticket"], inputSchema: { customer_id: z.string(), subject: z.string() } },
    async ({ customer_id }) => ({ content: [{ type: "text", text: `Ticket opened for ${customer_id}.` }] }),
  );
  server.registerTool(
    "files/read_file",
    {
      description: describe["files/read_file"],
      inputSchema: { path: z.string().describe("Path on the shared drive.") },
    },
    async ({ path }) => ({ content: [{ type: "text", text: `${path}: 3 lines of notes.` }] }),
  );
  return server;
}

if (process.argv[1] === MCP_SERVER_PATH) {
  const release = process.env.MCP_TOOL_DESCRIPTIONS === "v2" ? "v2" : "v1";
  await serve(release).connect(new StdioServerTransport());
}
