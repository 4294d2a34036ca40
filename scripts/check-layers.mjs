#!/usr/bin/env node
// Enforces the layer rule of docs/architecture.md: `contracts/` depends on nothing,
// `projections/` only on `contracts/`; neither imports a driver or a node I/O module (they must
// stay pure so analysts can replay them anywhere). Also refuses import cycles between local files.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const IO_MODULES = new Set([
  'fs', 'fs/promises', 'net', 'http', 'https', 'http2', 'child_process', 'cluster', 'dgram', 'dns',
  'tls', 'worker_threads', 'readline', 'os', 'process', 'v8', 'vm', 'inspector', 'stream', 'zlib',
]);
// Pure libraries a layer may use: the Avro codec is part of the contracts themselves.
const rules = {
  contracts: { allowLocal: ['contracts'], allowPackages: ['avsc'] },
  projections: { allowLocal: ['contracts', 'projections'], allowPackages: [] },
};

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const specs = [];
  for (const m of text.matchAll(IMPORT)) specs.push(m[1] ?? m[2]);
  return specs;
}

const problems = [];
const graph = new Map();
const layers = ['contracts', 'projections', 'services', 'infra'];
for (const layer of layers) {
  let files;
  try { files = walk(join(root, layer)); } catch { continue; }
  for (const file of files) {
    const rel = relative(root, file);
    const edges = [];
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) {
        const target = relative(root, resolve(dirname(file), spec));
        edges.push(target);
        const rule = rules[layer];
        const targetLayer = target.split('/')[0];
        if (rule && !rule.allowLocal.includes(targetLayer)) {
          problems.push(`${rel}: imports ${spec} (${layer}/ may import only ${rule.allowLocal.join(', ')}/)`);
        }
      } else if (rules[layer]) {
        const bare = spec.replace(/^node:/, '');
        if (spec.startsWith('node:') || IO_MODULES.has(bare)) {
          if (IO_MODULES.has(bare)) problems.push(`${rel}: imports the I/O module ${spec} (${layer}/ must stay pure)`);
        } else if (!rules[layer].allowPackages.includes(spec.split('/')[0])) {
          problems.push(`${rel}: imports the package ${spec} (${layer}/ imports no drivers or packages)`);
        }
      }
    }
    graph.set(rel, edges);
  }
}

// Every setting is parsed once, in services/shared/config.ts, from the environment the CLI
// entry hands it: a module reading `process.env` itself has a setting nobody documents or
// validates, and a test cannot set it without touching the whole process. Benchmarks keep theirs.
const ENV_READERS = new Set(['services/shared/config.ts', 'bin/marquee.js']);
for (const dir of [...layers, 'bin']) {
  let files;
  try { files = walk(join(root, dir)); } catch { continue; }
  for (const file of files) {
    const rel = relative(root, file);
    if (ENV_READERS.has(rel) || /(^|\/)bench\.[mc]?[jt]s$/.test(rel)) continue;
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    if (/process\.env\b/.test(text)) problems.push(`${rel}: reads process.env (parse the setting in services/shared/config.ts and pass it in)`);
  }
}

// Cycle detection over local imports (depth-first, colouring).
const state = new Map();
function visit(node, stack) {
  state.set(node, 'active');
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    if (state.get(next) === 'active') {
      problems.push(`import cycle: ${[...stack.slice(stack.indexOf(next)), next].join(' -> ')}`);
    } else if (!state.has(next)) {
      visit(next, [...stack, next]);
    }
  }
  state.set(node, 'done');
}
for (const node of graph.keys()) if (!state.has(node)) visit(node, [node]);

if (problems.length > 0) {
  console.error(`Layer check failed (${problems.length}):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`Layer check passed: ${graph.size} files, no forbidden imports, no cycles, process.env read only by config.ts.`);
