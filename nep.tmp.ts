import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbEventStore } from './infra/lmdb/eventStore.ts';
import { lmdbReadStore } from './infra/lmdb/readStore.ts';
import { defaultCollectionName } from './projections/collections.ts';
import { ALL_PROJECTIONS } from './projections/index.ts';
import { catchUp } from './projections/runner.ts';
const es = lmdbEventStore({ dataDir: process.argv[2]! });
const p = ALL_PROJECTIONS.find((x) => x.name === process.argv[3])!;
const real = lmdbReadStore({ dataDir: mkdtempSync(join(tmpdir(), 'pb-')) });
const mode = process.argv[4];
if (process.env.INTERN) {
  const table = new Map<string, string>();
  const intern = (v: any): any => {
    if (typeof v === 'string') { if (v.length > 40) return v; const t = table.get(v); if (t !== undefined) return t; if (table.size < 100000) table.set(v, v); return v; }
    if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) v[i] = intern(v[i]); return v; }
    if (v !== null && typeof v === 'object') { for (const k in v) v[k] = intern(v[k]); return v; }
    return v;
  };
  const orig = es.readAll.bind(es);
  (es as any).readAll = async (o: any) => { const b = await orig(o); for (const e of b) intern(e); return b; };
}
const rs: any = { ...real };
if (mode === 'nowrite') rs.writeBatch = async (_c: string, w: any[]) => ({ written: w.length, skipped: 0 });
if (mode === 'noread' || mode === 'nowrite') rs.getMany = async (_c: string, ids: string[]) => ids.map(() => null);
if (mode === 'noencode') { rs.writeBatch = async (c: string, w: any[], cp: any) => real.writeBatch(c, [], cp); }
const t = performance.now();
await catchUp({ projection: p, eventStore: es, readStore: rs, collection: defaultCollectionName(p), batchSize: Number(process.env.BS ?? 5000) } as any);
console.log(mode, ((performance.now() - t) / 1000).toFixed(2));
process.exit(0);
