/**
 * Child of `npm run bench -- kafka`: the reference loop (_kafkaRaw.ts) on kafkajs as published.
 * kafkajs and its produce request are loaded before any module of ours, so infra/kafka/kafkajsModules.ts
 * finds it loaded and replaces nothing (it says so: `kafkajs_modules` in the line printed) but
 * the transaction coordinator lookup, a method of kafkajs's cluster class, which no load order
 * keeps: the loops send no transaction, so it is never asked for one here.
 * Everything of ours is imported after that, dynamically. Argument: the JSON of
 * `{ brokers, runId, crawl }`; prints one JSON line: both request shapes' results.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// kafkajs itself (its producer holds its grouping and partitioner from then on), its produce
// request and its fetch's record-batch decoder (which holds its record decoder).
require('kafkajs');
require('kafkajs/src/protocol/requests/produce/v3/request.js');
require('kafkajs/src/protocol/recordBatch/v0/decoder.js');
const { brokers, runId, crawl } = JSON.parse(process.argv[2] ?? '{}') as { brokers: string[]; runId: string; crawl: { seed: number; day: number; titles?: number } };
const { kafkajsModules } = await import('../infra/kafka/kafkajsModules.ts');
const { generateCrawl } = await import('../services/crawler/catalog.ts');
const { rawLoop } = await import('./_kafkaRaw.ts');
const observations = [...generateCrawl(crawl)];
const byTopic = await rawLoop(observations, 'by-topic', brokers, `${runId}-stock`);
const asPublished = await rawLoop(observations, 'as-published', brokers, `${runId}-stock`);
console.log(JSON.stringify({ kafkajs_modules: kafkajsModules(), byTopic, asPublished }));
