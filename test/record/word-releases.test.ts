import { describe, expect, it } from "vitest";
import { staticAllowedWords, wordHash } from "../../src/text/free-text.js";
import { WordReleases } from "../../src/record/word-releases.js";

const KEY = "k".repeat(64);
const ALLOWED = staticAllowedWords(["check_account"], []);
const P = "t:acme";
const at = (thread: string, caller?: string) => ({ partition: P, thread, ...(caller ? { caller } : {}) });

describe("WordReleases: a word is released only when three distinct callers showed it", () => {
  it("never within one caller, however many threads show it", () => {
    const r = new WordReleases();
    const text = "Zephyrix plan not active";
    for (let i = 0; i < 50; i++) expect(r.keep(text, at(`t-${i}`, "sam"), ALLOWED, KEY)).not.toContain("Zephyrix");
    expect(r.isReleased(P, wordHash("Zephyrix", KEY))).toBe(false);
  });

  it("never by runs whose caller is unknown, however many threads", () => {
    const r = new WordReleases();
    for (let i = 0; i < 20; i++) expect(r.keep("Zephyrix down", at(`t-${i}`), ALLOWED, KEY)).not.toContain("Zephyrix");
    // Unknown callers count for no one: two known callers after them are still too few.
    r.keep("Zephyrix down", at("a", "sam"), ALLOWED, KEY);
    expect(r.keep("Zephyrix down", at("b", "erin"), ALLOWED, KEY)).not.toContain("Zephyrix");
  });

  it("two callers are not enough; the third releases it, in that record and the next", () => {
    const r = new WordReleases();
    const text = "Quenby called";
    expect(r.keep(text, at("a", "sam"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep(text, at("b", "sam"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep(text, at("c", "erin"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep(text, at("c", "erin"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep(text, at("d", "kim"), ALLOWED, KEY)).toBe(text);
    expect(r.keep(text, at("e", "sam"), ALLOWED, KEY)).toBe(text);
  });

  it("releases nothing across partitions: callers of another partition do not count", () => {
    const r = new WordReleases();
    r.keep("Zephyrix down", { partition: "t:a", thread: "a", caller: "sam" }, ALLOWED, KEY);
    r.keep("Zephyrix down", { partition: "t:b", thread: "b", caller: "erin" }, ALLOWED, KEY);
    expect(r.keep("Zephyrix down", { partition: "t:c", thread: "c", caller: "kim" }, ALLOWED, KEY)).not.toContain(
      "Zephyrix",
    );
  });

  it("a smaller minCallers is never below two", () => {
    const r = new WordReleases({ minCallers: 1 });
    expect(r.keep("Zephyrix", at("a", "sam"), ALLOWED, KEY)).not.toContain("Zephyrix");
    expect(r.keep("Zephyrix", at("b", "sam"), ALLOWED, KEY)).not.toContain("Zephyrix");
    expect(r.keep("Zephyrix", at("c", "erin"), ALLOWED, KEY)).toBe("Zephyrix");
  });

  it("remembers at most maxSightings words: a forgotten one needs three callers again", () => {
    const r = new WordReleases({ maxSightings: 2 });
    r.keep("Quenby", at("a", "sam"), ALLOWED, KEY);
    r.keep("Quenby", at("b", "erin"), ALLOWED, KEY);
    r.keep("Abernethy Ravensworth", at("c", "kim"), ALLOWED, KEY);
    // "Quenby" was forgotten (the oldest): kim is its first caller again.
    expect(r.keep("Quenby", at("d", "kim"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep("Quenby", at("e", "sam"), ALLOWED, KEY)).not.toContain("Quenby");
    expect(r.keep("Quenby", at("f", "erin"), ALLOWED, KEY)).toBe("Quenby");
  });

  it("saves released words to the ledger once; a failed write is tried again with the next save", async () => {
    const r = new WordReleases();
    for (const caller of ["sam", "erin", "kim"]) r.keep("Zephyrix", at(caller, caller), ALLOWED, KEY);
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
