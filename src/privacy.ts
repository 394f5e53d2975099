/**
 * `tool-lessons/privacy`: the gate every untrusted text passes before it is stored, learned,
 * routed, shown or logged (`src/text/`), for an application that wants the same checks on its
 * own texts, or the detectors in langchain v1's `piiMiddleware` (each has its `PIIDetector`
 * shape: `(content) => { text, start, end }[]`). See docs/security.md.
 */
export {
  type GateKind,
  type GateOptions,
  type GateRefusal,
  type GateResult,
  gateText,
  redactForLog,
} from "./text/gate.js";
export { createMasker, type Masker, maskText, type MaskOptions } from "./text/mask.js";
export {
  detectPrivateData,
  findPrivateData,
  type NamedDetector,
  PII_DETECTORS,
  type PIIDetector,
  type PIIMatch,
} from "./text/detectors.js";
export { type AimedPattern, findAimedAtModel, type FindAimedOptions } from "./text/injection.js";
export { type AllowedWords, type AllowedWordsOptions, commonWords, keepAllowedWords } from "./text/vocabulary.js";
