import { describe, expect, it } from "vitest";
import {
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
  ibanValid,
  luhnValid,
  PII_DETECTORS,
  type PIIDetector,
} from "../../src/text/detectors.js";

const found = (detect: PIIDetector, text: string): string[] => detect(text).map((m) => m.text);

/** Text a detector must leave alone: ordinary words, versions, dates, times, ids and tool names. */
const ORDINARY = [
  "Please send the weekly report to the team before Friday.",
  "Upgrade to v2.3.1 (or 10.4) before 2024-01-31 at 12:30; build 1.2.3 passed.",
  "Call send_email, then lookup_order and refund_payment; see getUserById.",
  "Order ORD-918273 and invoice INV-2024-0042 are late; ticket #4521 is open.",
  "std::vector and a::b are C++; ratio 3:2; score 4-2; 15/06/2024 and 06.15.2024.",
  "The system status is green; ignore the duplicate tickets and show open ones.",
  "Refund 4821.77 EUR on 3 items; that is 12 % off. Step 2 Close the ticket.",
  "Use ISO dates like YYYY-MM-DD and the claim_ref prefix CW- for claims.",
  "a long identifier send_email_to_customer_2024 and path /usr/local/lib/node_modules",
];

describe("detectors: every one leaves ordinary text alone", () => {
  it.each(PII_DETECTORS.map((d) => [d.name, d.detect] as const))("%s", (_name, detect) => {
    for (const text of ORDINARY) expect(found(detect, text), text).toEqual([]);
  });
});

describe("detectEmails", () => {
  it("finds addresses, with plus tags, subdomains and unicode", () => {
    expect(found(detectEmails, "mail bob.smith+tag@mail.example.co.uk, or josé@exämple.de.")).toEqual([
      "bob.smith+tag@mail.example.co.uk",
      "josé@exämple.de",
    ]);
  });
  it("needs a dot and a letter TLD", () => {
    expect(found(detectEmails, "user@localhost and @handle and a@b.1")).toEqual([]);
  });
  it("reports spans in the string given", () => {
    const text = "to: ann@example.org";
    expect(detectEmails(text)).toEqual([{ text: "ann@example.org", start: 4, end: 19 }]);
  });
});

describe("detectUrls and detectUrlCredentials", () => {
  it("finds links and trims sentence punctuation", () => {
    expect(found(detectUrls, "see https://x.example.com/o/1?a=b, and (www.example.org/path).")).toEqual([
      "https://x.example.com/o/1?a=b",
      "www.example.org/path",
    ]);
  });
  it("finds the user:password part of a URL", () => {
    expect(found(detectUrlCredentials, "db postgres://admin:s3cr3t@db.internal:5432/app")).toEqual(["admin:s3cr3t"]);
    expect(found(detectUrlCredentials, "https://example.com/a@b")).toEqual([]);
  });
});

describe("detectPhoneNumbers", () => {
  it.each(["+44 20 7946 0958", "(415) 555-2671", "415-555-2671", "+1 415 555 2671", "+4915123456789", "020 7946 0958"])(
    "finds %s",
    (phone) => {
      expect(found(detectPhoneNumbers, `call ${phone} now`)).toEqual([phone]);
    },
  );
  // A local number such as 555-1234 is a phone since issue 29 (see detectors-formats.test.ts).
  it.each(["2024-01-31", "v2.3.1", "4821.77", "12:30", "INV-2024-0042", "1.234.567"])("leaves %s", (text) => {
    expect(found(detectPhoneNumbers, `x ${text} y`)).toEqual([]);
  });
});

describe("detectCreditCards", () => {
  it("finds Luhn-valid numbers, grouped or not", () => {
    expect(found(detectCreditCards, "4111 1111 1111 1111 / 5500-0055-5555-5559 / 378282246310005")).toEqual([
      "4111 1111 1111 1111",
      "5500-0055-5555-5559",
      "378282246310005",
    ]);
  });
  it("leaves numbers that fail Luhn, or mix separators outside groups of four", () => {
    expect(found(detectCreditCards, "4111 1111 1111 1112 and 41-111111 1111 1111")).toEqual([]);
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
  });
});

describe("detectIbans", () => {
  it("finds IBANs compact or grouped, by the country's length, mod-97 checked", () => {
    expect(found(detectIbans, "pay DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432.")).toEqual([
      "DE89 3704 0044 0532 0130 00",
      "GB82WEST12345698765432",
    ]);
    expect(ibanValid("FR1420041010050500013M02606")).toBe(true);
  });
  it("leaves a wrong checksum or an unknown country", () => {
    expect(found(detectIbans, "DE88 3704 0044 0532 0130 00 and ZZ89370400440532013000")).toEqual([]);
  });
});

describe("detectApiKeys", () => {
  it.each([
    "sk-proj-QvTbLmNvRxsWpYzKdHaHcJf7",
    "sk-ant-api03-aB1cD2eF3gH4iJ5kL6mN",
    "sk-1234567890abcdefABCDEF12",
    "sk_live_51HxYzAbCdEf",
    "pk_test_TYooMQauvdEDq54NiTphI7jx",
    "rk_live_abcdefghijklmnop1234",
    "AKIAIOSFODNN7EXAMPLE",
    "ASIAZ7QWRTYUPLMNB3XQ",
    "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "xoxb-1234-5678-abcdEFGH",
    "xoxp-1111111111-2222222222-abcdef",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
    "glpat-aBcDeFgHiJkLmNoPqRsT",
    "npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01",
  ])("finds %s", (key) => {
    expect(found(detectApiKeys, `key=${key} end`)).toEqual([key]);
  });
  it("needs the prefix at a word start", () => {
    expect(found(detectApiKeys, "task-management risk-free ask-me desk_live_thing")).toEqual([]);
  });
});

