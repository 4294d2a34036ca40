/**
 * `kill -9` of the first `npm start` at any point of its load: the sample load, the daily
 * ranking and the weekly release resume where they stopped, and the catalog a restart finally
 * serves is the one an uninterrupted start serves. One data directory is killed at five points in
 * a row (during day 1's ingest, during day 2's crawl, at day 3's ranking, right after ready
 * while today's ranking runs, in the middle of the weekly release), restarted each time, and
 * then compared, request by request, with a start that was never interrupted. `/readyz` must
 * never answer 200 while the sample is only partly loaded.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bin, embeddedEnv, freePort, marquee, root, scratchDirs, stop } from './process.ts';

/** A small sample, fixed in time, so both data directories load the very same catalog. */
const SAMPLE = {
  SAMPLE_TITLES: '600',
  SAMPLE_COUNTRIES: 'US,DE,FR',
  SAMPLE_DAYS: '3',
  SAMPLE_START_DATE: '2026-03-02',
  SAMPLE_SEED: '42',
};
const LOADED = /sample catalog loaded/;

interface Run {
  child: ChildProcess;
  log: () => string;
  /** Set once `/readyz` answered 200 during this run. */
  readySeen: () => boolean;
  exited: Promise<void>;
}

function launch(env: NodeJS.ProcessEnv, port: number, args: string[] = ['start', '--sample']): Run {
  // Its own process group: bin/marquee.js re-executes itself, and SIGKILL must reach both.
  const child = spawn(process.execPath, [bin, ...args], { env: { ...env, PORT: String(port) }, cwd: root, detached: true });
  let log = '';
  let ready = false;
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  let running = true;
  void exited.then(() => (running = false));
  void (async () => {
    while (running) {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      if (res?.status === 200) ready = true;
      await res?.arrayBuffer().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return { child, log: () => log, readySeen: () => ready, exited };
}

async function waitFor(run: Run, what: string, until: () => boolean, timeoutMs = 90_000, pollMs = 5): Promise<void> {
  const started = Date.now();
  while (!until()) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) throw new Error(`exited before ${what}:\n${run.log().slice(-3000)}`);
    if (Date.now() - started > timeoutMs) throw new Error(`no ${what} after ${timeoutMs} ms:\n${run.log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

async function killHard(run: Run): Promise<void> {
  process.kill(-(run.child.pid as number), 'SIGKILL');
  await run.exited;
}

async function waitReady(run: Run): Promise<void> {
  await waitFor(run, 'readiness', () => run.readySeen(), 120_000, 50);
  // And the week's release, published by the schedule once ready.
  await waitFor(run, 'the weekly release', () => /weekly release \S+ published/.test(run.log()), 60_000, 50);
}

async function get(base: string, path: string, key: string): Promise<unknown> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as Record<string, unknown>;
  // How long the engine took is the one field expected to differ.
  delete body.processing_time_ms;
  return { status: res.status, body };
}

/** The fixed set of answers compared between the two data directories. */
async function answers(base: string, key: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const country of ['US', 'DE', 'FR']) {
    out[`rankings ${country}`] = await get(base, `/v1/rankings?country=${country}&limit=50`, key);
    out[`trending ${country}`] = await get(base, `/v1/trending?country=${country}`, key);
    out[`providers ${country}`] = await get(base, `/v1/providers?country=${country}`, key);
  }
  const top = ((out['rankings US'] as { body: { results: Array<{ id: string; title: string }> } }).body.results ?? []).slice(0, 3);
  assert.ok(top.length === 3, `US is ranked: ${JSON.stringify(out['rankings US']).slice(0, 300)}`);
  for (const { id } of top) {
    out[`media ${id}`] = await get(base, `/v1/media/${id}`, key);
    out[`links ${id}`] = await get(base, `/v1/media/${id}/links?country=US`, key);
  }
  const word = top[0]?.title.split(' ').find((w) => w.length >= 4) ?? 'the';
  out[`search ${word}`] = await get(base, `/v1/search?q=${encodeURIComponent(word)}&country=US&limit=50`, key);
  out['search the'] = await get(base, `/v1/search?q=the&country=DE&limit=50`, key);
  out['collections US'] = await get(base, '/v1/collections?country=US', key);
  const snapshots = (await get(base, '/v1/snapshots', key)) as { status: number; body: Record<string, unknown> };
  // When and where it was published differ; what it holds must not. The metadata bundle's
  // tar headers carry the build time, so only its path is compared.
  const { published_at: _at, download_base: _base, total_size_bytes: _size, ...listing } = snapshots.body;
  listing.files = (listing.files as Array<{ path: string; sha256: string }>).map((f) => (f.path === 'metadata.tar.gz' ? f.path : f));
  out.snapshots = { status: snapshots.status, body: listing };
  return out;
}

/** Of `marquee status`, what must not differ: documents per read model and events per type (not positions, not names). */
function statusCounts(stdout: string): string {
  const lines = stdout.split('\n');
  const documents = lines
    .map((line) => /^(\w+)\s+\S+\s+\d+\s+\d+\s+(\d+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]} ${m[2]}`);
  const from = lines.indexOf('events per type:');
  const end = lines.findIndex((line, i) => i > from && !line.startsWith('  '));
  const events = lines.slice(from + 1, end === -1 ? undefined : end);
  assert.ok(documents.length > 0 && from >= 0 && events.length > 0, `unexpected status output:\n${stdout}`);
  return [...documents, ...events].join('\n');
}

describe('marquee start killed with SIGKILL at any point of its first load (e2e)', function () {
  this.timeout(600_000);
  const dirs = scratchDirs('marquee-sigkill-');
  // The development keys of `npm start`, on the embedded engines.
  const env = embeddedEnv({ ...SAMPLE, LOG_LEVEL: 'debug', RATE_LIMIT_PER_MINUTE: '100000' });

  after(() => dirs.removeAll());

  it('resumes the sample load, the ranking and the release, and answers like an uninterrupted start', async () => {
    const started = Date.now();
    // The reference: one uninterrupted start.
    const refEnv = { ...env, DATA_DIR: dirs.make() };
    const refPort = await freePort();
    const reference = launch(refEnv, refPort);
    let expected: Record<string, unknown>;
    try {
      await waitReady(reference);
      const key = (await marquee(['keys', 'create', '--name', 'ref'], refEnv)).stdout.trim().split('\n').at(-1) ?? '';
      expected = await answers(`http://127.0.0.1:${refPort}`, key);
    } finally {
      assert.equal(await stop(reference.child), 0, reference.log().slice(-2000));
    }
    const expectedStatus = statusCounts((await marquee(['status'], refEnv)).stdout);
    console.log(`      uninterrupted start: ready and released in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const killedEnv = { ...env, DATA_DIR: dirs.make() };
    const releases = join(killedEnv.DATA_DIR, 'releases');
    const port = await freePort();
    let loadedOnce = false;
    const points: Array<{ name: string; at: (run: Run) => Promise<void> }> = [
      {
        // Events appended, the day not done: the case a non-empty event store used to pass for a loaded one.
        name: "during day 1's ingest",
        at: (run) => waitFor(run, 'a batch of day 1', () => /sample day 1\/3 \S+: crawling[^]*"msg":"ingest batch"/.test(run.log())),
      },
      {
        name: "during day 2's crawl",
        at: (run) => waitFor(run, 'day 2', () => /sample day 2\/3 \S+: crawling/.test(run.log())).then(() => new Promise((r) => setTimeout(r, 50))),
      },
      { name: "at day 3's ranking", at: (run) => waitFor(run, 'day 3 ranking', () => /sample day 3\/3 \S+: ranking/.test(run.log())) },
      { name: "right after ready, during today's ranking", at: (run) => waitFor(run, 'ready', () => /"msg":"ready in/.test(run.log())) },
      {
        name: 'in the middle of the weekly release',
        at: (run) =>
          waitFor(run, 'a release being staged', () => {
            const staging = join(releases, '.staging');
            return existsSync(staging) && readdirSync(staging).some((d) => readdirSync(join(staging, d), { recursive: true }).length > 2);
          }),
      },
    ];
    for (const [i, point] of points.entries()) {
      const run = launch(killedEnv, port);
      try {
        await point.at(run);
      } finally {
        await killHard(run);
      }
      if (i > 0) assert.match(run.log(), /resuming the sample load|ready in/, `run ${i + 1} picked up where run ${i} stopped`);
      if (LOADED.test(run.log())) loadedOnce = true;
      assert.ok(loadedOnce || !run.readySeen(), `/readyz answered 200 before the sample was loaded (run ${i + 1}, killed ${point.name})`);
      console.log(`      killed ${point.name} after ${((Date.now() - started) / 1000).toFixed(1)} s`);

      if (i === 0) {
        // A partly loaded sample is never served as the catalog: without --sample, start refuses.
        const keys = { ...killedEnv, LINK_TOKEN_KEYS: `1:${'ab'.repeat(32)}`, DOWNLOAD_SIGNING_KEY: 'k'.repeat(32) };
        const refusal = launch(keys, port, ['start']);
        const timer = setTimeout(() => void killHard(refusal), 30_000);
        await refusal.exited;
        clearTimeout(timer);
        assert.equal(refusal.child.exitCode, 1, `start without --sample on a partial sample:\n${refusal.log().slice(-2000)}`);
        assert.equal(refusal.readySeen(), false);
        assert.match(refusal.log().trimEnd().split('\n').at(-1) ?? '', /^marquee: the sample load of .* stopped at day 0 of 3: finish it with `marquee start --sample`$/);
      }
    }
    // The release killed mid-build was not published, and its staging is left to be rebuilt.
    const week = (expected.snapshots as { body: { latest: string } }).body.latest;
    assert.equal(existsSync(join(releases, week)), false, `release ${week} was published before the kill`);

    const last = launch(killedEnv, port);
    try {
      await waitReady(last);
      const key = (await marquee(['keys', 'create', '--name', 'killed'], killedEnv)).stdout.trim().split('\n').at(-1) ?? '';
      const actual = await answers(`http://127.0.0.1:${port}`, key);
      for (const name of Object.keys(expected)) assert.deepEqual(actual[name], expected[name], `${name} differs from the uninterrupted start`);
      assert.deepEqual(Object.keys(actual), Object.keys(expected));
    } finally {
      assert.equal(await stop(last.child), 0, last.log().slice(-2000));
    }
    assert.equal(statusCounts((await marquee(['status'], killedEnv)).stdout), expectedStatus, 'the same events and documents');
    assert.deepEqual(readdirSync(join(releases, '.staging')), [], 'the killed build left no staging behind');
    console.log(`      five kills, resumed and compared in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
});
