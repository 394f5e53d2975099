/**
 * The channel test's figures: per channel and per sink, the cases tried, refused and leaked, the
 * first leaks (case id, sink, the leaking text), the lessons learned; printed as a table and
 * written to test-results/privacy-channels.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ChannelRun, ItemSink, LogSink, SinkItem } from "./channels.js";
import {
  InjectionFinder,
  type InjectionHit,
  injectionOwners,
  plantedOf,
  ValueFinder,
  type ValueHit,
  VALUES,
  VALUES_AND_WORDING,
} from "./leaks.js";

/** Every sink, in the order the report lists them. */
export const SINKS = [
  "SQLite file + WAL (bytes)",
  "Postgres rows",
  "lessons",
  "routing text",
  "prompt (examples hidden)",
  "prompt (examples shown)",
  "failureSink (recorder)",
  "failureSink (route node)",
  "failureSink (ledger)",
  "console",
] as const;
export type Sink = (typeof SINKS)[number];

const BYTES: Sink = "SQLite file + WAL (bytes)";
const ROWS: Sink = "Postgres rows";
const ITEM_SINKS: readonly ItemSink[] = [
  "lessons",
  "routing text",
  "prompt (examples hidden)",
  "prompt (examples shown)",
];
const LOG_SINKS: readonly LogSink[] = [
  "failureSink (recorder)",
  "failureSink (route node)",
  "failureSink (ledger)",
  "console",
];

/** Refusal reasons that are the gate's (a value, private data, text aimed at the model, a word not allowed). */
const GATE_REASON = /value|private|aimed|word/;

/** One leak: a case's planted value or injection found in a sink. */
export interface Leak {
  caseId: string;
  sink: Sink;
  /** How it was found: `verbatim`, `skeleton`, `digits masked only`, `letters "…"`, `injection words "…"`, `aimed at model (label)`. */
  how: string;
  /** The planted value (absent for an injection). */
  planted?: string;
  /** The leaking text (an excerpt). */
  text: string;
  /** Where (the store's stage, or the partition, tool and part). */
  where: string;
}

export interface SinkFigures {
  tried: number;
  leaked: number;
}

/** The figures of one channel. */
export interface ChannelFigures {
  channel: string;
  title: string;
  backends: string[];
  tried: number;
  /** Cases the gate refused something of (a lesson line, for a value, private data, an injection or a word). */
  refused: number;
  leaked: number;
  /** Near misses (harmless look-alikes) whose text was refused as aimed at the model in a lesson: false alarms. */
  nearMissesRefused: number;
  /** Everything the reviews refused, by `kind:reason` (a case may have several). */
  refusals: Record<string, number>;
  lessons: ChannelRun["lessons"];
  /** Calls the agent made and call records the SQLite ledgers hold (a call lost to recording is missing). */
  calls: ChannelRun["calls"];
  /** Runs that threw, and the cases whose traffic is therefore incomplete. */
  runErrors: ChannelRun["runErrors"];
  sinks: Record<Sink, SinkFigures>;
  /**
   * Cases whose injection reached a lesson, the routing text or a prompt, by how: `aimed` when
   * the gate's own check also finds text aimed at the model in the line, `wordsOnly` when only the
   * payload's words are there (rewritten into a "Not for" phrase, say).
   */
  injections: { aimed: number; wordsOnly: number };
  /** Leaks per sink (every one), for the lead to read in the JSON. */
  leaks: Leak[];
  /** Milliseconds per backend (traffic, reviews and probes, in all), summed over its stores. */
  ms: Record<string, ChannelRun["ms"]>;
}

/**
 * Check every sink of a channel's runs (the SQLite run of every case, the Postgres run of a
 * subset) for every planted value of each case and, in lessons, routing text and prompts, for
 * its injection.
 * @param benign texts whose words are no injection (see {@link InjectionFinder})
 */
