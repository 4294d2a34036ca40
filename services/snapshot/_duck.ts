import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
for (const q of process.argv.slice(2)) {
  const r = await c.runAndReadAll(q);
  console.log(JSON.stringify(r.getRowObjectsJson()));
}
