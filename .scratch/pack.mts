import { open } from 'lmdb';
import { Packr } from 'msgpackr';
const root = open({ path: '/tmp/speed2-data/lmdb', maxDbs: 256, readOnly: true });
const events = root.openDB({ name: 'es:events', sharedStructuresKey: Symbol.for('structures'), maxSharedStructures: 500 } as any);
const structs = (events as any).get(Symbol.for('structures'));
console.log('structures', structs?.length);
const values: any[] = [];
for (const { value } of events.getRange({ start: 1 })) values.push(value);
console.log('events', values.length);
const types = new Map<string, number>();
for (const v of values) types.set(v.type, (types.get(v.type) ?? 0) + 1);
console.log(types);
function bench(label: string, packr: Packr) {
  let bytes = 0;
  const t = performance.now();
  for (const v of values) bytes += packr.pack(v).length;
  console.log(label, ((performance.now() - t) / 1000).toFixed(2), 's', bytes, 'bytes');
}
bench('plain records', new Packr({}));
bench('plain records 2nd', new Packr({}));
bench('shared structs', new Packr({ structures: [], maxSharedStructures: 500 } as any));
const p = new Packr({ structures: [], maxSharedStructures: 500 } as any); bench('shared warm1', p); bench('shared warm2', p);
bench('no records', new Packr({ useRecords: false }));
