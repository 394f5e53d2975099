/**
 * Tool descriptions for the linter's tests: seed 002's three rewrites (a docstring copy, an
 * ambiguous pair, a dangerous billing tool) re-expressed in our own words, before and after, plus
 * one bad tool per rule that the seed only names. The "after" set must lint clean; each "before"
 * tool fails the rules its comment says.
 */
import type { ToolSource } from "../../src/ledger/cards.js";

const str = (description?: string) => ({ type: "string", ...(description ? { description } : {}) });
const object = (properties: Record<string, unknown>, required: string[] = Object.keys(properties)) => ({
  type: "object",
  properties,
  required,
});

/** The rewritten tools: every rule holds for each. */
export const GOOD_TOOLS: ToolSource[] = [
  {
    name: "run_analytics_query",
    description:
      "Run one read-only SQL SELECT against the analytics warehouse (Postgres, schema 'events'). Returns at most 200 rows as JSON. " +
      "Use it for aggregate questions over event history. Do not use it for the current state of an account; use get_account for that. " +
      "Writes are rejected.",
    schema: object(
      {
        sql: str("A single SELECT statement. No semicolons, no DDL."),
        max_rows: { type: "integer", minimum: 1, maximum: 200, default: 50 },
      },
      ["sql"],
    ),
  },
  {
    name: "get_account",
    description:
      "Look up one customer account's current state: plan, status and balance. Returns the account as JSON. " +
      "For questions over event history, use run_analytics_query instead.",
    schema: object({ customer_id: { type: "string", pattern: "^cus_[A-Za-z0-9]+$" } }),
  },
  {
    name: "search_public_docs",
    description:
      "Search the published product documentation customers can read: API reference, guides and changelog. " +
      "Use it for questions on how a feature works; for diagnosing a failure, use search_internal_runbooks instead. " +
      "Returns 10 excerpts with URLs that may be quoted to the customer.",
    schema: object({ question: str("The customer's question, in their words.") }),
  },
  {
    name: "search_internal_runbooks",
    description:
      "Search internal runbooks and incident postmortems, which customers never see. " +
      "Use it to diagnose a failure or find an escalation path; for how a feature works, use search_public_docs instead. " +
      "Returns 10 excerpts, each with an internal wiki link.",
    schema: object({ question: str("What failed, or what needs escalating.") }),
  },
  {
    name: "change_subscription_plan",
    description:
      "IRREVERSIBLE BILLING CHANGE: moves a customer to another plan at once and charges or credits the proration immediately. " +
      "It cannot be undone by calling it again: a downgrade after an upgrade leaves two invoice lines. " +
      "Call get_account first to confirm the current plan, and if the customer has not named the target plan, ask instead of calling this. " +
      "Returns the new plan and the invoice line.",
    schema: object({
      customer_id: { type: "string", pattern: "^cus_[A-Za-z0-9]+$" },
      target_plan: { type: "string", enum: ["basic", "pro", "scale"] },
      confirmed_by_user: {
        type: "boolean",
        description: "True only if the user named this exact plan in their own words.",
      },
    }),
  },
];

/** The tools as first written: each fails the rules named beside it. */
export const BAD_TOOLS: ToolSource[] = [
  // Alone in a set it passes every rule: "returns rows", a named parameter; next to get_account it needs a boundary.
  {
    name: "query_db",
    description: "Runs a query against the database and returns rows.",
    schema: object({ sql: str() }),
  },
  // boundary (each other), no-return.
  { name: "search_docs", description: "Search the documentation.", schema: object({ query: str() }) },
  { name: "search_kb", description: "Search the knowledge base.", schema: object({ query: str() }) },
  // side-effect-late: the prorate parameter charges; the first clause says only "update".
  {
    name: "update_subscription",
    description: "Update a customer's subscription. Returns the subscription.",
    schema: object({ customer_id: str(), plan: str(), prorate: { type: "boolean" } }),
  },
  // constraints-in-prose: a format, a prefix, an enum and a range, none in the schema.
  {
    name: "list_orders",
    description:
      "Returns the orders a customer placed on one day. The date should be ISO 8601 and the customer id must start with cus_. " +
      "The status must be one of 'open', 'shipped' or 'returned'.",
    schema: object({
      date: str(),
      customer_id: str(),
      status: str(),
      limit: { type: "integer", description: "At most 50." },
    }),
  },
  // vague-parameter: arg1 and data; a bare email where a customer and a support agent both have one.
  {
    name: "lookup_record",
    description: "Returns the record matching the key.",
    schema: object({ arg1: str(), data: { type: "object" } }),
  },
  {
    name: "email_customer",
    description: "Sends an email to the customer on behalf of the support agent. Returns the message id.",
    schema: object({ email: str(), subject: str(), body_text: str() }),
  },
  // side-effect-late: it deletes, said only in the second sentence.
  {
    name: "archive_project",
    description: "Find a project by its name. Deletes it with all its files. Returns nothing.",
    schema: object({ project_name: str() }),
  },
  // mode-switch: one action parameter, three jobs.
  {
    name: "manage_ticket",
    description: "Creates, updates or closes a support ticket. Returns the ticket.",
    schema: object({ action: { type: "string", enum: ["create", "update", "close"] }, ticket_title: str() }),
  },
];
