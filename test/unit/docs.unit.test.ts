/**
 * The documentation in the repository stays true to the code: it links only to files of the
 * repository (and to headings that exist), the fingerprint table of the crawler contract is the
 * one the schemas give, and every environment variable the code reads is in the operations table.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codec } from '../../contracts/codec.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f));
const pages = [join(root, 'README.md'), ...docs];
const read = (file: string) => readFileSync(file, 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  return new Set([...read(file).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] as string)));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mjs|js)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe('documentation in the repository', () => {
  it('has the four documents the README points to', () => {
    for (const name of ['architecture.md', 'api.md', 'operations.md', 'crawler-contract.md']) {
      assert.ok(docs.includes(join(root, 'docs', name)), `docs/${name} is missing`);
    }
  });

  it('points from the README to every document of docs/ (a page no one finds is not read)', () => {
    for (const file of docs) {
      const name = relative(join(root, 'docs'), file);
      assert.match(read(join(root, 'README.md')), new RegExp(`\\(docs/${name.replace('.', '\\.')}[)#]`), `the README does not link docs/${name}`);
    }
  });

  it('never points outside the repository (../shared is not part of a clone)', () => {
    for (const file of pages) assert.doesNotMatch(read(file), /\.\.\/shared/, relative(root, file));
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of pages) {
      for (const m of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const resolved = path === '' ? file : resolve(dirname(file), path);
        if (!existsSync(resolved)) broken.push(`${relative(root, file)}: ${target} (no such file)`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
          broken.push(`${relative(root, file)}: ${target} (no such heading)`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('lists the fingerprint of every observation schema version in the crawler contract', () => {
    const text = read(join(root, 'docs', 'crawler-contract.md'));
    const documented = [...text.matchAll(/^\| `(\w+Observed)` \| (\d+) \| `([0-9a-f]{16})` \|$/gm)]
      .map((m) => `${m[1]} v${m[2]} ${m[3]}`)
      .sort();
    const actual = codec.registry.all
      .filter((s) => s.kind === 'observation')
      .map((s) => `${s.typeName} v${s.version} ${s.fingerprintHex}`)
      .sort();
    assert.deepEqual(documented, actual);
  });

  it('documents every environment variable the application reads in the operations table', () => {
    const sources = [...filesUnder(join(root, 'services')), ...filesUnder(join(root, 'infra')), join(root, 'bin', 'marquee.js')];
    const read_ = new Set<string>();
    for (const file of sources) {
      for (const m of read(file).matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g)) read_.add((m[1] ?? m[2]) as string);
    }
    assert.ok(read_.has('PORT') && read_.has('LINK_TOKEN_KEYS'), 'the scan found the configuration');
    const table = new Set([...read(join(root, 'docs', 'operations.md')).matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1] as string));
    assert.deepEqual([...read_].filter((v) => !table.has(v)).sort(), [], 'variables read by the code but missing from docs/operations.md');
  });
});
