import { describe, expect, it } from "vitest";
import { sharesWord, splitWords, stem, tokenize } from "../../src/text/tokenize.js";

describe("splitWords", () => {
  it("splits camelCase, PascalCase and acronyms", () => {
    expect(splitWords("getUserById")).toEqual(["get", "user", "by", "id"]);
    expect(splitWords("HTTPServerError")).toEqual(["http", "server", "error"]);
  });

  it("splits snake_case, kebab-case, dots and slashes", () => {
    expect(splitWords("send_email kebab-case-name api.v2/users")).toEqual([
      "send",
      "email",
      "kebab",
      "case",
      "name",
      "api",
      "v2",
      "users",
    ]);
  });

  it("keeps letters and digits of one id together and drops a possessive 's", () => {
    expect(splitWords("cus_123abc ISO8601 user's")).toEqual(["cus", "123abc", "iso8601", "user"]);
  });
});

describe("stem", () => {
  it("sends the inflections of one word to one key", () => {
    const key = stem("create");
    for (const w of ["creates", "creating", "created", "creation"]) expect(stem(w)).toBe(key);
    for (const w of ["books", "booking", "booked", "bookings"]) expect(stem(w)).toBe("book");
    for (const w of ["applies", "applied"]) expect(stem(w)).toBe(stem("apply"));
    for (const w of ["uses", "using", "used"]) expect(stem(w)).toBe(stem("use"));
    for (const w of ["searches", "searching", "searched"]) expect(stem(w)).toBe("search");
    expect(stem("running")).toBe("run");
    expect(stem("stopped")).toBe("stop");
    expect(stem("quickly")).toBe("quick");
    expect(stem("translation")).toBe(stem("translate"));
    expect(stem("organization")).toBe(stem("organize"));
    expect(stem("filtering")).toBe(stem("filters"));
  });

  it("leaves words a suffix rule would ruin", () => {
    expect(stem("string")).toBe("string");
    expect(stem("bring")).toBe("bring");
    expect(stem("status")).toBe("status");
    expect(stem("need")).toBe("need");
    expect(stem("needed")).toBe("need");
  });

  it("leaves tokens with digits alone", () => {
    expect(stem("iso8601")).toBe("iso8601");
    expect(stem("123")).toBe("123");
  });
});

describe("tokenize", () => {
  it("drops stopwords and single letters and stems the rest", () => {
    expect(tokenize("Can you please book the flights for me?")).toEqual(["book", "flight"]);
    expect(tokenize("getUserById returns the users' booking_dates")).toEqual([
      "get",
      "user",
      "id",
      "return",
      "user",
      "book",
      "dat",
    ]);
  });

  it("drops what is left of contractions", () => {
    expect(tokenize("don't send it, I can't")).toEqual(["send"]);
  });

  it("keeps numbers and ids", () => {
    expect(tokenize("invoice 2024 for cus_42")).toEqual(["invoic", "2024", "cus", "42"]);
  });

  it("is deterministic and pure", () => {
    const text = "Convert PDF files to Word documents quickly";
    expect(tokenize(text)).toEqual(tokenize(text));
  });
});

describe("sharesWord", () => {
  it("is true when two texts have a stem in common", () => {
    expect(sharesWord("book a flight", "Flights to Paris")).toBe(true);
    expect(sharesWord("email Sarah", "send_email to the team")).toBe(true);
  });

  it("ignores stopwords", () => {
    expect(sharesWord("what is the weather", "what is the stock price")).toBe(false);
  });
});

describe("mask placeholders", () => {
  it("are not words: a masked request shares no word with another through <value>", () => {
    expect(tokenize("refund <value> for order ######")).toEqual(["refund", "order"]);
    expect(sharesWord("check <value> cluster", "send <value> now")).toBe(false);
  });
});

describe("reuse of results", () => {
  it("gives every caller its own array: changing one result changes no later one", () => {
    const text = "Refund the Order_Items of customerAccounts";
    const first = splitWords(text);
    const expected = [...first];
    first.push("injected");
    first[0] = "changed";
    expect(splitWords(text)).toEqual(expected);
    expect(tokenize(text)).toEqual(["refund", "order", "item", "custom", "account"]);
  });

  it("stems a word the same way the first time and every time after", () => {
    const words = ["creating", "created", "creation", "creates", "running", "boxes", "happily"];
    const once = words.map(stem);
    expect(words.map(stem)).toEqual(once);
    expect(once.slice(0, 4)).toEqual(["creat", "creat", "creat", "creat"]);
  });

  it("keeps working past the bound on remembered texts", () => {
    const texts = Array.from({ length: 5000 }, (_, i) => `lookup item${i} inventory`);
    for (const t of texts) splitWords(t);
    expect(splitWords(texts[0])).toEqual(["lookup", "item0", "inventory"]);
    expect(splitWords(texts[4999])).toEqual(["lookup", "item4999", "inventory"]);
  });
});
