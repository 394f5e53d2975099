import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import {
  callerIdOf,
  callerIds,
  MAX_ID_LENGTH,
  partitionOf,
  type PartitionSpec,
  partitionTemplate,
  resolveCaller,
} from "../../src/caller/partition.js";
import { resolveThreadCaller, ThreadCallers } from "../../src/caller/thread-callers.js";

/**
 * Who the caller is, when sources disagree (issue 44, item 6). The cases are built from the
 * classes of source (the app's configurable, v1 context, LangGraph's authenticated user, the
 * client's metadata) and of user key (user_id, langgraph_user_id, the auth keys), every pair.
 */

type Config = {
  metadata?: Record<string, unknown>;
  configurable?: Record<string, unknown>;
  context?: Record<string, unknown>;
};

/** Each way a user can be named, in the source it belongs to. */
const NAMINGS: { name: string; trust: "auth" | "app" | "client"; config: (user: string) => Config }[] = [
  {
    name: "configurable.langgraph_auth_user_id",
    trust: "auth",
    config: (u) => ({ configurable: { langgraph_auth_user_id: u } }),
  },
  {
    name: "configurable.langgraph_auth_user.identity",
    trust: "auth",
    config: (u) => ({ configurable: { langgraph_auth_user: { identity: u, permissions: [] } } }),
  },
  { name: "configurable.user_id", trust: "app", config: (u) => ({ configurable: { user_id: u } }) },
  { name: "configurable.langgraph_user_id", trust: "app", config: (u) => ({ configurable: { langgraph_user_id: u } }) },
  { name: "context.user_id", trust: "app", config: (u) => ({ context: { user_id: u } }) },
  { name: "metadata.user_id", trust: "client", config: (u) => ({ metadata: { user_id: u } }) },
  { name: "metadata.langgraph_user_id", trust: "client", config: (u) => ({ metadata: { langgraph_user_id: u } }) },
];

/** Two namings merged into one config (the first's keys, then the second's, per source). */
function both(a: Config, b: Config): Config {
  return {
    metadata: { ...a.metadata, ...b.metadata },
    configurable: { ...a.configurable, ...b.configurable },
    context: { ...a.context, ...b.context },
  };
}

const RANK = { auth: 0, app: 1, client: 2 } as const;

describe("trust order: the app's sources beat the client's metadata", () => {
  it("every naming alone names the user: partition and caller id", () => {
    for (const naming of NAMINGS) {
      const config = naming.config("erin");
      expect(partitionOf(config), naming.name).toBe("u:erin");
      expect(callerIdOf(config), naming.name).toBe("u:erin");
    }
  });

  it("of every pair of namings from sources of different trust, the more trusted wins (partition and caller id)", () => {
    let pairs = 0;
    for (const a of NAMINGS) {
      for (const b of NAMINGS) {
        if (RANK[a.trust] >= RANK[b.trust]) continue;
        for (const config of [
          both(a.config("trusted"), b.config("other")),
          both(b.config("other"), a.config("trusted")),
        ]) {
          expect(partitionOf(config), `${a.name} vs ${b.name}`).toBe("u:trusted");
          expect(callerIdOf(config), `${a.name} vs ${b.name}`).toBe("u:trusted");
        }
        pairs += 1;
      }
    }
    expect(pairs).toBe(16);
  });

  it("a client's metadata cannot name another tenant for the app's user either", () => {
    const config = {
      metadata: { tenant_id: "victim", user_id: "mallory" },
      configurable: { tenant_id: "acme", user_id: "erin" },
    };
    expect(partitionOf(config)).toBe("t:acme/u:erin");
    expect(partitionOf(config, "t:{tenant_id}/u:{user_id}")).toBe("t:acme/u:erin");
    expect(callerIdOf(config)).toBe("t:acme/u:erin");
  });

  it("callerIds({ order: 'metadata-first' }) gives the other order, for the partition, templates and the caller id", () => {
    const spec = callerIds({ order: "metadata-first" });
    const config = { metadata: { user_id: "client" }, configurable: { user_id: "app" } };
    expect(partitionOf(config, spec)).toBe("u:client");
    expect(callerIdOf(config, spec)).toBe("u:client");
    const templated = callerIds({ order: "metadata-first", template: "u:{user_id}" });
    expect(partitionOf(config, templated)).toBe("u:client");
    // The default spec object is the default order; no ids is no answer (never a named "default").
    expect(partitionOf(config, callerIds())).toBe("u:app");
    expect(resolveCaller({}, {}, callerIds()).from).toBe("none");
    expect(() => callerIds({ order: "client" as never })).toThrow(InvalidInput);
    // The public door: partitionTemplate, with or without a template.
    expect(partitionOf(config, partitionTemplate({ order: "metadata-first" }))).toBe("u:client");
    expect(partitionOf(config, partitionTemplate("u:{user_id}", { order: "metadata-first" }))).toBe("u:client");
    expect(partitionOf(config, partitionTemplate("u:{user_id}"))).toBe("u:app");
  });

  it("a node remembers the caller it resolved, in the spec's order, for the recorder", () => {
    const callers = new ThreadCallers();
    const config = { metadata: { user_id: "mallory" }, configurable: { user_id: "erin" } };
    expect(resolveThreadCaller(config, undefined, "t1", callers)).toBe("u:erin");
    expect(callers.callerOf("t1")).toBe("u:erin");
    const spec: PartitionSpec = callerIds({ order: "metadata-first" });
    expect(resolveThreadCaller(config, spec, "t2", callers)).toBe("u:mallory");
    expect(callers.callerOf("t2")).toBe("u:mallory");
  });

  it("two users named by langgraph_user_id are two callers (the caller rule can tell them apart)", () => {
    const a = callerIdOf({ configurable: { langgraph_user_id: "ann" } });
    const b = callerIdOf({ configurable: { langgraph_user_id: "bob" } });
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(a).not.toBe(b);
  });
});

