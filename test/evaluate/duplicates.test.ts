import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { duplicateTools, normalizedDescription } from "../../src/evaluate/duplicates.js";
import { versionStem } from "../../src/learn/near-duplicates.js";

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

describe("near-duplicate tools: versions of one function", () => {
  it("names tools whose names differ only in case, separators or a version suffix", () => {
    const groups = duplicateTools([
      { name: "get_weather", description: "Weather for a city." },
      { name: "get_weather_v2", description: "Weather forecast for a city, hourly." },
      { name: "getWeather", description: "Current weather." },
      { name: "GetWeather3", description: "Weather, third version." },
      { name: "get-weather-legacy", description: "Old weather endpoint." },
      { name: "calculate_bmi", description: "Body mass index." },
      { name: "calculate_BMI", description: "BMI from height and weight." },
      { name: "get_weather_alerts", description: "Storm warnings." },
      { name: "tool_1", description: "" },
      { name: "tool_2", description: "" },
    ]);
    expect(groups).toEqual([
      ["calculate_bmi", "calculate_BMI"],
      ["get_weather", "get_weather_v2", "get-weather-legacy", "getWeather", "GetWeather3"],
    ]);
  });

  it("joins a copy group and a version group that share a tool", () => {
    const groups = duplicateTools([
      { name: "search", description: "Search the docs." },
      { name: "search_v2", description: "Search the docs and the wiki." },
      { name: "find_docs", description: "Search the docs." },
    ]);
    expect(groups).toEqual([["find_docs", "search", "search_v2"]]);
  });
});

describe("versionStem", () => {
  it("keeps the function's words and drops version markers at the end only", () => {
    expect(versionStem("get_weather_v2")).toBe("getweather");
    expect(versionStem("getWeatherV10")).toBe("getweather");
    expect(versionStem("weather_2_new")).toBe("weather");
    expect(versionStem("v2_weather")).toBe("v2weather");
    expect(versionStem("HTTPServer_beta")).toBe("httpserver");
    // At least one word is kept: a name that is all marker is its own stem.
    expect(versionStem("v2")).toBe("v2");
  });
});
