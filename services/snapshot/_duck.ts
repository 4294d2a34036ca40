import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
for (const q of [
  "DESCRIBE SELECT * FROM read_parquet('/tmp/h9/p.parquet')",
  "SELECT count(*), count(season_number), min(d), max(d) FROM read_parquet('/tmp/h9/p.parquet')",
  "SELECT row_group_id, path_in_schema, type, compression, stats_min_value, stats_max_value, stats_null_count FROM parquet_metadata('/tmp/h9/p.parquet') LIMIT 6",
  "SELECT name, type, logical_type, converted_type FROM parquet_schema('/tmp/h9/p.parquet')",
]) {
  const r = await c.runAndReadAll(q);
  console.log(JSON.stringify(r.getRowObjectsJson()));
}
