import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import {
  escapeId,
  isReservedPartition,
  partitionKey,
  partitionOf,
  partitionTemplate,
  resolvePartition,
} from "../../src/caller/partition.js";
import { SHARED_SCOPE } from "../../src/rules/model.js";

/** A small seeded generator, so a failing case can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters chosen to collide: separators of every template below, the escape character, the
// reserved prefix, letters of "default"/"shared", and a few non-ASCII ones.
const ID_CHARS = [
  "a",
  "b",
  "d",
  "e",
  "f",
  "u",
  "l",
  "t",
  ":",
  "/",
  ".",
  "-",
  "_",
  "%",
  "2",
  "F",
  "~",
  " ",
  "é",
  "ａ",
  "@",
];
const LITERALS = ["", ":", "/", ".", "-", "_", "%", "%2F", "t:", "u:", "/u:", "x", "~", "::", "a/b", "d", "s"];
const KEYS = ["tenant_id", "user_id", "agent_id"];

function randomId(next: () => number): string {
  const length = 1 + Math.floor(next() * 4);
  let id = "";
  for (let i = 0; i < length; i++) id += ID_CHARS[Math.floor(next() * ID_CHARS.length)];
  return id.trim() === "" ? `${id}a` : id;
}

function randomTemplate(next: () => number): string {
  const count = 1 + Math.floor(next() * 3);
  let template = LITERALS[Math.floor(next() * LITERALS.length)]!;
  for (let i = 0; i < count; i++) {
    template += `{${KEYS[i]}}${LITERALS[Math.floor(next() * LITERALS.length)]!}`;
  }
  return template;
}

describe("escapeId", () => {
  it("keeps [A-Za-z0-9._-] and percent-encodes every other character", () => {
    expect(escapeId("acme")).toBe("acme");
    expect(escapeId("3f2a-9b.x_y")).toBe("3f2a-9b.x_y");
    expect(escapeId("acme:bob")).toBe("acme%3Abob");
    expect(escapeId("a/b%c")).toBe("a%2Fb%25c");
    expect(escapeId("~shared")).toBe("%7Eshared");
    expect(escapeId("ａ é")).toBe("%EF%BD%81%20%C3%A9");
  });

  it("is undone by decodeURIComponent, so two ids never share a written form", () => {
    const next = rng(7);
    for (let i = 0; i < 2000; i++) {
      const id = randomId(next);
      expect(decodeURIComponent(escapeId(id))).toBe(id);
      expect(escapeId(id)).toMatch(/^[A-Za-z0-9._%-]+$/);
    }
  });
});

describe("partition keys cannot collide", () => {
  it("the attack of issue 29: tenant acme:bob + user x and tenant acme + user bob:x", () => {
    const template = "{tenant_id}:{user_id}";
    const a = partitionOf({ metadata: { tenant_id: "acme:bob", user_id: "x" } }, template);
    const b = partitionOf({ metadata: { tenant_id: "acme", user_id: "bob:x" } }, template);
    expect(a).toBe("acme%3Abob:x");
    expect(b).toBe("acme:bob%3Ax");
    expect(a).not.toBe(b);
  });

  it("refuses templates whose ids are separated only by characters an id may hold", () => {
    for (const bad of [
      "{tenant_id}{user_id}",
      "{tenant_id}.{user_id}",
      "{tenant_id}-{user_id}",
      "{a}_{b}",
      "{a}%{b}",
      "t{a}x9{b}u",
    ]) {
      expect(() => partitionTemplate(bad), bad).toThrow(InvalidInput);
    }
    for (const good of ["{tenant_id}:{user_id}", "{a}/{b}", "t:{a}/u:{b}", "x{a}-:-{b}y", "{a}", "pre.{a}.post"]) {
      expect(() => partitionTemplate(good), good).not.toThrow();
    }
  });

  // Every id of up to two characters from a collision-prone alphabet: separators, the escape
  // character, the reserved prefix and its encoding's letters.
  const SMALL = ["a", "E", "7", ":", "/", ".", "-", "_", "%", "~"];
  const SMALL_IDS = [...SMALL, ...SMALL.flatMap((x) => SMALL.map((y) => x + y))];

  it("property: under every accepted random template of two ids, every pair of small ids gets its own key", () => {
    const next = rng(29);
    let accepted = 0;
    let refused = 0;
    for (let t = 0; t < 30; t++) {
      let template = LITERALS[Math.floor(next() * LITERALS.length)]!;
      template += `{tenant_id}${LITERALS[Math.floor(next() * LITERALS.length)]!}{user_id}`;
      template += LITERALS[Math.floor(next() * LITERALS.length)]!;
      let resolve: ReturnType<typeof partitionTemplate>;
      try {
        resolve = partitionTemplate(template);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInput);
        refused++;
        continue;
      }
      accepted++;
      const seen = new Map<string, string>();
      for (const tenant_id of SMALL_IDS) {
        for (const user_id of SMALL_IDS) {
          const key = resolve({ metadata: { tenant_id, user_id } }) as string;
          expect(isReservedPartition(key), `${template} ${key}`).toBe(false);
          const tuple = `${tenant_id}\u0000${user_id}`;
          const before = seen.get(key);
          if (before !== undefined) expect(before, `${template} → ${key}`).toBe(tuple);
          seen.set(key, tuple);
        }
      }
    }
    expect(accepted).toBeGreaterThan(5);
    expect(refused).toBeGreaterThan(3);
  });

  it("property: under every accepted random template, distinct random tuples get distinct keys", () => {
    const next = rng(11);
    for (let t = 0; t < 300; t++) {
      const template = randomTemplate(next);
      let resolve: ReturnType<typeof partitionTemplate>;
      try {
        resolve = partitionTemplate(template);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInput);
        continue;
      }
      const seen = new Map<string, string>();
      for (let i = 0; i < 300; i++) {
        const metadata = { tenant_id: randomId(next), user_id: randomId(next), agent_id: randomId(next) };
        const used = KEYS.filter((k) => template.includes(`{${k}}`));
        const tuple = JSON.stringify(used.map((k) => metadata[k as keyof typeof metadata]));
        let key: string;
        try {
          key = resolve({ metadata }) as string;
        } catch (error) {
          // Only a reserved key may refuse a caller; it then has no key at all.
          expect(error).toBeInstanceOf(InvalidInput);
          continue;
        }
        expect(isReservedPartition(key), `${template} ${tuple}`).toBe(false);
        const before = seen.get(key);
        if (before !== undefined) expect(before, `${template} → ${key}`).toBe(tuple);
        seen.set(key, tuple);
      }
    }
  });

  it("property: the default resolver's keys are distinct for distinct tuples and never reserved", () => {
    const next = rng(3);
    const seen = new Map<string, string>();
    for (let i = 0; i < 5000; i++) {
      const parts = {
        tenantId: randomId(next),
        userId: next() < 0.5 ? randomId(next) : undefined,
        agentId: randomId(next),
      };
      const key = partitionKey(parts);
      expect(isReservedPartition(key)).toBe(false);
      const tuple = JSON.stringify(parts);
      const before = seen.get(key);
      if (before !== undefined) expect(before).toBe(tuple);
      seen.set(key, tuple);
    }
  });
});

describe("reserved scopes cannot be produced from caller ids", () => {
  it("a user id of ~shared or default never names the shared scope or the default partition", () => {
    expect(partitionOf({ metadata: { user_id: "~shared" } }, "{user_id}")).toBe("%7Eshared");
    expect(() => partitionOf({ metadata: { user_id: "default" } }, "{user_id}")).toThrow(InvalidInput);
    expect(() => partitionOf({ metadata: { user_id: "efault" } }, "d{user_id}")).toThrow(/reserves/);
    expect(partitionOf({ metadata: { user_id: "default" } })).toBe("u:default");
    expect(partitionOf({ metadata: { user_id: "~shared" } })).toBe("u:%7Eshared");
    expect(partitionOf({ metadata: { user_id: "~shared" } }, "{user_id}")).not.toBe(SHARED_SCOPE);
  });

  it("a template may not start with ~, and a resolver function may not answer a reserved scope", () => {
    expect(() => partitionTemplate("~{user_id}")).toThrow(InvalidInput);
    expect(() => partitionTemplate(SHARED_SCOPE)).toThrow(InvalidInput);
    expect(() => resolvePartition({}, undefined, () => SHARED_SCOPE)).toThrow(InvalidInput);
    expect(() =>
      resolvePartition({ user_id: "default" }, undefined, ({ metadata }) => String(metadata.user_id)),
    ).toThrow(InvalidInput);
    // The operator's fixed partition (no caller id in it) and parts from a resolver stay allowed.
    expect(resolvePartition({}, undefined, "default")).toBe("default");
    expect(resolvePartition({}, undefined, () => ({ userId: "~shared" }))).toBe("u:%7Eshared");
  });

  it("the shared scope is a reserved name", () => {
    expect(isReservedPartition(SHARED_SCOPE)).toBe(true);
    expect(isReservedPartition("default")).toBe(true);
    expect(isReservedPartition("u:default")).toBe(false);
  });
});