describe("secrets around keys", () => {
  it("finds the credential after Bearer / Basic", () => {
    expect(found(detectBearerTokens, "Authorization: Bearer abc.DEF123-xyz")).toEqual(["abc.DEF123-xyz"]);
    expect(found(detectBearerTokens, "Basic dXNlcjpwYXNzd29yZA==")).toEqual(["dXNlcjpwYXNzd29yZA=="]);
    expect(found(detectBearerTokens, "basic information and bearer bonds")).toEqual([]);
  });
  it("finds the value of a password or key assignment", () => {
    expect(found(detectSecretAssignments, 'password=hunter2! api_key: "Zx9kk" "client_secret": "abcd1234"')).toEqual([
      "hunter2!",
      "Zx9kk",
      "abcd1234",
    ]);
  });
  it("finds PEM blocks, closed or cut off", () => {
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
    expect(found(detectPemBlocks, `key:\n${pem}\nafter`)).toEqual([pem]);
    expect(found(detectPemBlocks, "-----BEGIN PRIVATE KEY-----\nMIIE")).toEqual(["-----BEGIN PRIVATE KEY-----\nMIIE"]);
  });
  it("finds JWTs", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    expect(found(detectJwts, `token ${jwt}.`)).toEqual([jwt]);
    expect(found(detectJwts, "eyJhbGciOiJIUzI1NiJ9 alone")).toEqual([]);
  });
  it("finds long random tokens but not identifiers or words", () => {
    expect(found(detectHighEntropyTokens, "s aB3dE5gH7jK9mN1pQ3sT5v e")).toEqual(["aB3dE5gH7jK9mN1pQ3sT5v"]);
    expect(
      found(detectHighEntropyTokens, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ).toHaveLength(1);
    expect(
      found(detectHighEntropyTokens, "internationalization getUserAccountSettingsById ORD-2024-0000000042"),
    ).toEqual([]);
  });
  it("finds UUIDs", () => {
    expect(found(detectUuids, "req 550e8400-e29b-41d4-a716-446655440000 failed")).toEqual([
      "550e8400-e29b-41d4-a716-446655440000",
    ]);
  });
});

describe("network and postal", () => {
  it("finds IPv4 but not versions or octets over 255", () => {
    expect(found(detectIPv4, "from 10.0.0.12 and 192.168.1.254. not 1.2.3 or 300.1.1.1")).toEqual([
      "10.0.0.12",
      "192.168.1.254",
    ]);
  });
  it("finds IPv6, full and compressed", () => {
    expect(
      found(
        detectIPv6,
        "2001:0db8:85a3:0000:0000:8a2e:0370:7334, 2001:db8::8a2e:370:7334, fe80::1 and ::ffff:192.0.2.1",
      ),
    ).toEqual(["2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2001:db8::8a2e:370:7334", "fe80::1", "::ffff:192.0.2.1"]);
  });
  it("finds MAC addresses in three notations", () => {
    expect(found(detectMacAddresses, "00:1A:2B:3C:4D:5E, 00-1a-2b-3c-4d-5e and 001a.2b3c.4d5e")).toEqual([
      "00:1A:2B:3C:4D:5E",
      "00-1a-2b-3c-4d-5e",
      "001a.2b3c.4d5e",
    ]);
  });
  it("finds street addresses and UK postcodes", () => {
    expect(
      found(
        detectStreetAddresses,
        "to 221B Baker Street, London NW1 6XE; Hauptstraße 5; 12 rue de Rivoli; 1600 Pennsylvania Avenue",
      ),
    ).toEqual(["221B Baker Street", "NW1 6XE", "Hauptstraße 5", "12 rue de Rivoli", "1600 Pennsylvania Avenue"]);
  });
});

describe("all detectors together", () => {
  it("merge overlapping spans under the most specific name", () => {
    const text =
      "db postgres://admin:s3cr3t@db.internal/app, mail ann@example.org, key sk-proj-QvTbLmNvRxsWpYzKdHaHcJf7";
    expect(findPrivateData(text).map((m) => [m.name, m.text])).toEqual([
      ["url_credentials", "postgres://admin:s3cr3t@db.internal/app"],
      ["email", "ann@example.org"],
      ["api_key", "sk-proj-QvTbLmNvRxsWpYzKdHaHcJf7"],
    ]);
    expect(detectPrivateData(text).map((m) => m.text)).toHaveLength(3);
  });

  it("take time linear in the input: 10x the input costs about 10x, not 100x", () => {
    const cost = (text: string): number => {
      const t0 = performance.now();
      findPrivateData(text);
      return performance.now() - t0;
    };
    for (const unit of ["a@", "sk-", "eyJ", "1 ", "www.", "Ab3"]) {
      cost(unit.repeat(10_000));
      const small = Math.max(cost(unit.repeat(30_000)), 1);
      const large = cost(unit.repeat(300_000));
      expect(large / small, unit).toBeLessThan(40);
    }
  });
});
