/**
 * The thresholds and caps of learning, as one object: the settings the lesson-kinds table names
 * (`ledger/lesson-kinds.ts`) plus the line length. A proposer is given them; the vet applies them.
 */
import { LIMIT_SETTINGS, type LimitSetting } from "../ledger/lesson-kinds.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";

/** The thresholds and caps a proposer should respect (the vet enforces them anyway). */
export type EvidenceLimits = Pick<Settings, LimitSetting>;

/** The limits out of (partial) settings, each one missing taken from `DEFAULT_SETTINGS`. */
export function evidenceLimits(settings: Partial<Settings> = {}): EvidenceLimits {
  const out = {} as Record<LimitSetting, number>;
  for (const key of LIMIT_SETTINGS) out[key] = settings[key] ?? DEFAULT_SETTINGS[key];
  return out;
}
