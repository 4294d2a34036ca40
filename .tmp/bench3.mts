import { readFileSync } from 'node:fs';
import { lmdbReadStore } from '/work/wt/rank3/infra/lmdb/readStore.ts';
import { computeEntries } from '/work/wt/rank3/services/ranking/job.ts';
import { rankTitles } from '/work/wt/rank3/services/ranking/formula.ts';
import type { ProvidersDoc } from '/work/wt/rank3/contracts/readModels.ts';
const readStore = lmdbReadStore({ dataDir: process.argv[2] ?? '/tmp/r3/data' });
const load = () => readFileSync('/proc/loadavg', 'utf8').slice(0, 14);
const collections = { inputs: 'ranking_inputs_v1', providers: 'providers_v1' };
const countries = (await readStore.scan<ProvidersDoc>('providers_v1')).map((d) => d.key);
for (let round = 0; round < 5; round++) {
  const t0 = performance.now(); let n = 0;
  const facts = new Map();
  for (const country of countries) n += (await computeEntries({ country, date: '2026-11-24', chartSize: 200, collections, facts, readStore } as any)).length;
  const t1 = performance.now();
  let bytes = 0;
  for (const country of countries) { const docs = await readStore.scan<any>('ranking_inputs_v1', { prefix: `o:${country}:` }); bytes += docs.length; }
  console.log(`round ${round}: ${n} entries ${(t1 - t0).toFixed(0)} ms; scans only ${(performance.now() - t1).toFixed(0)} ms (${bytes} docs) load ${load()}`);
}
await readStore.close();
