import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbEventStore } from './infra/lmdb/eventStore.ts';
import { lmdbReadStore } from './infra/lmdb/readStore.ts';
import { defaultCollectionName } from './projections/collections.ts';
import { ALL_PROJECTIONS } from './projections/index.ts';
import { catchUp } from './projections/runner.ts';
const gc = (globalThis as any).gc as () => void;
const es = lmdbEventStore({ dataDir: process.argv[2]! });
const p = ALL_PROJECTIONS.find((x) => x.name === process.argv[3])!;
const rs = lmdbReadStore({ dataDir: mkdtempSync(join(tmpdir(), 'pb-')) });
let n = 0; let base = 0;
const origRead = es.readAll.bind(es);
(es as any).readAll = async (o: any) => { gc(); base = process.memoryUsage().heapUsed; return origRead(o); };
const origWrite = rs.writeBatch.bind(rs);
(rs as any).writeBatch = async (c: string, w: any[], cp: any) => {
  n++;
  if (n % 10 === 0) { gc(); console.log(`batch ${n}: heap after full gc ${(process.memoryUsage().heapUsed / 1e6).toFixed(1)} MB (base at read ${(base / 1e6).toFixed(1)}), writes ${w.length}`); }
  return origWrite(c, w, cp);
};
await catchUp({ projection: p, eventStore: es, readStore: rs, collection: defaultCollectionName(p), batchSize: 5000 } as any);
process.exit(0);
