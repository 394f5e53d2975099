import { describe, expect, it } from "vitest";
import { readEnv } from "../src/env.js";
import { InvalidInput } from "../src/errors.js";

describe("readEnv", () => {
  it("reads the ledger, Postgres and Chroma settings, blank counting as unset", () => {
    expect(
      readEnv({
        TOOL_LESSONS_LEDGER: " ./data/ledger.db ",
        TOOL_LESSONS_POSTGRES_URL: "postgresql://u@h:5432/d",
        TOOL_LESSONS_CHROMA_URL: "",
        UNRELATED: "x",
      }),
    ).toEqual({ ledgerPath: "./data/ledger.db", postgresUrl: "postgresql://u@h:5432/d" });
    expect(readEnv({})).toEqual({});
  });

  it("refuses a malformed value, naming the variable", () => {
    expect(() => readEnv({ TOOL_LESSONS_POSTGRES_URL: "localhost:5432" })).toThrow(InvalidInput);
    expect(() => readEnv({ TOOL_LESSONS_POSTGRES_URL: "localhost:5432" })).toThrow(/TOOL_LESSONS_POSTGRES_URL/);
    expect(() => readEnv({ TOOL_LESSONS_CHROMA_URL: "not a url" })).toThrow(/TOOL_LESSONS_CHROMA_URL/);
  });
});
