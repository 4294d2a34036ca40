/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts, which prints one JSON line of results
 * (beside a reference measured in the same run). Benchmarks are not tests: nothing here gates CI.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3));
const name = process.argv[2];
if (!name || !existsSync(join(here, `${name}.ts`))) {
  console.error(`usage: npm run bench -- <name>\navailable: ${available.join(', ')}`);
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(join(here, `${name}.ts`)).href);
