import { InvalidInput } from "../errors.js";

/**
 * Refuse a ledger path holding a NUL or another control character (C0, DEL, C1): the operating
 * system would open a file named by the text before it, a file the caller never named. The
 * message gives the character's position, never the path.
 * @throws InvalidInput
 */
export function refuseControlCharacters(path: string): void {
  const at = path.search(/[\u0000-\u001f\u007f-\u009f]/);
  if (at < 0) return;
  const code = path.charCodeAt(at).toString(16).toUpperCase().padStart(4, "0");
  throw new InvalidInput(
    `The SQLite ledger path holds a control character (U+${code}) at position ${at}; a file path never does. ` +
      "Pass the path as written on disk.",
    { context: { position: at, codePoint: `U+${code}` } },
  );
}
