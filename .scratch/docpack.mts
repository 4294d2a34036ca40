import { open } from 'lmdb';
import { Packr } from 'msgpackr';
const root = open({ path: '/tmp/speed2-proj-5000/lmdb', maxDbs: 256, readOnly: true });
const STRUCTURES_KEY = Buffer.from('\u0000structures');
const docs = root.openDB({ name: 'rs:docs', keyEncoding: 'binary', sharedStructuresKey: STRUCTURES_KEY, maxSharedStructures: 500 } as any);
const structs = (docs as any).get(STRUCTURES_KEY);
console.log('shared structures', structs?.length);
const values: any[] = []; const colls = new Map<string, number>();
for (const { key, value } of docs.getRange({})) { if (key.equals(STRUCTURES_KEY)) continue; values.push(value); const c = key.toString().split('\0')[0]; colls.set(c, (colls.get(c) ?? 0) + 1); }
console.log('docs', values.length, colls);
const IDENT = /^[a-z][A-Za-z0-9]*$/;
function bench(label: string, packr: Packr) {
  let bytes = 0;
  const c = process.cpuUsage();
  for (let r = 0; r < 2; r++) for (const v of values) bytes += packr.pack(v).length;
  const u = process.cpuUsage(c);
  console.log(label, ((u.user + u.system) / 1e6).toFixed(2), 's cpu', bytes / 2, 'bytes');
}
bench('shared 500 (as now)', new Packr({ structures: [], maxSharedStructures: 500 } as any));
const dynamic = (o: object) => { for (const k in o) if (!IDENT.test(k)) return false; return true; };
bench('useRecords: camelCase keys only', new Packr({ structures: [], maxSharedStructures: 500, useRecords: dynamic } as any));
bench('no records', new Packr({ useRecords: false }));
