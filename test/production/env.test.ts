import { describe, expect, it } from "vitest";
import { ENV_VARIABLES, readEnv } from "../../src/env.js";
import { InvalidInput } from "../../src/errors.js";

describe("readEnv: the model settings of the production wiring", () => {
  it("reads the OpenAI-compatible server, key and model names, blank counting as unset", () => {
    expect(
      readEnv({
        OPENAI_BASE_URL: " http://localhost:11434/v1 ",
        OPENAI_API_KEY: "sk-test",
        TOOL_LESSONS_CHAT_MODEL: "llama3.1",
        TOOL_LESSONS_EMBEDDINGS_MODEL: "",
      }),
    ).toEqual({ openaiBaseUrl: "http://localhost:11434/v1", openaiApiKey: "sk-test", chatModel: "llama3.1" });
    expect(ENV_VARIABLES.openaiBaseUrl).toBe("OPENAI_BASE_URL");
  });

  it("refuses a base URL that is not http(s), naming the variable and never the key", () => {
    const read = () => readEnv({ OPENAI_BASE_URL: "localhost:11434", OPENAI_API_KEY: "sk-secret-123" });
    expect(read).toThrow(InvalidInput);
    expect(read).toThrow(/OPENAI_BASE_URL/);
    expect(read).not.toThrow(/sk-secret-123/);
  });
});
