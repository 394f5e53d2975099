/**
 * The operator's commands over a ledger: review, apply, dismiss, undo, history
 * (`revision-commands.ts`), flags, configure, cards, partitions (`partition-commands.ts`). Each
 * opens the ledger session (`ledger-session.ts`), does one thing, and closes the ledger.
 */
import type { Command } from "./io.js";
import { PARTITION_COMMANDS } from "./partition-commands.js";
import { REVISION_COMMANDS } from "./revision-commands.js";

/** The operator commands, in the order `--help` lists them. */
export const LEDGER_COMMANDS: readonly Command[] = [...REVISION_COMMANDS, ...PARTITION_COMMANDS];
