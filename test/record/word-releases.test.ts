import { describe, expect, it } from "vitest";
import { staticAllowedWords, wordHash } from "../../src/text/free-text.js";
import { WordReleases } from "../../src/record/word-releases.js";

const KEY = "k".repeat(64);
const ALLOWED = staticAllowedWords(["check_account"], []);
const P = "u:u-1";

describe("WordReleases", () => {
  it("keeps a word one thread shows as a token, however often; a second thread releases it", () => {
    const r = new WordReleases();
    const text = "Zephyrix plan not active";
    for (let i = 0; i < 3; i++)
      expect(r.keep(text, { partition: P, thread: "a" }, ALLOWED, KEY)).not.toContain("Zephyrix");
    expect(r.isReleased(P, wordHash("Zephyrix", KEY))).toBe(false);
    expect(r.keep(text, { partition: P, thread: "b" }, ALLOWED, KEY)).toBe(text);
    expect(r.isReleased(P, wordHash("Zephyrix", KEY))).toBe(true);
    expect(r.keep(text, { partition: P, thread: "a" }, ALLOWED, KEY)).toBe(text);
  });

  it("releases nothing across partitions", () => {
    const r = new WordReleases();
    r.keep("Zephyrix down", { partition: "u:a", thread: "a" }, ALLOWED, KEY);
    expect(r.keep("Zephyrix down", { partition: "u:b", thread: "b" }, ALLOWED, KEY)).not.toContain("Zephyrix");
  });

  it("in a partition several callers share, a second thread of the same caller releases nothing", () => {
    const r = new WordReleases();
    const at = (thread: string, caller: string) => ({ partition: "t:acme", thread, caller });
    r.keep("ok", at("x", "erin"), ALLOWED, KEY);
    r.keep("Quenby called", at("a", "sam"), ALLOWED, KEY);
    expect(r.keep("Quenby called", at("b", "sam"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep("Quenby called", at("c", "erin"), ALLOWED, KEY)).toBe("Quenby called");
  });

  it("remembers at most maxSightings first sightings: a forgotten one needs two more threads", () => {
    const r = new WordReleases({ maxSightings: 2 });
    r.keep("Quenby", { partition: P, thread: "a" }, ALLOWED, KEY);
    r.keep("Abernethy Ravensworth", { partition: P, thread: "b" }, ALLOWED, KEY);
    // "Quenby" was forgotten (the oldest): thread c is its first sighting again.
    expect(r.keep("Quenby", { partition: P, thread: "c" }, ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep("Quenby", { partition: P, thread: "d" }, ALLOWED, KEY)).toBe("Quenby");
  });

  it("saves released words to the ledger once; a failed write is tried again with the next save", async () => {
    const r = new WordReleases();
    r.keep("Zephyrix", { partition: P, thread: "a" }, ALLOWED, KEY);
    r.keep("Zephyrix", { partition: P, thread: "b" }, ALLOWED, KEY);
    const saved: [string, [string, string][]][] = [];
    let fail = true;
    const ledger = {
      releaseWords: async (partition: string, words: ReadonlyMap<string, string>) => {
        if (fail) throw new Error("store down");
        saved.push([partition, [...words]]);
      },
    };
    await r.save(ledger);
    expect(saved).toEqual([]);
    fail = false;
    await r.save(ledger);
    await r.save(ledger);
    expect(saved).toEqual([[P, [[wordHash("Zephyrix", KEY), "Zephyrix"]]]]);
  });
});
