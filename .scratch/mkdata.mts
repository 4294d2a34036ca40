// Builds a day-0 sample data dir (crawl + ingest, no projection) and keeps it.
import { loadConfig } from '../services/shared/config.ts';
import { openAdapters } from '../services/shared/adapters.ts';
import { createPipeline } from '../services/cli/pipeline.ts';
import { crawl } from '../services/crawler/crawl.ts';
import { silentLogger } from '../services/shared/logger.ts';
const dataDir = process.argv[2]!;
const config = loadConfig({ DATA_DIR: dataDir });
const adapters = await openAdapters(config, silentLogger);
const pipeline = createPipeline(adapters, silentLogger);
const c0 = process.cpuUsage();
await crawl({ bus: adapters.bus, seed: 42, day: 0, startDate: '2026-11-14' });
const c1 = process.cpuUsage(c0);
await pipeline.ingestUntilIdle();
const c2 = process.cpuUsage(c0);
console.log('crawl cpu', (c1.user + c1.system) / 1e6, 'ingest cpu', (c2.user + c2.system - c1.user - c1.system) / 1e6, 'head', await adapters.eventStore.headPosition());
await adapters.close();
