// Crawl + ingest days 0..N-1 (no projections) with a given ingest cache size; prints ingest CPU.
import { rmSync, mkdtempSync } from 'node:fs';
import { loadConfig } from '../services/shared/config.ts';
import { openAdapters } from '../services/shared/adapters.ts';
import { createIngest } from '../services/ingest/ingest.ts';
import { crawl } from '../services/crawler/crawl.ts';
const [days, cacheSize] = [Number(process.argv[2]), Number(process.argv[3])];
const dataDir = mkdtempSync('/tmp/speed2-days-');
const adapters = await openAdapters(loadConfig({ DATA_DIR: dataDir }), { debug() {}, info() {}, warn() {}, error() {} } as any);
const ingest = createIngest({ eventStore: adapters.eventStore, bus: adapters.bus, cacheSize });
let ingestCpu = 0; const perDay: number[] = [];
for (let day = 0; day < days; day++) {
  await crawl({ bus: adapters.bus, seed: 42, day, startDate: '2026-11-14' });
  const c = process.cpuUsage();
  await ingest.run({ untilIdle: true, batchSize: 2000 }).done;
  const u = process.cpuUsage(c); const s = (u.user + u.system) / 1e6; ingestCpu += s; perDay.push(Math.round(s * 10) / 10);
}
console.log(JSON.stringify({ days, cacheSize, ingestCpu: Math.round(ingestCpu * 10) / 10, perDay, head: await adapters.eventStore.headPosition(), heapMb: Math.round(process.memoryUsage().heapUsed / 1048576), rssMb: Math.round(process.resourceUsage().maxRSS / 1024), load: (await import('node:os')).loadavg()[0] }));
await adapters.close(); rmSync(dataDir, { recursive: true, force: true });
