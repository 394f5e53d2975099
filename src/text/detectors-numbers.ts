import { type PIIDetector, type PIIMatch, regexSpans, span } from "./detector-spans.js";
import { DIGIT_WORDS as SPELLED_DIGIT_WORDS } from "./detectors-spelled.js";

const isAsciiAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * Detectors of numbers that name a person or their money: phones, payment cards, social security
 * numbers, passport-like ids, and those read out in words ("four one one one …"). Run on
 * normalized text: digits of every script are ASCII there (`normalize.ts`), zero-width characters
 * gone, full-width forms plain.
 */

const PHONE =
  /(?<![\p{L}\p{N}_+@#./\-])(?:\+\d{7,15}|(?:\+\s?\d{1,3}[ .\-]?)?(?:\(\d{1,5}\)[ .\-]?)?\d{1,10}(?:[ .\-]\d{1,8}){0,5})(?![\p{L}\p{N}_@/\-]|[.,]\d)/gu;
const DATE_LIKE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})$/;

function isPhone(text: string): boolean {
  const digits = text.replace(/\D/g, "").length;
  if (digits < 7 || digits > 15 || DATE_LIKE.test(text)) return false;
  if (text.startsWith("+")) return digits >= 8;
  if (/^\(\d{2,5}\)/.test(text)) return digits >= 9;
  // A local number (555-0132), a North American one written plain (4155550132: ten digits, not
  // starting with 0 or 1, so no Unix time) or with dots (415.555.0132: groups of 2 to 4 digits).
  if (/^\d{3}-\d{4}$/.test(text)) return true;
  if (/^[2-9]\d{9}$/.test(text)) return true;
  if (text.includes(".")) return /^\d{2,4}(?:\.\d{2,4}){2,4}$/.test(text) && digits >= 10;
  // Groups split by spaces or dashes: at least two of them and ten digits.
  const groups = text.split(/[ \-]/).length;
  return groups >= 2 && digits >= 10;
}

/**
 * Phone numbers: `+44 20 7946 0958`, `+49 (0)30 1234567`, `(415) 555-2671`, `415-555-2671`,
 * `415.555.0132`, `4155550132`, `555-0132`; not dates, versions or amounts.
 */
export const detectPhoneNumbers: PIIDetector = (content) => regexSpans(content, PHONE, isPhone);

const CARD = /(?<![\d\-.])\d(?:[ .\-]?\d){12,18}(?!\d|[.,]\d)/g;

/** True when the digits of `text` pass the Luhn checksum. */
export function luhnValid(text: string): boolean {
  const digits = text.replace(/\D/g, "");
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** Payment card numbers: 13–19 digits, optionally grouped by spaces or dashes, Luhn-valid. */
export const detectCreditCards: PIIDetector = (content) =>
  regexSpans(content, CARD, (text) => {
    const seps = new Set(text.replace(/\d/g, ""));
    // One kind of separator, or mixed ones between groups of four (4111 1111-1111.1111).
    const grouped = /^\d{4}(?:[ .\-]\d{4}){2,3}(?:[ .\-]\d{1,3})?$/.test(text);
    return (seps.size <= 1 || grouped) && luhnValid(text);
  });

/** US social security numbers: `123-45-6789`, `123 45 6789`, by the SSA's rules (no 000, 666, 9xx areas; no 00 group; no 0000 serial). */
const SSN = /(?<![\p{L}\p{N}\-.])(\d{3})([ \-])(\d{2})\2(\d{4})(?![\p{N}\-]|[.,]\d)/gu;

export const detectSsns: PIIDetector = (content) =>
  regexSpans(content, SSN, (text) => {
    const [area, group, serial] = text.split(/[ \-]/);
    return area !== "000" && area !== "666" && !area!.startsWith("9") && group !== "00" && serial !== "0000";
  });

/** A passport, national id or driving licence number after the word that names it. */
const PASSPORT =
  /\b(?:passport|national id|id card|identity card|driver'?s licen[cs]e|driving licen[cs]e|licen[cs]e)(?:\s+(?:no|number|num|nr|#))?\.?\s*[:#]?\s*([A-Z0-9][A-Z0-9\-]{4,14}[A-Z0-9])(?![\p{L}\p{N}])/dgiu;

/** Passport-like ids: `passport no. X12345678`, `driver's license: D1234-5678`; an id with at least two digits. */
export const detectPassportIds: PIIDetector = (content) =>
  regexSpans(content, PASSPORT, (text) => (text.match(/\d/g)?.length ?? 0) >= 2, 1);

/** The spelled values' digit words, and `o` read as zero. */
const DIGIT_WORDS: Readonly<Record<string, string>> = { ...SPELLED_DIGIT_WORDS, o: "0" };

/** A run of seven or more digits read out in words (or digits), split by spaces, commas or dashes. */
const SPELLED = /\b(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|\d)(?:[\s,\-]+|(?=[.!?;:)]|$))){7,}/gi;

function spelledDigits(text: string): string {
  return (text.toLowerCase().match(/[a-z]+|\d/g) ?? []).map((w) => DIGIT_WORDS[w] ?? w).join("");
}

function spelledSpans(content: string, accept: (digits: string) => boolean): PIIMatch[] {
  return regexSpans(content, SPELLED, (text) => /[a-z]/i.test(text) && accept(spelledDigits(text))).map((m) => {
    const trimmed = m.text.replace(/[\s,\-]+$/, "");
    return { text: trimmed, start: m.start, end: m.start + trimmed.length };
  });
}

/** Card numbers read out in words ("four one one one …"): 13–19 digits, Luhn-valid. */
export const detectSpelledCards: PIIDetector = (content) =>
  spelledSpans(content, (d) => d.length >= 13 && d.length <= 19 && luhnValid(d));

/** Phone numbers read out in words ("four one five, five five five, …"): 7–15 digits. */
export const detectSpelledPhones: PIIDetector = (content) =>
  spelledSpans(content, (d) => d.length >= 7 && d.length <= 15);

/** IBAN length by country (ISO 13616 registry). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** True when an IBAN (spaces allowed) passes its mod-97 check. */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/ /g, "").toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban) || IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= "A" ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    remainder = value > 9 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

const IBAN_START = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?=[ ]?[A-Za-z0-9])/g;

/** IBANs, compact or in groups of four: `DE89 3704 0044 0532 0130 00`; mod-97 checked. */
export const detectIbans: PIIDetector = (content) => {
  const out: PIIMatch[] = [];
  let lastEnd = 0;
  for (const m of content.matchAll(IBAN_START)) {
    if (m.index < lastEnd) continue;
    const length = IBAN_LENGTHS[m[0].slice(0, 2).toUpperCase()];
    if (length === undefined) continue;
    // Take exactly the country's length in letters and digits, single spaces allowed between.
    let end = m.index;
    let taken = 0;
    while (end < content.length && taken < length) {
      const c = content.charCodeAt(end);
      if (isAsciiAlnum(c)) taken += 1;
      else if (!(c === 32 && taken > 0 && end + 1 < content.length && isAsciiAlnum(content.charCodeAt(end + 1)))) break;
      end += 1;
    }
    if (taken !== length || (end < content.length && isAsciiAlnum(content.charCodeAt(end)))) continue;
    if (!ibanValid(content.slice(m.index, end))) continue;
    out.push(span(content, m.index, end));
    lastEnd = end;
  }
  return out;
};
