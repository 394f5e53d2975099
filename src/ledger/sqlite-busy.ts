import Database from "better-sqlite3";

/**
 * Retrying what SQLite refuses at once while another process holds a lock (`SqliteStore` opening a
 * file, switching it to WAL, creating its schema), beyond what its busy timeout covers.
 */

/**
 * SQLite's answer when another connection holds a lock this one needs: `SQLITE_BUSY` and its
 * extended codes, or `SQLITE_PROTOCOL` (a WAL lock that kept changing hands while it was taken).
 * Another try after a pause can succeed.
 */
export function isBusy(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError && (error.code.startsWith("SQLITE_BUSY") || error.code === "SQLITE_PROTOCOL")
  );
}

/** However small the busy timeout, opening retries a collision for this long (milliseconds). */
const MIN_RETRY_WINDOW_MS = 250;
/** Longest pause between two tries, in milliseconds: short, because locks of a ledger's writes are. */
const MAX_BUSY_PAUSE_MS = 100;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Run `step`, and while it fails with {@link isBusy}, again after a short jittered pause (~5 ms
 * growing to {@link MAX_BUSY_PAUSE_MS}; the jitter keeps processes that collided from colliding
 * again in step) until `budgetMs` (at least {@link MIN_RETRY_WINDOW_MS}) have passed; a try begun
 * before then may still wait its busy timeout, so the whole takes at most about twice the budget. For
 * what SQLite's busy timeout does not cover: it answers `SQLITE_BUSY` at once when a read
 * transaction cannot become a write one (the WAL switch of a fresh file that another process is
 * switching too). The pause is synchronous (`Atomics.wait`), like all of better-sqlite3.
 *
 * @throws The last error: a non-busy one at once, a busy one once the budget is spent.
 */
export function retryWhileBusy<T>(step: () => T, budgetMs: number): T {
  const deadline = Date.now() + Math.max(budgetMs, MIN_RETRY_WINDOW_MS);
  for (let tries = 1; ; tries += 1) {
    try {
      return step();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
    }
    const ceiling = Math.min(MAX_BUSY_PAUSE_MS, 5 * 2 ** tries);
    Atomics.wait(pause, 0, 0, ceiling / 2 + Math.random() * (ceiling / 2));
  }
}
