/**
 * `tool-lessons/privacy`: the gate every untrusted text passes before it is stored, learned,
 * routed, shown or logged (`src/text/`), for an application that wants the same checks on its
 * own texts, or the detectors in langchain v1's `piiMiddleware` (each has its `PIIDetector`
 * shape: `(content) => { text, start, end }[]`). See docs/security.md.
 */
export {
  DEFAULT_GATE_OPTIONS,
  type GateKind,
  type GateOptions,
  type GateRefusal,
  type GateResult,
  gateText,
  redactError,
  redactForLog,
} from "./text/gate.js";
export { normalizeText, skeleton } from "./text/normalize.js";
export { createMasker, type Masker, maskRequest, maskText, type MaskOptions } from "./text/mask.js";
export {
  detectApiKeys,
  detectBearerTokens,
  detectCreditCards,
  detectEmails,
  detectHighEntropyTokens,
  detectIbans,
  detectIPv4,
  detectIPv6,
  detectJwts,
  detectMacAddresses,
  detectPemBlocks,
  detectPhoneNumbers,
  detectPrivateData,
  detectSecretAssignments,
  detectStreetAddresses,
  detectUrlCredentials,
  detectUrls,
  detectUuids,
  findPrivateData,
  type NamedDetector,
  PII_DETECTORS,
  type PIIDetector,
  type PIIMatch,
} from "./text/detectors.js";
export { type AimedPattern, findAimedAtModel, type FindAimedOptions } from "./text/injection.js";
export {
  allowedWords,
  type AllowedWords,
  type AllowedWordsOptions,
  commonWords,
  keepAllowedWords,
} from "./text/vocabulary.js";
