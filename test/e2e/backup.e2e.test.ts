/**
 * `marquee backup --out DIR`, as an operator runs it: while another process writes to the data
 * directory, each copy opens as a data directory of its own, consistent as of one commit (every
 * read model's checkpoint within its event log, every event readable), with the API keys and
 * releases; and what it refuses, it refuses before writing anything.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { bin, embeddedEnv, limited, marquee, scratchDirs, spawnMarquee } from './process.ts';

describe('marquee backup (e2e)', function () {
  this.timeout(300_000);
  const dirs = scratchDirs('marquee-backup-');
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dataDir = dirs.make();
    env = embeddedEnv({ DATA_DIR: dataDir });
    const crawled = await marquee(['crawl', '--titles', '300', '--countries', 'US,DE'], env);
    assert.equal(crawled.code, 0, crawled.stderr);
    const key = await marquee(['keys', 'create', '--name', 'backed-up'], env);
    assert.equal(key.code, 0, key.stderr);
    const release = await marquee(['snapshot', 'build', '--sample'], env);
    assert.equal(release.code, 0, release.stderr);
  });

  after(() => dirs.removeAll());

  /** Checkpoints and head of a data directory, as `marquee status` reads them. */
  async function statusOf(dir: string): Promise<{ head: number; positions: number[]; events: number }> {
    const status = await marquee(['status'], embeddedEnv({ DATA_DIR: dir }));
    assert.equal(status.code, 0, status.stderr);
    const head = Number(/event store head position: (\d+)/.exec(status.stdout)?.[1]);
    const positions = [...status.stdout.matchAll(/^\w+ +\S+ +(\d+) +-?\d+ +\d+$/gm)].map((m) => Number(m[1]));
    const perType = status.stdout.split('events per type:')[1]?.split('\n\n')[0] ?? '';
    const events = [...perType.matchAll(/^ {2}\w+ +(\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    return { head, positions, events };
  }

  it('copies the data directory while a crawl writes to it, each copy whole as of one commit', async () => {
    const before = await statusOf(dataDir);
    // A larger crawl in another process (several seconds of appends), for the copies to be taken during.
    const writer = spawnMarquee(['crawl', '--titles', '6000', '--countries', 'US,DE,FR'], env);
    const exited = new Promise<number | null>((ok) => writer.child.on('exit', ok));
    const copies: string[] = [];
    let running = true;
    void exited.then(() => (running = false));
    while (running || copies.length < 2) {
      const out = join(dirs.make(), 'copy');
      const made = await marquee(['backup', '--out', out], env);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, /^backup of .* written to .* in [\d.]+ s, its event log up to position \d+:$/m);
      assert.match(made.stdout, /^ {2}LMDB [\d.]+ MB \(the event log, read models, API keys and webhooks, the local inbox\)$/m);
      assert.match(made.stdout, /^ {2}1 release\(s\), [\d.]+ MB$/m);
      copies.push(out);
    }
    assert.equal(await exited, 0, writer.log());
    const heads = new Set<number>();
    for (const copy of copies) {
      const { head, positions, events } = await statusOf(copy);
      heads.add(head);
      assert.equal(events, head, 'every event of the copy is readable, none past its head');
      assert.ok(positions.length >= 5 && positions.every((p) => p <= head), `checkpoints ${positions} within the head ${head}`);
      const keys = await marquee(['keys', 'list'], embeddedEnv({ DATA_DIR: copy }));
      assert.match(keys.stdout, /backed-up/);
      assert.deepEqual(readdirSync(join(copy, 'releases')).filter((v) => !v.startsWith('.')).length, 1);
    }
    const live = await statusOf(dataDir);
    assert.ok([...heads].every((h) => h <= live.head));
    // At least one copy was taken in the middle of the crawl's appends, not before or after them.
    assert.ok([...heads].some((h) => h > before.head && h < live.head), `heads of the copies ${[...heads]}, from ${before.head} to ${live.head}`);
  });

  it('fails on a disk that fills up with one line and exit 1, leaving no partial copy behind', async () => {
    const out = join(dirs.make(), 'copy');
    // A file size limit of 2 MB (SIGXFSZ ignored, so the write fails with EFBIG) stands for a full disk.
    const failed = await limited(`"${process.execPath}" "${bin}" backup --out "${out}"`, env, 2048);
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /^marquee: the copy of .*lmdb to .*lmdb failed: File too large$/m);
    assert.equal(existsSync(out), false, 'nothing is found at --out');
    assert.deepEqual(readdirSync(dirname(out)), [], 'and nothing is left beside it');
  });

  it('refuses an --out that is missing, not empty, or inside DATA_DIR, writing nothing', async () => {
    const missing = await marquee(['backup'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^marquee: backup needs --out DIR, a new or empty directory$/m);

    const full = dirs.make();
    writeFileSync(join(full, 'precious'), 'keep me');
    const notEmpty = await marquee(['backup', '--out', full], env);
    assert.equal(notEmpty.code, 1);
    assert.match(notEmpty.stderr, /is not an empty directory: a backup never writes over files/);
    assert.deepEqual(readdirSync(full), ['precious']);

    const inside = await marquee(['backup', '--out', join(dataDir, 'backup')], env);
    assert.equal(inside.code, 1);
    assert.match(inside.stderr, /is inside DATA_DIR .*: a backup goes elsewhere/);
    assert.equal(existsSync(join(dataDir, 'backup')), false);
    const link = join(dirs.make(), 'to-data');
    symlinkSync(dataDir, link);
    const throughLink = await marquee(['backup', '--out', join(link, 'backup')], env);
    assert.equal(throughLink.code, 1);
    assert.match(throughLink.stderr, /is inside DATA_DIR .*: a backup goes elsewhere/);
    assert.equal(existsSync(join(dataDir, 'backup')), false);

    const empty = dirs.make();
    mkdirSync(join(empty, 'nothing'));
    const noData = await marquee(['backup', '--out', join(dirs.make(), 'copy')], embeddedEnv({ DATA_DIR: join(empty, 'nothing') }));
    assert.equal(noData.code, 1);
    assert.match(noData.stderr, /holds no data yet \(no lmdb\/ in it\): is DATA_DIR right\?/);

    // Under /proc a recursive mkdir loops for ever (Node), and this spun a core without a word.
    const proc = await marquee(['backup', '--out', '/proc/marquee-backup'], env);
    assert.equal(proc.code, 1);
    assert.match(proc.stderr, /^marquee: --out \/proc\/marquee-backup cannot be used: making \/proc\/marquee-backup\.partial-\d+: ENOENT/m);
  });
});