export function evaluateChannel(runs: readonly ChannelRun[], benign: readonly string[]): ChannelFigures {
  const [first] = runs;
  const leaks: Leak[] = [];
  const seen = new Set<string>();
  const tried = new Map<Sink, Set<string>>(SINKS.map((s) => [s, new Set<string>()]));
  const add = (leak: Leak): void => {
    const key = `${leak.caseId}\u0000${leak.sink}`;
    if (seen.has(key)) return;
    seen.add(key);
    leaks.push(leak);
  };
  const refusedCases = new Set<string>();
  const nearMisses = new Set<string>();
  const refusals: Record<string, number> = {};
  const lessons = { notes: 0, examples: 0, notFor: 0, exampleCalls: 0 };
  for (const run of runs) {
    const ids = run.cases.map((c) => c.id);
    const finder = new ValueFinder(plantedOf(run.cases));
    const injections = new InjectionFinder(run.cases, benign);
    const byId = new Map(run.cases.map((c) => [c.id, c]));
    const cache = new Map<string, InjectionHit | undefined>();
    const findInjection = (text: string): InjectionHit | undefined => {
      if (!cache.has(text)) cache.set(text, injections.find(text));
      return cache.get(text);
    };
    const blame = (hit: InjectionHit, owners: readonly string[], sink: Sink, text: string, where: string): void => {
      const blamed = injectionOwners(hit, owners);
      const how =
        hit.window !== undefined
          ? `injection words "${hit.window}"${hit.aimed ? ` (${hit.aimed})` : ""}`
          : `aimed at model (${hit.aimed})`;
      for (const caseId of blamed.length > 0 ? blamed : ["(unattributed)"])
        add({ caseId, sink, how, text: text.slice(0, 300), where });
    };

    if (run.bytes.length > 0) ids.forEach((id) => tried.get(BYTES)!.add(id));
    for (const { stage, hits } of run.bytes) {
      for (const hit of hits) add({ ...hit, sink: BYTES, text: hit.excerpt, where: stage });
    }
    if (run.rows !== undefined) {
      ids.forEach((id) => tried.get(ROWS)!.add(id));
      for (const hit of run.rows) add({ ...hit, sink: ROWS, text: hit.excerpt, where: run.backend });
    }
    const owned = lineOwners(run.items);
    const valueCache = new Map<string, ValueHit[]>();
    const findValues = (text: string): ValueHit[] => {
      let hits = valueCache.get(text);
      if (!hits) valueCache.set(text, (hits = finder.find(text, VALUES_AND_WORDING)));
      return hits;
    };
    for (const sink of ITEM_SINKS) {
      ids.forEach((id) => tried.get(sink)!.add(id));
      // Line by line: a description or a routing text holds the lessons of many cases, one a line.
      for (const item of run.items.filter((i) => i.sink === sink)) {
        const lines = item.text.split("\n").filter((l) => l.trim() !== "");
        let found = false;
        for (const line of lines) {
          const owners = owned.get(line) ?? item.owners;
          const where = `${run.backend}: ${item.where}`;
          for (const hit of ownHits(findValues(line), owners)) add({ ...hit, sink, text: line.slice(0, 300), where });
          const hit = findInjection(line);
          if (!hit) continue;
          found = true;
          blame(hit, owners, sink, line, where);
        }
        const whole = found || lines.length < 2 ? undefined : findInjection(item.text);
        if (whole) blame(whole, item.owners, sink, item.text, `${run.backend}: ${item.where}`);
      }
    }
    for (const sink of LOG_SINKS) {
      ids.forEach((id) => tried.get(sink)!.add(id));
      const joined = run.logs
        .filter((l) => l.sink === sink)
        .map((l) => l.text)
        .join("\n\n");
      if (joined === "") continue;
      for (const hit of finder.find(joined, VALUES)) add({ ...hit, sink, text: hit.excerpt, where: run.backend });
    }
    for (const r of run.refusals) {
      const key = `${r.refusal.kind}:${r.refusal.reason}`;
      refusals[key] = (refusals[key] ?? 0) + 1;
      if (!GATE_REASON.test(r.refusal.reason)) continue;
      for (const id of r.owners) {
        refusedCases.add(id);
        // The case's own text refused (an example call is built from argument shapes, not from the text).
        const own = r.refusal.kind !== "example_call";
        if (own && byId.get(id)?.expectRefused === false && r.refusal.reason === "aimed_at_model") nearMisses.add(id);
      }
    }
    for (const k of Object.keys(lessons) as (keyof typeof lessons)[]) lessons[k] += run.lessons[k];
  }
  const sinks = Object.fromEntries(
    SINKS.map((s) => [
      s,
      { tried: tried.get(s)!.size, leaked: new Set(leaks.filter((l) => l.sink === s).map((l) => l.caseId)).size },
    ]),
  ) as Record<Sink, SinkFigures>;
  return {
    channel: first.spec.id,
    title: first.spec.title,
    backends: [...new Set(runs.map((r) => r.backend))].map(
      (b) => `${b} (${runs.filter((r) => r.backend === b).reduce((n, r) => n + r.cases.length, 0)} cases)`,
    ),
    tried: new Set(runs.filter((r) => r.backend === first.backend).flatMap((r) => r.cases.map((c) => c.id))).size,
    refused: refusedCases.size,
    leaked: new Set(leaks.map((l) => l.caseId)).size,
    nearMissesRefused: nearMisses.size,
    refusals,
    lessons,
    calls: runs
      .filter((r) => r.backend === first.backend)
      .reduce((n, r) => ({ recorded: n.recorded + r.calls.recorded, made: n.made + r.calls.made }), {
        recorded: 0,
        made: 0,
      }),
    runErrors: runs.flatMap((r) => r.runErrors),
    sinks,
    injections: injectionKinds(leaks),
    leaks,
    ms: sumMs(runs),
  };
}

