import { InMemoryStore } from "@langchain/langgraph";
import { ledgerContract } from "./contract.js";

ledgerContract("InMemoryStore", async () => ({ store: new InMemoryStore(), cleanup: async () => {} }));
