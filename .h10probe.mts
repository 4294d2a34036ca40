import { MongoClient } from 'mongodb';
const c = new MongoClient('mongodb://127.0.0.1:27017', { serverSelectionTimeoutMS: 3000 });
await c.connect();
const db = c.db('h10probe2');
for (const n of ['rm_%meta', 'rm_col-123-abc-1.v1', 'rm_é', 'rm_a b']) {
  try { await db.collection(n).insertOne({ _id: 'x' } as any); console.log('ok', n); } catch (e: any) { console.log('bad', n, e.code, e.message); }
}
const col = db.collection<any>('sort');
await col.insertMany(['b', 'a', 'ba', 'bb', 'c', 'é', 'Z', 'a1', '😀', '\uffff', 'a\0b'].map((k) => ({ _id: k })));
console.log((await col.find().sort({ _id: 1 }).toArray()).map((d) => JSON.stringify(d._id)).join(' '));
console.log((await col.find({ _id: { $gte: 'a', $lt: 'b' } }).sort({ _id: -1 }).toArray()).map((d) => d._id).join(' '));
const ins = db.collection<any>('ins');
await ins.insertMany([{ _id: 'k2' }, { _id: 'k4' }]);
try { await ins.insertMany(['k1','k2','k3','k4','k5'].map((k) => ({ _id: k })), { ordered: false }); } catch (e: any) { console.log('ins err', e.result?.insertedCount, JSON.stringify(e.writeErrors?.map((w: any) => [w.index, w.code]))); }
try { await ins.bulkWrite([{ insertOne: { document: { _id: 'k6' } } }, { insertOne: { document: { _id: 'k4' } } }, { replaceOne: { filter: { _id: 'k1', p: { $lt: 3 } }, replacement: { p: 3 } } }, { insertOne: { document: { _id: 'k7' } } }], { ordered: false }); } catch (e: any) { console.log('bulk err', e.result?.insertedCount, e.result?.matchedCount, JSON.stringify(e.writeErrors?.map((w: any) => [w.index, w.code]))); }
console.log((await ins.find().toArray()).map((d) => JSON.stringify(d)).join(' '));
// $in timing
const big = db.collection<any>('big');
const docs = Array.from({ length: 10000 }, (_, i) => ({ _id: `key-${i}`, doc: JSON.stringify({ n: i, title: 'x'.repeat(100) }), position: i + 1 }));
let t = Date.now(); await big.insertMany(docs, { ordered: false }); console.log('insertMany 10k ms', Date.now() - t);
t = Date.now(); const got = await big.find({ _id: { $in: docs.map((d) => d._id) } }, { projection: { position: 1 } }).toArray(); console.log('$in 10k ms', Date.now() - t, got.length);
t = Date.now(); const r = await big.bulkWrite(docs.map((d) => ({ replaceOne: { filter: { _id: d._id, position: { $lt: d.position + 1 } }, replacement: { doc: d.doc, position: d.position + 1 } } })), { ordered: false }); console.log('replace 10k ms', Date.now() - t, r.matchedCount);
t = Date.now(); console.log(await big.countDocuments({ deleted: { $ne: true }, _id: { $gte: 'key-1', $lt: 'key-2' } }), 'count ms', Date.now() - t);
await db.dropDatabase();
await c.close();
