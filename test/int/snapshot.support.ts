/** Helpers of the snapshot tests: an independent reader (DuckDB) and a tar.gz extractor. */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { extract } from 'tar-stream';
import type { SnapshotColumnType } from '../../contracts/snapshotSchema.ts';

export interface Duck {
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  close(): void;
}

export async function openDuck(): Promise<Duck> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection: DuckDBConnection = await instance.connect();
  return {
    async rows(sql) {
      const reader = await connection.runAndReadAll(sql);
      return reader.getRowObjectsJson() as Array<Record<string, unknown>>;
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** A SQL string literal. */
export const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** The DuckDB type each schema type reads back as. */
export const DUCK_TYPES: Record<SnapshotColumnType, string> = {
  UTF8: 'VARCHAR',
  INT16: 'SMALLINT',
  INT32: 'INTEGER',
  DOUBLE: 'DOUBLE',
  BOOLEAN: 'BOOLEAN',
  DATE: 'DATE',
  'LIST<UTF8>': 'VARCHAR[]',
};

/** Extracts a .tar.gz into `dir`; returns the entry names in archive order. */
export async function extractTarGz(file: string, dir: string): Promise<string[]> {
  const names: string[] = [];
  const tar = extract();
  tar.on('entry', (header, stream, next) => {
    names.push(header.name);
    const target = join(dir, header.name);
    mkdir(dirname(target), { recursive: true })
      .then(() => pipeline(stream, createWriteStream(target)))
      .then(() => next(), (err: unknown) => next(err as Error));
  });
  await pipeline(createReadStream(file), createGunzip(), tar);
  return names;
}
