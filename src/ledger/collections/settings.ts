import { DEFAULT_SETTINGS, parseSettings, type Settings, type SettingsInput } from "../../settings.js";
import { announcedWrite, changesSince, type PartitionVersion } from "../versions.js";

/** Partitions whose followed version a ledger remembers (and whose settings it caches past a follow). */
const KEPT_PARTITIONS = 10_000;
import { type LedgerContext, namespaceOf } from "./store-io.js";
import { BoundedMap } from "../bounded-map.js";

/**
 * The settings row of a partition: what an operator stored over `DEFAULT_SETTINGS`.
 *
 * Key layout: `[root, partition, "settings"]`, key `"current"` → `Settings` (the whole merged
 * object, validated by the one schema in `src/settings.ts`).
 *
 * Invariants:
 * - cached per `Ledger` object after the first read; `configure` updates the cache, so the prune
 *   schedules of the same ledger follow it at once. Another process's change is announced in the
 *   partition's version (`../versions.ts`): a ledger that reads a version with a settings change it
 *   had not seen drops its cached settings ({@link SettingsRow.follow}), so serving, which reads the
 *   version every turn, uses them from its next turn;
 * - a corrupt row gives the defaults, counted in `skippedRows` and warned about once per ledger
 *   (the defaults are cached); it is overwritten by the next `configure`.
 */
export class SettingsRow {
  /** Bounded like `checkedAt`: a partition forgotten is read again on its next use. */
  private readonly cache = new BoundedMap<string, Settings>(KEPT_PARTITIONS);
  /** The version each cached partition's settings were last checked against. */
  private readonly checkedAt = new Map<string, number>();

  constructor(private readonly ctx: LedgerContext) {}

  /** The partition's stored settings over the defaults. */
  async get(partition: string): Promise<Settings> {
    const cached = this.cache.get(partition);
    if (cached) return cached;
    const item = await this.ctx.store.get(namespaceOf(this.ctx, partition, "settings"), "current");
    let settings = DEFAULT_SETTINGS;
    if (item) {
      try {
        settings = parseSettings(item.value);
      } catch (error) {
        this.ctx.counters.skippedRows += 1;
        this.ctx.report("settings_unparsed", "Stored settings do not parse; using the defaults.", { partition }, error);
      }
    }
    this.cache.set(partition, settings);
    return settings;
  }

  /** Drop the cached settings of a partition whose version says they changed since it was last followed. */
  follow(partition: string, version: PartitionVersion): void {
    const seen = this.checkedAt.get(partition);
    this.checkedAt.delete(partition);
    // Bounded like the cache it guards: a partition forgotten here is simply read again.
    if (this.checkedAt.size >= KEPT_PARTITIONS) {
      const oldest = this.checkedAt.keys().next().value as string;
      this.checkedAt.delete(oldest);
      this.cache.delete(oldest);
    }
    this.checkedAt.set(partition, version.seq);
    if (seen === undefined) {
      // First look: the cache, if any, came from a read older than this version.
      if (version.seq > 0) this.cache.delete(partition);
      return;
    }
    const since = changesSince(version, seen);
    if (since && since.kinds.has("settings")) this.cache.delete(partition);
  }

  /**
   * Store settings for a partition, merged over what is stored.
   * @throws InvalidInput naming each bad field; nothing is stored then.
   */
  async configure(partition: string, input: SettingsInput): Promise<Settings> {
    const settings = parseSettings(input, await this.get(partition));
    await announcedWrite(this.ctx, [{ partition, kind: "settings" }], () =>
      this.ctx.store.put(namespaceOf(this.ctx, partition, "settings"), "current", settings),
    );
    this.cache.set(partition, settings);
    return settings;
  }
}
