-- Makes FerretDB 1.24's `{_id: <value>}` lookups use an index (loaded by ferretdb.sh).
--
-- FerretDB's PostgreSQL backend stores each document as `_jsonb` and filters `_id` with
-- `_jsonb -> '_id' @> '<value>'`, but indexes `_id` with a btree on `_jsonb -> '_id'`, which
-- `@>` cannot use: every lookup by key is a sequential scan (EXPLAIN: "Seq Scan"). This event
-- trigger gives every table FerretDB creates a GIN index on that same expression, which `@>`
-- does use (EXPLAIN: "Bitmap Index Scan"), so a lookup by key costs the same at any size.
--
-- The same for `_b`, the bucket field of the read store's key directory (infra/mongo/keys.ts):
-- FerretDB pushes no range and no sort down, only equality, so a scan reads a page bucket by
-- bucket with `{_b: <bucket>}`, which this index answers without reading the whole table.
CREATE OR REPLACE FUNCTION marquee_index_id() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE TABLE' AND object_type = 'table' LOOP
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = r.objid AND attname = '_jsonb') THEN
      EXECUTE format('CREATE INDEX ON %s USING gin ((_jsonb -> ''_id'') jsonb_path_ops)', r.object_identity);
      EXECUTE format('CREATE INDEX ON %s USING gin ((_jsonb -> ''_b'') jsonb_path_ops)', r.object_identity);
    END IF;
  END LOOP;
END $$;
DROP EVENT TRIGGER IF EXISTS marquee_index_id;
CREATE EVENT TRIGGER marquee_index_id ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
  EXECUTE FUNCTION marquee_index_id();
