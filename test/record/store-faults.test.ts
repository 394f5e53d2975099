import { describe, expect, it } from "vitest";
import { InvalidInput, StoreUnavailable } from "../../src/errors.js";
import { isConnectionFault } from "../../src/record/store-faults.js";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

describe("isConnectionFault: a write that failed on the way to the store, not on its rows", () => {
  it.each([
    ["a terminated backend (57P01)", withCode("57P01", "terminating connection due to administrator command")],
    ["a connection exception class (08006)", withCode("08006")],
    ["too many connections (53300)", withCode("53300")],
    ["a serialization failure (40001)", withCode("40001")],
    ["a reset socket", withCode("ECONNRESET")],
    ["a refused connection", withCode("ECONNREFUSED")],
    ["SQLite busy", withCode("SQLITE_BUSY")],
    ["node-postgres's closed connection", new Error("Connection terminated unexpectedly")],
    ["a client no longer queryable", new Error("Client has encountered a connection error and is not queryable")],
    ["the package's StoreUnavailable", new StoreUnavailable("down")],
    ["a fault wrapped as a cause", new Error("append failed", { cause: withCode("57P01") })],
  ])("%s is one", (_, error) => {
    expect(isConnectionFault(error)).toBe(true);
  });

  it.each([
    ["a value the store refuses (22021)", withCode("22021", "invalid byte sequence for encoding")],
    ["a unique violation (23505)", withCode("23505")],
    ["a malformed record", new InvalidInput("bad record")],
    ["a plain error", new Error("the store refused a row")],
    ["not an error", "ECONNRESET"],
    ["nothing", undefined],
  ])("%s is not", (_, error) => {
    expect(isConnectionFault(error)).toBe(false);
  });
});
