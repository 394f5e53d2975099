import { describe, expect, it } from "vitest";
import { backoffDelay, isRateLimitError, mapLimit, retryAfterMs, sleep, withTimeout } from "../../src/memory/limit.js";
import { rateLimitError, wait } from "./memory-fixtures.js";

describe("mapLimit", () => {
  it("never has more than N calls in flight, and keeps the items' order", async () => {
    for (const limit of [1, 3, 8]) {
      let inFlight = 0;
      let most = 0;
      const out = await mapLimit(
        Array.from({ length: 20 }, (_, i) => i),
        limit,
        async (i) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await wait(1 + (i % 3));
          inFlight -= 1;
          return i * 2;
        },
      );
      expect(out).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
      expect(most).toBe(limit);
    }
  });

  it("handles no items and a limit above the number of items", async () => {
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
    expect(await mapLimit([1, 2], 16, async (x) => x + 1)).toEqual([2, 3]);
  });
});

describe("backoff on rate limits", () => {
  it("doubles from the initial delay up to the ceiling, with equal jitter", () => {
    const backoff = { initialDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffDelay(a, backoff, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([0, 1, 2, 3].map((a) => backoffDelay(a, backoff, () => 0))).toEqual([50, 100, 200, 400]);
  });

  it("waits at least the provider's Retry-After, never past the ceiling", () => {
    const backoff = { initialDelayMs: 100, maxDelayMs: 5000 };
    expect(backoffDelay(0, backoff, () => 0, 2000)).toBe(2000);
    expect(backoffDelay(0, backoff, () => 0, 60_000)).toBe(5000);
  });

  it("tells a rate limit from other errors", () => {
    expect(isRateLimitError(rateLimitError())).toBe(true);
    expect(isRateLimitError({ response: { status: 429 } })).toBe(true);
    expect(isRateLimitError(Object.assign(new Error("slow down"), { name: "RateLimitError" }))).toBe(true);
    expect(isRateLimitError(Object.assign(new Error("x"), { code: "rate_limit_exceeded" }))).toBe(true);
    expect(isRateLimitError(new Error("Rate limit reached for requests"))).toBe(true);
    expect(isRateLimitError(new Error("500 Internal Server Error"))).toBe(false);
    expect(isRateLimitError(Object.assign(new Error("bad"), { status: 400 }))).toBe(false);
    expect(isRateLimitError("429")).toBe(false);
  });

  it("reads Retry-After from plain or fetch-style headers", () => {
    expect(retryAfterMs(rateLimitError(3))).toBe(3000);
    expect(retryAfterMs({ response: { headers: new Headers({ "retry-after": "1.5" }) } })).toBe(1500);
    expect(retryAfterMs(rateLimitError())).toBeUndefined();
    expect(retryAfterMs({ headers: { "retry-after": "soon" } })).toBeUndefined();
  });
});

describe("withTimeout", () => {
  it("gives the value, or a timeout after which the call's signal is aborted", async () => {
    expect(await withTimeout(async () => 7, 100)).toEqual({ timedOut: false, value: 7 });
    let aborted = false;
    const timed = await withTimeout(
      (signal) =>
        new Promise<number>((_, reject) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("aborted"));
          });
        }),
      20,
    );
    expect(timed).toEqual({ timedOut: true });
    expect(aborted).toBe(true);
  });

  it("passes the call's own rejection through and follows a parent abort", async () => {
    await expect(withTimeout(async () => Promise.reject(new Error("boom")), 100)).rejects.toThrow("boom");
    const parent = new AbortController();
    const run = withTimeout(
      (signal) => new Promise<number>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
      10_000,
      parent.signal,
    );
    parent.abort(new Error("stop"));
    await expect(run).rejects.toThrow("stop");
  });

  it("sleep ends early when aborted", async () => {
    const controller = new AbortController();
    const slept = sleep(10_000, controller.signal);
    controller.abort(new Error("cancelled"));
    await expect(slept).rejects.toThrow("cancelled");
  });
});
