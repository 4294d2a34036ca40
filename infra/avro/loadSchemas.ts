/**
 * Reads the `.avsc` files of a schemas directory and builds the registry from them. The pure
 * codec uses the same sources through contracts/schemas/bundle.ts (generated from these files
 * by infra/avro/bundleSchemas.ts; a unit test keeps the two equal).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../contracts/errors.ts';
import { buildSchemaRegistry, type SchemaRegistry, type SchemaSource } from '../../contracts/schemaRegistry.ts';

/** The schemas checked in with the contracts. */
export const SCHEMAS_DIR = fileURLToPath(new URL('../../contracts/schemas/', import.meta.url));

/**
 * Every `*.avsc` file under `dir`, parsed, in a stable order (sorted by path). Throws AppError
 * `invalid_schema` naming the file when one is not JSON.
 */
export async function readSchemaSources(dir: string = SCHEMAS_DIR): Promise<SchemaSource[]> {
  const names = (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.avsc')).sort();
  const sources: SchemaSource[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const text = await readFile(file, 'utf8');
    let schema: unknown;
    try {
      schema = JSON.parse(text);
    } catch (err) {
      throw new AppError('invalid_schema', `${file}: not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    sources.push({ path: relative(dir, file).split(sep).join('/'), schema, file });
  }
  return sources;
}

/** Loads and checks the schemas of a directory (default: the checked-in ones). */
export async function loadSchemas(dir: string = SCHEMAS_DIR): Promise<SchemaRegistry> {
  return buildSchemaRegistry(await readSchemaSources(dir));
}
