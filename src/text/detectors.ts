/**
 * Detectors of private data in free text: the second stage of the gate, also usable on their own.
 *
 * Each detector has the shape of langchain v1's `PIIDetector` (`(content) => { text, start, end }[]`),
 * so it can be handed to `piiMiddleware({ detector })` as it is. Pure, and linear in the length of
 * the text: every pattern either has bounded quantifiers behind a boundary that fails at once in the
 * middle of a run, or is found from an anchor (`@`, `://`, `eyJ`, `-----BEGIN`) and scanned once, so
 * a megabyte without a space costs a few passes over it, never one pass per character.
 *
 * Spans are in UTF-16 code units of the string given, `end` exclusive, in order, not overlapping.
 * Run them on normalized text (see `normalize.ts`): a zero-width space inside a key would cut it.
 */

export type { NamedDetector, PIIDetector, PIIMatch } from "./detector-spans.js";
export {
  detectCreditCards,
  detectIbans,
  detectPhoneNumbers,
  detectSpelledCards,
  detectSpelledPhones,
  detectSsns,
  detectPassportIds,
  ibanValid,
  luhnValid,
} from "./detectors-numbers.js";
export { detectSpelledValues } from "./detectors-spelled.js";

import { detectSpelledValues } from "./detectors-spelled.js";
import { type NamedDetector, type PIIDetector, type PIIMatch, regexSpans, span } from "./detector-spans.js";
import {
  detectCreditCards,
  detectIbans,
  detectPassportIds,
  detectPhoneNumbers,
  detectSpelledCards,
  detectSpelledPhones,
  detectSsns,
} from "./detectors-numbers.js";

const isAsciiAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

// ---------------------------------------------------------------- emails

const AT = String.raw`(?:\s*[(\[{<]\s*at\s*[)\]}>]\s*|\s+at\s+)`;
const DOT = String.raw`(?:\s*[(\[{<]\s*dot\s*[)\]}>]\s*|\s+dot\s+)`;
const OBFUSCATED_EMAIL = new RegExp(
  String.raw`(?<![\p{L}\p{N}._%+\-])[\p{L}\p{N}][\p{L}\p{N}._%+\-]{0,63}${AT}[\p{L}\p{N}][\p{L}\p{N}\-]{0,62}(?:(?:${DOT}|\.)[\p{L}\p{N}][\p{L}\p{N}\-]{0,62}){1,4}(?![\p{L}\p{N}])`,
  "giu",
);

/**
 * Emails written so a scraper misses them: `bob (at) example (dot) com`, `bob[at]example.com`,
 * `bob at example dot com`. A plain " at " counts only with a "dot" word after it ("meet at
 * noon.com" is no address; "bob at example dot com" is).
 */
export const detectObfuscatedEmails: PIIDetector = (content) =>
  regexSpans(content, OBFUSCATED_EMAIL, (text) => {
    if (/[(\[{<]\s*at\s*[)\]}>]/i.test(text)) return true;
    // The spoken form: a domain word after "at" (not "the", "a" …) and a top-level domain of 2 to 4 letters last.
    const domain = /\sat\s+([\p{L}\p{N}\-]+)/iu.exec(text)?.[1]?.toLowerCase() ?? "";
    return (
      /\bdot\b/i.test(text) && !SPOKEN_NOT_DOMAIN.has(domain) && /(?:\s+dot\s+|[.\])}>]\s*)[a-z]{2,4}$/i.test(text)
    );
  });

const SPOKEN_NOT_DOMAIN: ReadonlySet<string> = new Set([
  "the",
  "a",
  "an",
  "my",
  "your",
  "our",
  "their",
  "this",
  "that",
  "least",
  "most",
  "home",
  "work",
]);

