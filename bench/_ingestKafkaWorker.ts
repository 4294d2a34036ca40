/**
 * One ingest process of `npm run bench -- ingest`'s Kafka part (bench/_ingestKafka.ts): opens
 * the adapters its environment selects (EVENT_STORE=kafka, a unique KAFKA_TOPIC_PREFIX and
 * INGEST_GROUP), reads the event log to its end, prints `ready`, waits for `go` on stdin, then
 * consumes in the group until the group has committed everything published, and prints its totals
 * as one JSON line. Set up before `go`, so the bench times ingest alone, not a process start.
 */
import { createInterface } from 'node:readline';
import { systemClock } from '../contracts/ports.ts';
import { createPipeline, ingestSettings } from '../services/cli/pipeline.ts';
import { openAdapters } from '../services/shared/adapters.ts';
import { loadConfig } from '../services/shared/config.ts';
import { silentLogger } from '../services/shared/logger.ts';

const config = loadConfig();
const adapters = await openAdapters(config, silentLogger);
await adapters.eventStore.headPosition();
const pipeline = createPipeline(adapters, silentLogger, ingestSettings(config, systemClock));
console.log('ready');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim() === 'go') break;
await pipeline.ingestUntilIdle();
console.log(JSON.stringify(pipeline.ingest.totals()));
await adapters.close();
process.exit(0);
