/**
 * How model calls are paced: a concurrency limit, retries with exponential backoff on rate limits
 * (never a fixed sleep between calls), and a timeout per call. Small and pure where it can be.
 */
import { isRecord } from "../internal.js";

/**
 * Run `fn` over `items` with at most `limit` calls in flight; results in the items' order. A
 * rejection rejects the whole run (callers turn expected failures into values).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  };
  const workers = Math.max(1, Math.min(Math.floor(limit), items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}

/** How retries on rate limits back off. */
export interface Backoff {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Wait before the first retry, in milliseconds. */
  initialDelayMs: number;
  /** Longest wait, in milliseconds. */
  maxDelayMs: number;
}

/**
 * The wait before retry `attempt` (0 for the first retry): `initialDelayMs × 2^attempt`, at most
 * `maxDelayMs`, with equal jitter (between half and all of it) so that callers rate limited
 * together do not retry together; never less than the provider's `Retry-After`, when it gave one.
 */
export function backoffDelay(
  attempt: number,
  backoff: Pick<Backoff, "initialDelayMs" | "maxDelayMs">,
  random: () => number = Math.random,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** attempt);
  const jittered = ceiling / 2 + (random() * ceiling) / 2;
  return Math.min(backoff.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}

/**
 * Whether an error is a provider's rate limit: HTTP status 429 (on the error or its response),
 * a `RateLimitError`, a `rate_limit` code, or a message saying so.
 */
export function isRateLimitError(error: unknown): boolean {
  if (!isRecord(error)) return false;
  const response = isRecord(error.response) ? error.response : undefined;
  if (error.status === 429 || error.statusCode === 429 || response?.status === 429) return true;
  if (typeof error.name === "string" && /ratelimit/i.test(error.name)) return true;
  if (typeof error.code === "string" && /rate_?limit/i.test(error.code)) return true;
  const message = typeof error.message === "string" ? error.message : "";
  return /\brate[\s_-]?limit|\btoo many requests\b|\b429\b/i.test(message);
}

/** The `Retry-After` a rate-limit error carries (seconds, on its `headers` or its response's), in milliseconds. */
export function retryAfterMs(error: unknown): number | undefined {
  if (!isRecord(error)) return undefined;
  const response = isRecord(error.response) ? error.response : undefined;
  for (const headers of [error.headers, response?.headers]) {
    let value: unknown;
    if (isRecord(headers) && typeof headers.get === "function") {
      value = (headers.get as (name: string) => unknown).call(headers, "retry-after");
    } else if (isRecord(headers)) {
      value = headers["retry-after"];
    }
    const seconds = Number(value);
    if (value !== undefined && value !== null && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  }
  return undefined;
}

/** Wait `ms`, or until `signal` aborts (then reject with its reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The result of {@link withTimeout}. */
export type Timed<T> = { timedOut: false; value: T } | { timedOut: true };

/**
 * Run `fn` with a signal that aborts after `timeoutMs` (or when `parent` aborts), and stop waiting
 * for it then: a model that never answers cannot hold a slot. The call's own rejection passes
 * through; a timeout is a value, not an error.
 */
export async function withTimeout<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  parent?: AbortSignal,
): Promise<Timed<T>> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Timed<T>>((resolve) => {
    timer = setTimeout(() => {
      resolve({ timedOut: true });
      controller.abort();
    }, timeoutMs);
  });
  const run = fn(controller.signal).then((value): Timed<T> => ({ timedOut: false, value }));
  // A call that rejects after its timeout won the race is settled here, not left unhandled.
  run.catch(() => undefined);
  try {
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener("abort", onParentAbort);
  }
}
