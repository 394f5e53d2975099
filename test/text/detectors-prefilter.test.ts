import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectApiKeys, detectIPv6, detectMacAddresses, detectStreetAddresses } from "../../src/text/detectors.js";
import { corpusTexts, type DetectorSpans, spansOf } from "../fixtures/make-detector-spans.js";

/**
 * The street address, API key, IPv6 and MAC detectors run their regular expression only on text
 * that passes a cheap prefilter. The prefilters must change no result: every detector, and the
 * merged spans, give on the privacy corpora exactly what the detectors without prefilters gave
 * (test/fixtures/detector-spans.json, written at a2d7736 by make-detector-spans.ts).
 */
const before = JSON.parse(
  readFileSync(new URL("../fixtures/detector-spans.json", import.meta.url), "utf8"),
) as DetectorSpans[];

describe("detector prefilters", () => {
  it("the fixture covers the prefiltered detectors with texts they match", () => {
    const count = (name: string) =>
      before.filter((r) => Object.keys(r.byDetector).some((k) => k.endsWith(name))).length;
    expect(count(":api_key")).toBeGreaterThan(50);
    expect(count(":street_address")).toBeGreaterThan(10);
    expect(count(":ipv6")).toBeGreaterThan(5);
    expect(count(":mac_address")).toBeGreaterThan(5);
  });

  it("give the same spans as the detectors without prefilters, on every text of the corpora", () => {
    // Every text the fixture was written for is still in the corpora (cases added since, such as
    // the free-text families, are not in the fixture: they were never run without prefilters).
    const now = new Set(corpusTexts());
    expect(before.map((r) => r.text).filter((text) => !now.has(text))).toEqual([]);
    const differ = before.filter((r) => JSON.stringify(spansOf(r.text)) !== JSON.stringify(r));
    expect(differ.map((r) => ({ text: r.text, before: r, now: spansOf(r.text) }))).toEqual([]);
  });

  it("find a key of every published prefix (one per alternative of the pattern)", () => {
    const keys = [
      "sk-proj-abcd1234",
      "sk-ant-api03-abcd1234",
      "sk-abcdefghijklmnopqrstuvwx",
      "pk_live_abc123",
      "rk_test_abc123",
      "whsec_abcdefghijklmnop1234",
      "AKIAABCDEFGHIJKL1234",
      "ASIAABCDEFGHIJKL1234",
      "ghp_abcdefghijklmnop1234",
      "ghs_abcdefghijklmnop1234",
      "github_pat_abcdefghijklmnop1234",
      "xoxb-12345678-abcd",
      "xapp-1-abcdefgh",
      "AIzaabcdefghijklmnopqrstuv12",
      "ya29.abcdefghijklmnopqrstu",
      "glpat-abcdefghijklmnop12",
      "npm_abcdefghijklmnopqrstuv",
      "hf_abcdefghijklmnopqrstuv",
      "dapi-abcdefghijklmnopqrstuv",
      "pypi-abcdefghijklmnopqrstuv",
      "SG.abcdefghijklmnop.abcdefghijklmnop",
      "SK0123456789abcdef0123456789abcdef",
      "AC0123456789abcdef0123456789abcdef",
      "shpat_0123456789abcdef01",
      "dop_v1_0123456789abcdef0123456789abcdef",
      "key-0123456789abcdef0123456789abcdef",
      "sq0atp-abcdefghijklmnop12",
      "123456789:AAbcdefghijklmnopqrstuvwxyz0123456789",
    ];
    for (const key of keys) {
      expect(
        detectApiKeys(`Refund 48.50 on ORD-918273: the key ${key}, then tell the customer.`).map((m) => m.text),
        key,
      ).toEqual([key]);
    }
  });

  it("find what they should inside ordinary text around them", () => {
    const around = (s: string) => `Refund 48.50 on ORD-918273: ${s}, then tell the customer.`;
    expect(detectApiKeys(around("key sk-proj-abcdEFGH1234")).map((m) => m.text)).toEqual(["sk-proj-abcdEFGH1234"]);
    expect(detectApiKeys(around("token 123456789:AAbcdefghijklmnopqrstuvwxyz0123456789")).map((m) => m.text)).toEqual([
      "123456789:AAbcdefghijklmnopqrstuvwxyz0123456789",
    ]);
    expect(detectIPv6(around("host fe80::1")).map((m) => m.text)).toEqual(["fe80::1"]);
    expect(detectIPv6(around("host 2001:db8:85a3:0:0:8a2e:370:7334")).map((m) => m.text)).toEqual([
      "2001:db8:85a3:0:0:8a2e:370:7334",
    ]);
    expect(detectIPv6(around("host ::ffff:192.0.2.128")).map((m) => m.text)).toEqual(["::ffff:192.0.2.128"]);
    expect(detectMacAddresses(around("nic 00:1A:2B:3C:4D:5E")).map((m) => m.text)).toEqual(["00:1A:2B:3C:4D:5E"]);
    expect(detectMacAddresses(around("nic 00-1a-2b-3c-4d-5e")).map((m) => m.text)).toEqual(["00-1a-2b-3c-4d-5e"]);
    expect(detectMacAddresses(around("nic 001a.2b3c.4d5e")).map((m) => m.text)).toEqual(["001a.2b3c.4d5e"]);
    expect(detectStreetAddresses(around("ship to 221B Baker Street")).map((m) => m.text)).toEqual([
      "221B Baker Street",
    ]);
    expect(detectStreetAddresses(around("ship to 12-14, Elm Grove Ave.")).map((m) => m.text)).toEqual([
      "12-14, Elm Grove Ave.",
    ]);
    expect(detectStreetAddresses(around("ship to Hauptstraße 5")).map((m) => m.text)).toEqual(["Hauptstraße 5"]);
    expect(detectStreetAddresses(around("ship to 12 rue de Rivoli")).map((m) => m.text)).toEqual(["12 rue de Rivoli"]);
    expect(detectStreetAddresses(around("postcode NW1 6XE")).map((m) => m.text)).toEqual(["NW1 6XE"]);
  });
});