function injectionKinds(leaks: readonly Leak[]): ChannelFigures["injections"] {
  const injected = leaks.filter((l) => l.planted === undefined);
  const aimed = new Set(
    injected.filter((l) => l.how.startsWith("aimed") || /\(\w+\)$/.test(l.how)).map((l) => l.caseId),
  );
  const all = new Set(injected.map((l) => l.caseId));
  return { aimed: aimed.size, wordsOnly: [...all].filter((id) => !aimed.has(id)).length };
}

/**
 * The cases each line of an item sink comes from: a lesson line's own cases, and for a line of a
 * card's description or routing text, the cases of the card's lessons it holds. Lines seen
 * elsewhere (what the model was sent) are the same text, so they are looked up by text.
 */
function lineOwners(items: readonly SinkItem[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const byCard = new Map<string, SinkItem[]>();
  const own = (line: string, owners: readonly string[]): void => {
    if (owners.length > 0) out.set(line, [...new Set([...(out.get(line) ?? []), ...owners])]);
  };
  for (const item of items) {
    if (item.sink !== "lessons") continue;
    own(item.text, item.owners);
    const list = byCard.get(item.card) ?? [];
    list.push(item);
    byCard.set(item.card, list);
  }
  for (const item of items) {
    if (item.sink === "lessons") continue;
    const lessons = byCard.get(item.card) ?? [];
    for (const line of item.text.split("\n"))
      own(
        line,
        lessons.filter((l) => line.includes(l.text)).flatMap((l) => l.owners),
      );
  }
  return out;
}

/** A line's hits of its own cases when it has known cases among them; else every hit (a case's value in another's lesson). */
function ownHits(hits: readonly ValueHit[], owners: readonly string[]): readonly ValueHit[] {
  const own = hits.filter((h) => owners.includes(h.caseId));
  return own.length > 0 ? own : hits;
}

function sumMs(runs: readonly ChannelRun[]): Record<string, ChannelRun["ms"]> {
  const out: Record<string, ChannelRun["ms"]> = {};
  for (const r of runs) {
    const m = (out[r.backend] ??= { traffic: 0, review: 0, scan: 0, total: 0 });
    m.traffic += r.ms.traffic;
    m.review += r.ms.review;
    m.scan += r.ms.scan;
    m.total += r.ms.total;
  }
  return out;
}

/** How many leaks each channel's summary shows (the JSON keeps them all). */
export const SHOWN_LEAKS = 5;

/** The report as text: one line per channel, one per sink with a leak, the first leaks. */
export function formatReport(channels: readonly ChannelFigures[]): string {
  const lines: string[] = ["", "Hostile corpus through every channel (tried / refused / leaked cases)", ""];
  for (const c of channels) {
    const l = c.lessons;
    lines.push(
      `${c.channel.padEnd(20)} tried ${String(c.tried).padStart(4)}  refused ${String(c.refused).padStart(4)}  ` +
        `leaked ${String(c.leaked).padStart(4)}  | lessons: ${l.notes} notes, ${l.examples} examples, ` +
        `${l.notFor} not-for, ${l.exampleCalls} example calls | calls recorded ${c.calls.recorded}/${c.calls.made}` +
        `${c.nearMissesRefused ? ` | ${c.nearMissesRefused} near misses refused` : ""}` +
        `${c.injections.aimed + c.injections.wordsOnly ? ` | injections: ${c.injections.aimed} aimed, ${c.injections.wordsOnly} payload words only` : ""}` +
        `${c.runErrors.length ? ` | ${c.runErrors.length} runs threw` : ""}`,
    );
    for (const sink of SINKS) {
      const s = c.sinks[sink];
      if (s.leaked > 0)
        lines.push(
          `    ${sink.padEnd(28)} tried ${String(s.tried).padStart(4)}  leaked ${String(s.leaked).padStart(4)}`,
        );
    }
    for (const leak of c.leaks.slice(0, SHOWN_LEAKS)) {
      lines.push(
        `      ${leak.caseId} → ${leak.sink} [${leak.how}${leak.planted ? ` of ${JSON.stringify(leak.planted)}` : ""}]: ${JSON.stringify(leak.text)}`,
      );
    }
  }
  const total = channels.reduce((n, c) => n + c.leaked, 0);
  lines.push("", `leaked cases over all channels: ${total}`, "");
  return lines.join("\n");
}

/** Write the figures where the lead reads them. */
export function writeReport(path: string, channels: readonly ChannelFigures[], extra: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ ...extra, channels }, null, 2)}\n`);
}
