import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { duplicateTools, normalizedDescription } from "../../src/evaluate/duplicates.js";

describe("duplicate tools", () => {
  it("groups tools whose descriptions and schemas are equal once normalized (case, spaces, final stop, key order)", () => {
    const groups = duplicateTools([
      {
        name: "weather_b",
        description: "Get the  weather forecast\nfor a city.",
        schema: { type: "object", properties: { city: { type: "string" } } },
      },
      {
        name: "weather_a",
        description: "get the weather forecast for a city",
        schema: { properties: { city: { type: "string" } }, type: "object" },
      },
      {
        name: "weather_c",
        description: "Get the weather forecast for a city.",
        schema: { type: "object", properties: { town: { type: "string" } } },
      },
      { name: "hotel", description: "Book a hotel." },
      { name: "hotel_copy", description: "Book a hotel" },
      { name: "undescribed_1", description: "" },
      { name: "undescribed_2", description: "  " },
    ]);
    // A different argument schema is not a copy; empty descriptions are undescribed, not copies.
    expect(groups).toEqual([
      ["hotel", "hotel_copy"],
      ["weather_a", "weather_b"],
    ]);
    expect(normalizedDescription("  Ａ  Tool.\n")).toBe("a tool");
  });

  it("compares a LangChain tool's zod schema as the JSON schema a model is sent", () => {
    const zodTool = tool(async () => "", {
      name: "search",
      description: "Search the docs.",
      schema: z.object({ query: z.string() }),
    });
    const line = {
      name: "search_copy",
      description: "Search the docs.",
      schema: {
        type: "object",
        properties: { query: { type: "string" } },
        required: ["query"],
        additionalProperties: false,
      },
    };
    const other = { ...line, name: "search_other", schema: { type: "object", properties: { q: { type: "string" } } } };
    const groups = duplicateTools([
      { name: zodTool.name, description: zodTool.description, schema: zodTool.schema },
      line,
      other,
    ]);
    expect(groups).toEqual([["search", "search_copy"]]);
  });
});
