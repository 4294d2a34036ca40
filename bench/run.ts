/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts, which prints one JSON line of results
 * (beside a reference measured in the same run). Benchmarks are not tests: nothing here gates CI.
 */
import { existsSync, readdirSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
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
// Node's module compile cache, as `marquee` runs every command with it (bin/marquee.js): a bench
// times the product as it runs, and a first start or a release build loads a few hundred modules
// on each of its threads (a release build's threads took 0.42-0.51 s to load theirs without it,
// 0.21-0.26 s with it, once cached).
// Named in the environment, as there, so the worker threads and the benches' child processes use
// it too. NODE_DISABLE_COMPILE_CACHE=1 turns it off, for a bench of the uncached start.
const cache = enableCompileCache();
if (cache.directory !== undefined) process.env.NODE_COMPILE_CACHE = cache.directory;
await import(pathToFileURL(join(here, `${name}.ts`)).href);
