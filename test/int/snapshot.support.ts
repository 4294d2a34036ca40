/** Helpers of the snapshot tests: an independent reader (DuckDB) and a tar.gz extractor. */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
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

/**
 * Extracts a .tar.gz into `dir` with the system `tar` (independent of the tar-stream code that
 * packed it); returns the entry names in archive order.
 */
export async function extractTarGz(file: string, dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', file, '-C', dir]);
  return execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).split('\n').filter((line) => line !== '');
}
