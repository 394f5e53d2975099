import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { SimpleChatModel } from "@langchain/core/language_models/chat_models";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { describe, expect, it } from "vitest";
import { captureEdicts } from "../../src/rules/capture.js";
import { confirmEdicts } from "../../src/rules/confirm.js";

const TOOLS = ["send_email", "read_email", "exec_command"];
const TEXT = "Never email Sarah. Don't run sudo in the shell.";
const candidates = () => captureEdicts(TEXT, { tools: TOOLS });

/** A chat model without tool calling: structured output fails. */
class Broken extends SimpleChatModel {
  calls = 0;
  _llmType(): string {
    return "broken";
  }
  async _call(): Promise<string> {
    this.calls += 1;
    throw new Error("503 from provider");
  }
}

const reply = (value: unknown) => new FakeListChatModel({ responses: [JSON.stringify(value)] });

describe("confirmEdicts", () => {
  it("keeps what the model confirms and drops what it says is no edict", async () => {
    const got = await confirmEdicts(
      reply({
        verdicts: [
          { index: 0, edict: true },
          { index: 1, edict: false },
        ],
      }),
      TEXT,
      candidates(),
      {
        tools: TOOLS,
      },
    );
    expect(got.kept.map((c) => c.rule)).toEqual(["Never email Sarah."]);
    expect(got.dropped.map((c) => c.rule)).toEqual(["Don't run sudo in the shell."]);
    expect(got.rejected).toBeUndefined();
  });

  it("takes a corrected tool only when it is registered, and keeps a candidate without a verdict", async () => {
    const got = await confirmEdicts(
      reply({
        verdicts: [
          { index: 0, edict: true, tool: "read_email" },
          { index: 5, edict: false },
        ],
      }),
      TEXT,
      candidates(),
      { tools: TOOLS },
    );
    expect(got.kept.map((c) => [c.tool, c.scopedBy])).toEqual([
      ["read_email", "model"],
      ["exec_command", "alias"],
    ]);
    const unknown = await confirmEdicts(
      reply({ verdicts: [{ index: 0, edict: true, tool: "delete_all" }] }),
      TEXT,
      candidates(),
      {
        tools: TOOLS,
      },
    );
    expect(unknown.kept[0].tool).toBe("send_email");
  });

  it("keeps every candidate, saying why, when the reply has the wrong shape or the call fails", async () => {
    const wrong = await confirmEdicts(reply({ verdicts: "all fine" }), TEXT, candidates(), { tools: TOOLS });
    expect(wrong.kept).toHaveLength(2);
    expect(wrong.rejected?.reason).toBe("reply_wrong_shape");
    const failed = await confirmEdicts(new Broken({}), TEXT, candidates(), { tools: TOOLS });
    expect(failed.kept).toHaveLength(2);
    expect(failed.rejected?.reason).toBe("model_error");
  });

  it("asks nothing when there is nothing to confirm", async () => {
    const model = new Broken({});
    expect(await confirmEdicts(model, "Hello.", [], { tools: TOOLS })).toEqual({ kept: [], dropped: [] });
    expect(model.calls).toBe(0);
  });

  it("passes RunnableConfig to the model call, and rethrows when the caller aborted", async () => {
    const seen: string[] = [];
    const handler = BaseCallbackHandler.fromMethods({
      handleChainStart: (_chain, _inputs, _runId, _parent, tags) => void seen.push(...(tags ?? [])),
      handleChatModelStart: (_llm, _messages, _runId, _parent, _extra, tags) => void seen.push(...(tags ?? [])),
    });
    await confirmEdicts(
      reply({ verdicts: [] }),
      TEXT,
      candidates(),
      { tools: TOOLS },
      { callbacks: [handler], tags: ["confirm"] },
    );
    expect(seen).toContain("confirm");
    const controller = new AbortController();
    controller.abort();
    await expect(
      confirmEdicts(new Broken({}), TEXT, candidates(), { tools: TOOLS }, { signal: controller.signal }),
    ).rejects.toThrow();
  });
});