describe("ids are capped", () => {
  /** Ids of each length class around the cap, of each alphabet class. */
  const ALPHABETS = ["a", "é", "日", "😀", "%", "~"];

  it("an id of at most 256 characters is kept; one longer is refused with InvalidInput that does not repeat it", () => {
    for (const ch of ALPHABETS) {
      const at = ch.repeat(Math.floor(MAX_ID_LENGTH / ch.length));
      expect(at.length).toBeLessThanOrEqual(MAX_ID_LENGTH);
      expect(() => partitionOf({ metadata: { user_id: at } }), ch).not.toThrow();
      for (const length of [MAX_ID_LENGTH + 2, 4096, 1 << 20]) {
        const long = ch.repeat(Math.ceil(length / ch.length));
        for (const key of ["tenant_id", "user_id", "agent_id", "langgraph_user_id", "langgraph_auth_user_id"]) {
          let thrown: unknown;
          try {
            partitionOf({ configurable: { [key]: long } });
          } catch (error) {
            thrown = error;
          }
          expect(thrown, `${key} ${length}`).toBeInstanceOf(InvalidInput);
          expect((thrown as Error).message.length).toBeLessThan(400);
          expect((thrown as Error).message).not.toContain(ch.repeat(16));
        }
      }
    }
  });

  it("a template's key and the auth identity are capped the same way; a resolver's key at three ids' length", () => {
    const long = "x".repeat(MAX_ID_LENGTH + 1);
    expect(() => partitionOf({ metadata: { org: long } }, "{org}")).toThrow(InvalidInput);
    expect(() => partitionOf({ configurable: { langgraph_auth_user: { identity: long } } })).toThrow(InvalidInput);
    expect(() => partitionOf({}, () => "p".repeat(1 << 20))).toThrow(InvalidInput);
    expect(partitionOf({}, () => `t:${"a".repeat(256)}/u:${"b".repeat(256)}`)).toMatch(/^t:a+\/u:b+$/);
  });

  it("callerIdOf names no caller for an id past the cap, rather than throwing", () => {
    expect(callerIdOf({ metadata: { user_id: "u".repeat(MAX_ID_LENGTH + 1) } })).toBeUndefined();
  });

  it("a megabyte thread id is remembered by a digest: found again, and the map holds no copy of it", () => {
    const callers = new ThreadCallers({ maxThreads: 4 });
    const threads = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(1 << 20));
    threads.forEach((thread, i) => callers.remember(thread, `u:${i}`, `u:${i}`));
    expect(callers.partitionOf(threads[5])).toBe("u:5");
    expect(callers.callerOf(threads[4])).toBe("u:4");
    // Bounded: the oldest are forgotten.
    expect(callers.partitionOf(threads[0])).toBeUndefined();
    const keys = [...(callers as unknown as { callers: Map<string, unknown> }).callers.keys()];
    expect(keys).toHaveLength(4);
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThan(100);
  });
});
