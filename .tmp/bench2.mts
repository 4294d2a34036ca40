import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { lmdbReadStore } from '/work/wt/rank3/infra/lmdb/readStore.ts';
import { lmdbEventStore } from '/work/wt/rank3/infra/lmdb/eventStore.ts';
import { catchUp } from '/work/wt/rank3/projections/runner.ts';
import { rankingInputsProjection } from '/work/wt/rank3/projections/rankingInputs.ts';
import { computeEntries } from '/work/wt/rank3/services/ranking/job.ts';
import { entriesFromLinks } from '/work/wt/rank3/test/fixtures/rankingFromLinks.ts';
import type { ProvidersDoc } from '/work/wt/rank3/contracts/readModels.ts';
const dataDir = process.argv[2] ?? '/tmp/r3/data';
const readStore = lmdbReadStore({ dataDir });
const eventStore = lmdbEventStore({ dataDir });
const load = () => readFileSync('/proc/loadavg', 'utf8').slice(0, 14);
const t = performance.now();
const r = await catchUp({ projection: rankingInputsProjection, eventStore, readStore, collection: 'ranking_inputs_v1' });
if (r.events > 0) console.log(`caught up ${r.events} events in ${(performance.now() - t).toFixed(0)} ms`);
const collections = { inputs: 'ranking_inputs_v1', links: 'links_v1', media: 'media_v1', providers: 'providers_v1' };
const countries = (await readStore.scan<ProvidersDoc>('providers_v1')).map((d) => d.key);
const date = '2026-11-24';
for (let round = 0; round < 3; round++) {
  let t0 = performance.now(); let n = 0;
  const facts = new Map();
  const fresh: any[] = [];
  for (const country of countries) { const e = await computeEntries({ country, date, chartSize: 200, collections, facts, readStore } as any); n += e.length; fresh.push(e); }
  const tNew = performance.now() - t0;
  t0 = performance.now();
  const old: any[] = [];
  for (const country of countries) old.push(await entriesFromLinks(readStore, collections, country, date));
  const tOld = performance.now() - t0;
  console.log(`round ${round}: ${n} entries; inputs ${tNew.toFixed(0)} ms, links+media ${tOld.toFixed(0)} ms, identical ${isDeepStrictEqual(fresh, old)}, load ${load()}`);
}
await readStore.close(); await eventStore.close();
