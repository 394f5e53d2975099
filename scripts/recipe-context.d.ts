// What a recipe in the README or docs/ may use without declaring it: what an application already
// has before it adds tool-lessons (its chat model, its tools, its graph, ...) and what an earlier
// recipe on the same page made (a ledger, an index, a manager). Read by scripts/check-recipes.mjs;
// a global script, not a module. Anything a recipe imports from the package it must import.

/** The app's chat model, one that supports tool calling (`bindTools`). */
declare const model: import("@langchain/core/language_models/chat_models").BaseChatModel & {
  bindTools: NonNullable<import("@langchain/core/language_models/chat_models").BaseChatModel["bindTools"]>;
};
/** The app's tools. */
declare const tools: import("@langchain/core/tools").StructuredToolInterface[];
/** The app's LangGraph store and checkpointer. */
declare const store: import("@langchain/langgraph").BaseStore;
declare const checkpointer: import("@langchain/langgraph").BaseCheckpointSaver;
/** The app's embeddings. */
declare const embeddings: import("@langchain/core/embeddings").Embeddings;
/** The app's graph under construction (messages state), and the compiled one. */
declare const builder: import("@langchain/langgraph").StateGraph<
  typeof import("@langchain/langgraph").MessagesAnnotation
>;
declare const graph: {
  invoke(input: unknown, config?: import("@langchain/langgraph").LangGraphRunnableConfig): Promise<unknown>;
};
/** A turn's input and its thread. */
declare const input: { messages: import("@langchain/core/messages").BaseMessageLike[] };
declare const thread_id: string;
/** A partition key (`u:42`), a rule's id, the names of the tools routed this turn. */
declare const partition: string;
declare const ruleId: string;
declare const routedToolNames: string[];
/** A Chroma server's address. */
declare const host: string;
declare const port: number;
/** The system prompt of the app's agent. */
declare const SYSTEM_PROMPT: string;

/** Made by an earlier recipe of the same page. */
declare const ledger: import("tool-lessons").Ledger;
declare const index: import("tool-lessons").ToolIndex;
declare const router: import("tool-lessons/routing").ToolRouter;
declare const manager: import("tool-lessons").LessonManager;
declare const recorder: import("tool-lessons").ToolLessonsCallbackHandler;
