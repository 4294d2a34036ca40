import { lmdbReadStore } from '/work/wt/rank3/infra/lmdb/readStore.ts';
import { computeEntries } from '/work/wt/rank3/services/ranking/job.ts';
import type { ProvidersDoc } from '/work/wt/rank3/contracts/readModels.ts';
const readStore = lmdbReadStore({ dataDir: process.argv[2] ?? '/tmp/r3/data' });
const collections = { links: 'links_v1', media: 'media_v1', providers: 'providers_v1' };
const countries = (await readStore.scan<ProvidersDoc>('providers_v1')).map((d) => d.key);
for (let round = 0; round < 3; round++) {
  const t0 = performance.now();
  const facts = new Map();
  let n = 0;
  for (const country of countries) {
    const e = await computeEntries({ country, date: '2026-11-24', chartSize: 200, collections, facts, readStore } as any);
    n += e.length;
  }
  console.log(`round ${round}: ${countries.length} countries, ${n} entries, ${(performance.now() - t0).toFixed(0)} ms, load ${(await import('node:fs')).readFileSync('/proc/loadavg','utf8').slice(0,14)}`);
}
await readStore.close();