const EMAIL_LOCAL = /[\p{L}\p{N}._%+\-'!#$&*=?^`{|}~]/u;
const EMAIL_DOMAIN = /[\p{L}\p{N}.\-]/u;
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

/** Email addresses, found from each `@`: `bob.smith+tag@mail.example.co.uk`. */
export const detectEmails: PIIDetector = (content) => {
  const out: PIIMatch[] = [];
  let from = 0;
  let lastEnd = 0;
  for (let at = content.indexOf("@", from); at >= 0; at = content.indexOf("@", from)) {
    from = at + 1;
    let start = at;
    while (start > lastEnd && at - start < MAX_LOCAL && EMAIL_LOCAL.test(content[start - 1])) start -= 1;
    while (start < at && /[.'`{|}~]/.test(content[start])) start += 1;
    let end = at + 1;
    while (end < content.length && end - at <= MAX_DOMAIN && EMAIL_DOMAIN.test(content[end])) end += 1;
    while (end > at + 1 && /[.\-]/.test(content[end - 1])) end -= 1;
    const domain = content.slice(at + 1, end);
    const dot = domain.lastIndexOf(".");
    if (start === at || dot <= 0 || !/^\p{L}{2,}$/u.test(domain.slice(dot + 1))) continue;
    out.push(span(content, start, end));
    lastEnd = end;
    from = end;
  }
  return out;
};

// ---------------------------------------------------------------- URLs

/** Characters that end a URL in running text. */
const URL_STOP = /[\s<>"'`{}|\\^\u0000-\u001f]/;
const SCHEME = /[A-Za-z0-9+.\-]/;

function urlEnd(content: string, from: number): number {
  let end = from;
  while (end < content.length && !URL_STOP.test(content[end])) end += 1;
  // Trailing punctuation belongs to the sentence; a closing bracket only when unopened.
  while (end > from) {
    const last = content[end - 1];
    if (/[.,;:!?*]/.test(last)) end -= 1;
    else if (last === ")" && !content.slice(from, end).includes("(")) end -= 1;
    else if (last === "]" && !content.slice(from, end).includes("[")) end -= 1;
    else break;
  }
  return end;
}

/** `scheme://…` and `www.…` links, to the first space, quote or angle bracket. */
export const detectUrls: PIIDetector = (content) => {
  const spans: PIIMatch[] = [];
  let lastEnd = 0;
  const lower = content.toLowerCase();
  let from = 0;
  while (from < content.length) {
    const scheme = content.indexOf("://", from);
    const www = lower.indexOf("www.", from);
    if (scheme < 0 && www < 0) break;
    if (scheme >= 0 && (www < 0 || scheme <= www)) {
      let start = scheme;
      while (start > lastEnd && scheme - start < 32 && SCHEME.test(content[start - 1])) start -= 1;
      while (start < scheme && !/[A-Za-z]/.test(content[start])) start += 1;
      const end = urlEnd(content, scheme + 3);
      if (start < scheme && end > scheme + 3) {
        spans.push(span(content, start, end));
        lastEnd = end;
        from = end;
      } else {
        from = scheme + 3;
      }
    } else {
      const before = www > 0 ? content.charCodeAt(www - 1) : 32;
      const end = urlEnd(content, www + 4);
      if (!isAsciiAlnum(before) && before !== 46 && end > www + 5 && www >= lastEnd) {
        spans.push(span(content, www, end));
        lastEnd = end;
        from = end;
      } else {
        from = www + 4;
      }
    }
  }
  return spans;
};

/** The `user:password` part of a URL (`https://user:pa55@host/`). */
export const detectUrlCredentials: PIIDetector = (content) => {
  const out: PIIMatch[] = [];
  for (const url of detectUrls(content)) {
    const sep = url.text.indexOf("://");
    if (sep < 0) continue;
    const authority = url.text.slice(sep + 3).split(/[/?#]/, 1)[0];
    const at = authority.lastIndexOf("@");
    if (at <= 0 || !authority.slice(0, at).includes(":")) continue;
    const start = url.start + sep + 3;
    out.push(span(content, start, start + at));
  }
  return out;
};

// ---------------------------------------------------------------- keys and tokens

/**
 * API keys and tokens by their published prefixes, as one alternation (one pass over the text);
 * the boundary keeps "task-" from "sk-".
 */
const KEY_PATTERN = new RegExp(
  `(?<![A-Za-z0-9])(?:${[
    String.raw`sk-(?:proj|svcacct|admin|ant(?:-(?:api|admin)\d\d)?|live|test)-[A-Za-z0-9_\-]{4,}`,
    String.raw`sk-[A-Za-z0-9_\-]{20,}`,
    String.raw`(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{6,}`,
    String.raw`(?:sk|pk|rk|whsec)_[A-Za-z0-9]{16,}`,
    String.raw`(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{12,20}(?![A-Za-z0-9])`,
    String.raw`(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}`,
    String.raw`github_pat_[A-Za-z0-9_]{16,}`,
    String.raw`(?:xox[abposr]|xapp)-[A-Za-z0-9\-]{8,}`,
    String.raw`AIza[A-Za-z0-9_\-]{20,}`,
    String.raw`ya29\.[A-Za-z0-9_\-]{20,}`,
    String.raw`gl(?:pat|dt|rt|ptt|cbt|imt|ft|oas|soat)-[A-Za-z0-9_\-]{16,}`,
    String.raw`(?:npm|hf|dapi|pypi)[_\-][A-Za-z0-9_\-]{20,}`,
    String.raw`SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}`,
    String.raw`(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])`,
    String.raw`shp(?:at|ss|ca|pa)_[A-Fa-f0-9]{16,}`,
    String.raw`do[por]_v1_[a-f0-9]{32,}`,
    String.raw`key-[0-9a-f]{32}(?![A-Za-z0-9])`,
    String.raw`sq0(?:atp|csp)-[A-Za-z0-9_\-]{16,}`,
    String.raw`\d{8,10}:AA[A-Za-z0-9_\-]{30,}`,
  ].join("|")})`,
  "g",
);

/**
 * Prefilter of {@link KEY_PATTERN}: the literal each of its alternatives starts with (or, for a
 * Telegram bot token, holds), without the boundary or the lengths. Every text the pattern matches
 * holds one of these, so a text without any has no key; tried first because the full pattern,
 * with its look-behind at every position, costs ten times as much on ordinary text.
 */
const KEY_PREFIX =
  /sk[-_]|[pr]k_|whsec_|A(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA|BIA|CCA|Iza|C[0-9a-f])|gh[opusr]_|github_pat_|xox[abposr]-|xapp-|ya29\.|gl(?:pat|dt|rt|ptt|cbt|imt|ft|oas|soat)-|(?:npm|hf|dapi|pypi)[_-]|SG\.|SK[0-9a-f]|shp(?:at|ss|ca|pa)_|do[por]_v1_|key-|sq0(?:atp|csp)-|:AA/;

/** API keys and access tokens with a known prefix (OpenAI, Anthropic, Stripe, AWS, GitHub, Slack, Google, GitLab, npm ...). */
export const detectApiKeys: PIIDetector = (content) =>
  KEY_PREFIX.test(content) ? regexSpans(content, KEY_PATTERN) : [];

/** Mixed character classes: what a secret looks like and a word does not. */
function looksSecret(token: string): boolean {
  const lower = /[a-z]/.test(token);
  const upper = /[A-Z]/.test(token);
  const digit = /\d/.test(token);
  return (digit && (lower || upper)) || (lower && upper && /[A-Z]/.test(token.slice(1))) || /[+/=_.~\-]/.test(token);
}

const AUTH_SCHEME = /(?<![A-Za-z0-9])(?:bearer|basic|token|apikey)[ \t]{1,4}([A-Za-z0-9\-._~+/]{8,}=*)/dgi;

/** The credential after `Bearer`, `Basic`, `Token` or `ApiKey` (an Authorization header's value). */
export const detectBearerTokens: PIIDetector = (content) => regexSpans(content, AUTH_SCHEME, looksSecret, 1);

const SECRET_ASSIGNMENT =
  /(?<![A-Za-z0-9])(?:password|passwd|pwd|passphrase|secret|api[_\-]?key|apikey|access[_\-]?key(?:[_\-]?id)?|secret[_\-]?key|client[_\-]?secret|auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|id[_\-]?token|private[_\-]?key|session[_\-]?(?:id|token)|x-api-key|token)["']?[ \t]{0,3}[:=][ \t]{0,3}["']?([^\s"',;&<>]{4,})/dgi;

/** The value in `password=…`, `api_key: …`, `"secret": "…"` and the like. */
export const detectSecretAssignments: PIIDetector = (content) =>
  regexSpans(content, SECRET_ASSIGNMENT, (text) => !/^<[a-z_]+>$/.test(text) && !/^#+$/.test(text), 1);

/** PEM blocks (private keys, certificates), from `-----BEGIN` to the end line, or to the end of the text. */
export const detectPemBlocks: PIIDetector = (content) => {
  const out: PIIMatch[] = [];
  let from = 0;
  for (let begin = content.indexOf("-----BEGIN ", from); begin >= 0; begin = content.indexOf("-----BEGIN ", from)) {
    const endMarker = content.indexOf("-----END ", begin + 11);
    let end = content.length;
    if (endMarker >= 0) {
      const close = content.indexOf("-----", endMarker + 9);
      end = close >= 0 ? close + 5 : content.length;
    }
    out.push(span(content, begin, end));
    from = end;
  }
  return out;
};

const isBase64Url = (c: number): boolean => isAsciiAlnum(c) || c === 45 || c === 95;

/** End of the run of base64url characters starting at `from`. */
function base64UrlRun(content: string, from: number): number {
  let end = from;
  while (end < content.length && isBase64Url(content.charCodeAt(end))) end += 1;
  return end;
}

/** JSON Web Tokens: `eyJ….eyJ….signature`. */
export const detectJwts: PIIDetector = (content) => {
  const out: PIIMatch[] = [];
  let from = 0;
  for (let at = content.indexOf("eyJ", from); at >= 0; at = content.indexOf("eyJ", from)) {
    const headerEnd = base64UrlRun(content, at);
    from = Math.max(headerEnd, at + 1);
    if (at > 0 && isBase64Url(content.charCodeAt(at - 1))) continue;
    if (headerEnd - at < 10 || content[headerEnd] !== "." || !content.startsWith("eyJ", headerEnd + 1)) continue;
    const payloadEnd = base64UrlRun(content, headerEnd + 1);
    from = payloadEnd;
    if (payloadEnd - headerEnd < 10 || content[payloadEnd] !== ".") continue;
    const end = base64UrlRun(content, payloadEnd + 1);
    out.push(span(content, at, end));
    from = end;
  }
  return out;
};

const HIGH_ENTROPY_RUN = /[A-Za-z0-9+/=_\-]{20,}/g;

function shannonBits(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** camelCase and PascalCase names: humps of letters, a capital then lower case, 3+ letters long on average. */
function isCamelCase(run: string): boolean {
  if (!/^[A-Za-z]+$/.test(run)) return false;
  const humps = run.split(/(?=[A-Z][a-z])/);
  return humps.every((h) => /^(?:[A-Z]?[a-z]+|[A-Z]+)$/.test(h)) && run.length / humps.length >= 3;
}

/** A run built of words and short numbers (`send_email_to_customer_2024`): an identifier. */
function isIdentifierLike(run: string): boolean {
  const parts = run.split(/[_\-/]+/).filter((p) => p.length > 0);
  if (parts.length < 2) return false;
  return parts.every(
    (p) => /^[a-z]+$/.test(p) || /^[A-Z][a-z]+$/.test(p) || /^\d{1,4}$/.test(p) || /^[A-Z]{1,5}$/.test(p),
  );
}

/**
 * Long random-looking tokens without a known prefix: hex of 32+ characters (hashes, keys), or runs
 * of 20+ letters, digits and `+/=_-` that mix letters and digits (or both cases) at an entropy
 * of at least 3.5 bits per character and are not identifiers made of words.
 */
export const detectHighEntropyTokens: PIIDetector = (content) =>
  regexSpans(content, HIGH_ENTROPY_RUN, (run) => {
    if (run.length >= 32 && /^[0-9a-fA-F]+$/.test(run)) return true;
    if (!/\d/.test(run) && !(/[a-z]/.test(run) && /[A-Z]/.test(run.slice(1)))) return false;
    if (!/[A-Za-z]/.test(run) || isIdentifierLike(run) || isCamelCase(run)) return false;
    const letters = run.replace(/[^A-Za-z]/g, "");
    if (letters.length < 6) return false;
    return shannonBits(run) >= 3.5;
  });

const UUID =
  /(?<![0-9A-Fa-f\-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f\-])/g;

/** UUIDs: `550e8400-e29b-41d4-a716-446655440000`. */
export const detectUuids: PIIDetector = (content) => regexSpans(content, UUID);

// ---------------------------------------------------------------- network

const IPV4 = /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d)/g;

/** IPv4 addresses: four dotted numbers of at most 255 (`10.0.0.12`); three-part versions are not. */
export const detectIPv4: PIIDetector = (content) => regexSpans(content, IPV4);

const IPV6_CANDIDATE =
  /(?<![\p{L}\p{N}_:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![\p{L}\p{N}_:]|\.\d)/gu;

function ipv6Valid(text: string): boolean {
  let body = text;
  let groupsNeeded = 8;
  const v4 = /(?:\d{1,3}\.){3}\d{1,3}$/.exec(body);
  if (v4) {
    if (v4[0].split(".").some((n) => Number(n) > 255)) return false;
    body = body.slice(0, v4.index);
    if (!body.endsWith(":")) return false;
    body = body.endsWith("::") ? body : body.slice(0, -1);
    groupsNeeded = 6;
  }
  const doubles = body.split("::").length - 1;
  if (doubles > 1) return false;
  if (!/\d/.test(text)) return false;
  if (doubles === 1) {
    const [head, tail] = body.split("::");
    const groups = [...(head ? head.split(":") : []), ...(tail ? tail.split(":") : [])];
    return groups.length < groupsNeeded && groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g));
  }
  const groups = body.split(":");
  return groups.length === groupsNeeded && groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g));
}

/** Prefilter of {@link IPV6_CANDIDATE}: two colons with at most four hex digits between them. */
const IPV6_HINT = /:[0-9A-Fa-f]{0,4}:/;

/** IPv6 addresses, full or with `::` (`2001:db8::8a2e:370:7334`, `fe80::1`), validated. */
export const detectIPv6: PIIDetector = (content) =>
  IPV6_HINT.test(content) ? regexSpans(content, IPV6_CANDIDATE, ipv6Valid) : [];

const MAC =
  /(?<![\p{L}\p{N}_:\-.])(?:[0-9A-Fa-f]{2}([:\-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\p{L}\p{N}_:\-]|\.[0-9A-Fa-f])/gu;

/** Prefilter of {@link MAC}: a group of two hex digits between separators, or of four between dots. */
const MAC_HINT = /[:\-][0-9A-Fa-f]{2}[:\-]|\.[0-9A-Fa-f]{4}\./;

/** MAC addresses: `00:1A:2B:3C:4D:5E`, `00-1a-2b-3c-4d-5e`, `001a.2b3c.4d5e`. */
export const detectMacAddresses: PIIDetector = (content) => (MAC_HINT.test(content) ? regexSpans(content, MAC) : []);

// ---------------------------------------------------------------- postal

const STREET_SUFFIX =
  "(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct|Place|Pl|Terrace|Way|Close|Crescent|Square|Sq|Parkway|Pkwy|Highway|Hwy|Row|Mews|Gardens|Grove|Hill|Walk|Circle|Trail|Alley|Parade|Quay|Wharf|Embankment|Broadway|STREET|AVENUE|ROAD|LANE|DRIVE)";
const STREET = new RegExp(
  `(?<![\\p{L}\\p{N}_\\-])\\d{1,5}[A-Za-z]?(?:[\\-/]\\d{1,5})?,?[ \\t]+(?:\\p{Lu}[\\p{L}'’.\\-]{0,24}[ \\t]+){1,4}${STREET_SUFFIX}(?![\\p{L}\\p{N}])\\.?`,
  "gu",
);
const STREET_AFTER =
  /(?<![\p{L}\p{N}])\p{Lu}[\p{Ll}]{1,24}(?:straße|strasse|str\.|weg|gasse|platz|allee|laan|straat|gatan|vej|veien)[ \t]+\d{1,5}[a-z]?(?![\p{L}\p{N}])/gu;
const STREET_ROMANCE =
  /(?<![\p{L}\p{N}])\d{1,5}(?:bis|ter)?,?[ \t]+(?:rue|avenue|boulevard|chemin|allée|place|quai|via|viale|piazza|calle|avenida|rua)[ \t]+(?:(?:de|du|des|la|le|les|di|del|della|da|do|dos)[ \t]+)?\p{Lu}[\p{L}'’\-]{1,24}(?:[ \t]+\p{Lu}[\p{L}'’\-]{1,24}){0,3}/gu;
const UK_POSTCODE = /(?<![A-Za-z0-9])[A-Z]{1,2}\d[A-Z\d]?[ ]?\d[A-Z]{2}(?![A-Za-z0-9])/g;

/*
 * Prefilters, one per pattern above: what every match of it holds (a house number before a space
 * and a street word; a street word before a number; a digit and two capitals). A text that fails
 * one cannot match its pattern, which is then not run: on text without an address (nearly all of
 * it) the four patterns cost a few literal scans instead of a look-behind at every position.
 */
const STREET_NUMBER_HINT = /\d[A-Za-z]?,?[ \t]/;
const STREET_SUFFIX_HINT = new RegExp(`${STREET_SUFFIX}(?![\\p{L}\\p{N}])`, "u");
const STREET_AFTER_HINT = /(?:straße|strasse|str\.|weg|gasse|platz|allee|laan|straat|gatan|vej|veien)[ \t]+\d/;
const STREET_ROMANCE_HINT = /(?:rue|avenue|boulevard|chemin|allée|place|quai|via|viale|piazza|calle|avenida|rua)[ \t]/;
const UK_POSTCODE_HINT = /\d[A-Z]{2}/;

/**
 * Street addresses: a house number and capitalised words ending in a street word (`221B Baker
 * Street`, `12 Rue de Rivoli`, `Hauptstraße 5`), and UK postcodes (`NW1 6XE`). Lower-case street
 * names in running text are left to the argument values and the lesson vocabulary.
 */
export const detectStreetAddresses: PIIDetector = (content) => {
  const spans: PIIMatch[] = [];
  if (STREET_NUMBER_HINT.test(content) && STREET_SUFFIX_HINT.test(content)) spans.push(...regexSpans(content, STREET));
  if (STREET_AFTER_HINT.test(content)) spans.push(...regexSpans(content, STREET_AFTER));
  if (STREET_ROMANCE_HINT.test(content)) spans.push(...regexSpans(content, STREET_ROMANCE));
  if (UK_POSTCODE_HINT.test(content)) {
    spans.push(...regexSpans(content, UK_POSTCODE, (t) => /\d[A-Z]{2}$/.test(t) && /^[A-Z]{1,2}\d/.test(t)));
  }
  return spans.length === 0 ? spans : mergeSpans(spans);
};

// ---------------------------------------------------------------- all of them

/**
 * Spans sorted by start, overlapping or touching ones merged into one (the earliest-starting
 * span's text range grows to cover the rest).
 */
export function mergeSpans(spans: readonly PIIMatch[], content?: string): PIIMatch[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: PIIMatch[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) {
      if (s.end > last.end) {
        last.end = s.end;
        last.text =
          content !== undefined ? content.slice(last.start, last.end) : last.text + s.text.slice(last.end - s.start);
      }
      continue;
    }
    out.push({ ...s });
  }
  return out;
}

/**
 * Every detector, most specific first: when spans of two detectors overlap, the gate masks their
 * union with the placeholder of the one listed first.
 */
export const PII_DETECTORS: readonly NamedDetector[] = Object.freeze([
  { name: "pem_block", placeholder: "<secret>", detect: detectPemBlocks },
  { name: "jwt", placeholder: "<jwt>", detect: detectJwts },
  { name: "url_credentials", placeholder: "<credentials>", detect: detectUrlCredentials },
  { name: "email", placeholder: "<email>", detect: detectEmails },
  { name: "email", placeholder: "<email>", detect: detectObfuscatedEmails },
  { name: "url", placeholder: "<url>", detect: detectUrls },
  { name: "api_key", placeholder: "<key>", detect: detectApiKeys },
  { name: "bearer_token", placeholder: "<secret>", detect: detectBearerTokens },
  { name: "secret_assignment", placeholder: "<secret>", detect: detectSecretAssignments },
  { name: "iban", placeholder: "<iban>", detect: detectIbans },
  { name: "credit_card", placeholder: "<card>", detect: detectCreditCards },
  { name: "credit_card", placeholder: "<card>", detect: detectSpelledCards },
  { name: "ssn", placeholder: "<ssn>", detect: detectSsns },
  { name: "passport", placeholder: "<passport>", detect: detectPassportIds },
  { name: "uuid", placeholder: "<uuid>", detect: detectUuids },
  { name: "mac_address", placeholder: "<mac>", detect: detectMacAddresses },
  { name: "ipv6", placeholder: "<ip>", detect: detectIPv6 },
  { name: "ipv4", placeholder: "<ip>", detect: detectIPv4 },
  { name: "phone", placeholder: "<phone>", detect: detectPhoneNumbers },
  { name: "phone", placeholder: "<phone>", detect: detectSpelledPhones },
  { name: "street_address", placeholder: "<address>", detect: detectStreetAddresses },
  { name: "high_entropy_token", placeholder: "<secret>", detect: detectHighEntropyTokens },
  { name: "spelled_value", placeholder: "<spelled>", detect: detectSpelledValues },
]);

/** One span found by {@link findPrivateData}, with the detector that found it. */
export interface LabelledMatch extends PIIMatch {
  /** The {@link NamedDetector.name} of the detector listed first among those that matched here. */
  name: string;
  placeholder: string;
}

/**
 * The spans of every detector, merged: overlapping spans become one, named after the detector
 * listed first in `detectors` among those that matched it.
 */
export function findPrivateData(content: string, detectors: readonly NamedDetector[] = PII_DETECTORS): LabelledMatch[] {
  const all: (LabelledMatch & { rank: number })[] = [];
  detectors.forEach((d, rank) => {
    for (const m of d.detect(content)) {
      if (m.end > m.start) all.push({ ...m, name: d.name, placeholder: d.placeholder, rank });
    }
  });
  all.sort((a, b) => a.start - b.start || a.rank - b.rank || b.end - a.end);
  const out: (LabelledMatch & { rank: number })[] = [];
  for (const m of all) {
    const last = out[out.length - 1];
    if (last && m.start < last.end) {
      if (m.end > last.end) last.end = m.end;
      if (m.rank < last.rank) Object.assign(last, { name: m.name, placeholder: m.placeholder, rank: m.rank });
      continue;
    }
    out.push({ ...m });
  }
  return out.map(({ start, end, name, placeholder }) => ({
    text: content.slice(start, end),
    start,
    end,
    name,
    placeholder,
  }));
}

/** All detectors as one langchain `PIIDetector`: every span of private data of any kind. */
export const detectPrivateData: PIIDetector = (content) =>
  findPrivateData(content).map(({ text, start, end }) => ({ text, start, end }));
