import { open } from 'lmdb';
import { Packr } from 'msgpackr';
const root = open({ path: '/tmp/speed2-data/lmdb', maxDbs: 256, readOnly: true });
const events = root.openDB({ name: 'es:events', sharedStructuresKey: Symbol.for('structures'), maxSharedStructures: 500 } as any);
const values: any[] = [];
for (const { value } of events.getRange({ start: 1, limit: 50000 })) values.push(value);
const json = values.map((v) => JSON.parse(JSON.stringify(v)));
function bench(label: string, packr: Packr, vs = values) {
  let bytes = 0;
  const c = process.cpuUsage();
  for (const v of vs) bytes += packr.pack(v).length;
  const u = process.cpuUsage(c);
  console.log(label, ((u.user + u.system) / 1e6).toFixed(2), 's cpu', bytes, 'bytes');
}
const p = new Packr({ structures: [], maxSharedStructures: 500 } as any); bench('shared', p); bench('shared warm', p);
bench('shared json-copied', p, json);
console.log(JSON.stringify(values[40000]));
