/**
 * The CLI's arguments, as a person types them: what a command does not take is refused with one
 * line and exit 1 before anything is done, never ignored; a key name that would forge a line of
 * `keys list` is refused.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedEnv, emptyInstallation, marquee, scratchDirs } from './process.ts';
import { isoWeekLabel } from '../../services/snapshot/week.ts';

describe('marquee CLI arguments (e2e)', function () {
  this.timeout(180_000);
  const dirs = scratchDirs('marquee-cli-');
  let env: NodeJS.ProcessEnv;

  before(async () => {
    env = embeddedEnv({ DATA_DIR: await emptyInstallation(dirs.make()) });
  });
  after(() => dirs.removeAll());

  it('refuses options and arguments that status, keys list and replay do not take', async () => {
    for (const [args, line] of [
      [['status', '--json'], "marquee: Unknown option '--json'"],
      [['status', 'now'], "marquee: Unexpected argument 'now'. This command does not take positional arguments"],
      [['keys', 'list', '--all'], "marquee: Unknown option '--all'"],
      [['replay', 'media', 'links'], 'marquee: replay takes one projection; got media links'],
      [['replay', 'media', '--module', 'mine.ts', '--out', 'mine.ndjson'], 'marquee: replay takes one projection or --module, not both; got media'],
    ] as const) {
      const run = await marquee([...args], env);
      assert.equal(run.code, 1, `${args.join(' ')}: ${run.stdout}`);
      assert.equal(run.stderr.trim(), line);
      assert.equal(run.stdout, '', 'nothing printed before the refusal');
    }
  });

  it('refuses a DATA_DIR without data for every command that reads it, making nothing', async () => {
    // A mistyped DATA_DIR, or ./data from another directory than Marquee's: once made empty on
    // the spot, it answered "none" to status and list, and keys create made a key no API knew.
    const missing = join(dirs.make(), 'no-such-data');
    for (const args of [
      ['status'], ['keys', 'list'], ['keys', 'create', '--name', 'me'], ['dead-letters'], ['parked', 'list'], ['webhooks', 'list'],
      ['rank'], ['replay', 'media'], ['snapshot', 'build', '--sample'], ['backup', '--out', join(dirs.make(), 'copy')],
    ]) {
      const run = await marquee(args, { ...env, DATA_DIR: missing });
      assert.equal(run.code, 1, `${args.join(' ')}: ${run.stdout}`);
      assert.equal(run.stderr.trim().split('\n').at(-1), `marquee: ${missing} holds no data yet (no lmdb/ in it): is DATA_DIR right? Marquee keeps its data in DATA_DIR (default ./data, from the directory it runs in), which \`marquee start\` or \`marquee crawl\` makes`);
      assert.equal(existsSync(missing), false, `${args.join(' ')} made nothing`);
    }
  });

  it('prints the projections as a table whose columns line up, the longest names included', async () => {
    const status = await marquee(['status'], env);
    assert.equal(status.code, 0, status.stderr);
    const lines = status.stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('projection '));
    const table = lines.slice(header, lines.indexOf('', header));
    assert.ok(table.some((line) => line.startsWith('availability_history ')), status.stdout);
    // Every row's numbers end where the header's titles do.
    const ends = (line: string) => [...line.matchAll(/\S+/g)].slice(2).map((m) => (m.index as number) + m[0].length);
    for (const row of table.slice(1)) assert.deepEqual(ends(row), ends(table[0] as string), row);
    assert.match(status.stdout, /^events per type: none yet$/m);
  });

  it('refuses a key name with a newline or over 100 characters, and revokes one key at a time', async () => {
    const forged = await marquee(['keys', 'create', '--name', 'ops\nmk_live_0000…  admin  created 2026-01-01T00:00:00Z'], env);
    assert.equal(forged.code, 1);
    assert.match(forged.stderr, /^marquee: a key name cannot hold control characters/m);
    const long = await marquee(['keys', 'create', '--name', 'n'.repeat(101)], env);
    assert.equal(long.code, 1);
    assert.match(long.stderr, /^marquee: a key name is at most 100 characters \(got 101\)$/m);
    assert.match((await marquee(['keys', 'list'], env)).stdout, /^no keys yet/);

    const keys = [];
    for (const name of ['first', 'second']) {
      const created = await marquee(['keys', 'create', '--name', name], env);
      assert.equal(created.code, 0, created.stderr);
      keys.push(created.stdout.trim().split('\n').at(-1) as string);
    }
    const both = await marquee(['keys', 'revoke', keys[0] as string, keys[1] as string], env);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /^marquee: keys revoke needs the key or its prefix, and nothing else$/m);
    const listed = await marquee(['keys', 'list'], env);
    assert.equal((listed.stdout.match(/revoked/g) ?? []).length, 0, `neither key revoked:\n${listed.stdout}`);
    const one = await marquee(['keys', 'revoke', keys[0] as string], env);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(((await marquee(['keys', 'list'], env)).stdout.match(/revoked/g) ?? []).length, 1);
    // Again: said so, and its first time kept.
    const listedOnce = (await marquee(['keys', 'list'], env)).stdout;
    const again = await marquee(['keys', 'revoke', keys[0] as string], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^key "first" \(mk_live_[0-9a-f]{4}…\) was already revoked, at \d{4}-\d\d-\d\dT[\d:]+Z; nothing changed$/m);
    assert.equal((await marquee(['keys', 'list'], env)).stdout, listedOnce);

    // A long name widens its column: every key's creation date starts at the same place.
    assert.equal((await marquee(['keys', 'create', '--name', 'a team with a long name, '.repeat(3)], env)).code, 0);
    const rows = (await marquee(['keys', 'list'], env)).stdout.trim().split('\n');
    assert.equal(new Set(rows.map((row) => row.indexOf(' created '))).size, 1, rows.join('\n'));
  });

  it('says what crawl, rank and snapshot build did in sentences, not JSON', async () => {
    const crawled = await marquee(['crawl', '--titles', '200', '--countries', 'US'], env);
    assert.equal(crawled.code, 0, crawled.stderr);
    assert.match(crawled.stdout, /^published [\d,]+ observations: [\d,]+ MediaObserved, [\d,]+ MediaTranslationObserved, .*AvailabilityObserved/m);
    const ranked = await marquee(['rank', '--date', '2026-12-05'], env);
    assert.equal(ranked.code, 0, ranked.stderr);
    assert.match(ranked.stdout, /^ranking for 2026-12-05: 1 country ranked\n {2}US {2}\d+ titles ranked, \d+ position changes$/m);
    const again = await marquee(['rank', '--date', '2026-12-05'], env);
    assert.match(again.stdout, /^ranking for 2026-12-05: already ranked in US \(a day is ranked once\)$/m);
    // A day to come (two ahead: a midnight between here and the child's clock changes nothing).
    const ahead = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const early = await marquee(['rank', '--date', ahead], env);
    assert.equal(early.code, 1);
    assert.match(early.stderr, new RegExp(`^marquee: ranking date ${ahead} is after today \\(\\d{4}-\\d\\d-\\d\\d, UTC\\)`, 'm'));
    assert.equal(early.stdout, '');
    const crawlAhead = await marquee(['crawl', '--titles', '200', '--countries', 'US', '--day', '30'], env);
    assert.equal(crawlAhead.code, 1);
    assert.match(crawlAhead.stderr, /^marquee: the crawl of day 30 from \d{4}-\d\d-\d\d \(\d{4}-\d\d-\d\d\) is after today \(\d{4}-\d\d-\d\d, UTC\): a day is crawled once it has come$/m);
    assert.equal(crawlAhead.stdout, '', 'nothing published');
    const doubled = await marquee(['crawl', '--titles', '200', '--countries', 'us,,de'], env);
    assert.equal(doubled.code, 1);
    assert.match(doubled.stderr, /^marquee: --countries takes two-letter country codes separated by commas, such as US,DE; got "us,,de"$/m);
    const weekAhead = isoWeekLabel(new Date(Date.now() + 14 * 86_400_000));
    const earlyRelease = await marquee(['snapshot', 'build', '--sample', '--week', weekAhead], env);
    assert.equal(earlyRelease.code, 1);
    assert.match(earlyRelease.stderr, new RegExp(`^marquee: release week ${weekAhead} is after this week \\(\\d{4}-W\\d\\d, UTC\\)`, 'm'));
    const built = await marquee(['snapshot', 'build', '--sample'], env);
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stdout, /^release \d{4}-W\d\d published: \d+ files, [\d.]+ MB, 1 country, in [\d.]+ s$/m);
    for (const run of [crawled, ranked, again, built]) assert.doesNotMatch(run.stdout, /[{[]"/, 'no JSON');
  });
});
