import { readFileSync } from "node:fs";
import { Document } from "@langchain/core/documents";
import { LexicalEmbeddings } from "../src/index/lexical-embeddings.js";
import { InMemoryVectorIndex } from "../src/index/memory-vector-store.js";
import { seededRandom as rng } from "../src/internal.js";
const rd = (f: string) => readFileSync(`/work/shared/data/metatool/${f}`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const tools = rd("tools.jsonl");
const words = tools.flatMap((t: any) => `${t.description} ${t.description_for_model ?? ""}`.split(/\s+/).filter(Boolean));
const random = rng(5);
const N = Number(process.argv[2] ?? 100000);
const texts = Array.from({ length: N }, (_, i) => `tool_${i}: ${Array.from({ length: 12 + Math.floor(random() * 20) }, () => words[Math.floor(random() * words.length)]).join(" ")}`);
const queries = rd("queries.jsonl").filter((_: unknown, i: number) => i % 57 === 0).slice(0, 300).map((q: any) => q.query);
const emb = new LexicalEmbeddings().partialFit(texts);
const idx = new InMemoryVectorIndex(emb);
let t = performance.now();
for (let s = 0; s < N; s += 5000) { const ch = texts.slice(s, s + 5000); const v = await emb.embedDocuments(ch); await idx.addVectors(v, ch.map((p, j) => new Document({ pageContent: p, metadata: { partition: `p${(s + j) % 4}` } })), { ids: ch.map((_, j) => `tool_${s + j}`) }); }
console.log("fill s", ((performance.now() - t) / 1000).toFixed(1), idx.layout, "rss MB", Math.round(process.memoryUsage().rss / 2 ** 20), "distinct words", new Set(words).size);
const qv = await emb.embedDocuments(queries);
for (const q of qv.slice(0, 20)) await idx.similaritySearchVectorWithScore(q, 5);
const times: number[] = [];
for (const q of qv) { const t0 = performance.now(); await idx.similaritySearchVectorWithScore(q, 5); times.push(performance.now() - t0); }
times.sort((a, b) => a - b); console.log("p50", times[150].toFixed(3), "p95", times[285].toFixed(3));
const a = idx as any; const tt: number[] = [];
for (const q of qv) { let s = 0; q.forEach((x: number, d: number) => { if (x !== 0) s += a.postings[d]?.length ?? 0; }); tt.push(s); }
tt.sort((x, y) => x - y); console.log("postings touched p50", tt[150]);
