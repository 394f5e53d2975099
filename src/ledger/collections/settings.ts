import { DEFAULT_SETTINGS, parseSettings, type Settings, type SettingsInput } from "../../settings.js";
import { countingLessonsWrite } from "../lessons-stamp.js";
import { type LedgerContext, namespaceOf } from "./store-io.js";

/**
 * The settings row of a partition: what an operator stored over `DEFAULT_SETTINGS`.
 *
 * Key layout: `[root, partition, "settings"]`, key `"current"` → `Settings` (the whole merged
 * object, validated by the one schema in `src/settings.ts`).
 *
 * Invariants:
 * - cached per `Ledger` object after the first read; `configure` updates the cache, so the prune
 *   schedules of the same ledger follow it at once. Another process's change is seen by a new
 *   `Ledger` only;
 * - a corrupt row gives the defaults, counted in `skippedRows` and warned about once per ledger
 *   (the defaults are cached); it is overwritten by the next `configure`.
 */
export class SettingsRow {
  private readonly cache = new Map<string, Settings>();

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

  /**
   * Store settings for a partition, merged over what is stored.
   * @throws InvalidInput naming each bad field; nothing is stored then.
   */
  async configure(partition: string, input: SettingsInput): Promise<Settings> {
    const settings = parseSettings(input, await this.get(partition));
    await countingLessonsWrite(this.ctx.store, [partition], () =>
      this.ctx.store.put(namespaceOf(this.ctx, partition, "settings"), "current", settings),
    );
    this.cache.set(partition, settings);
    return settings;
  }
}
