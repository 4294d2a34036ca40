/**
 * Every role as its own process: two API, one ingest, two projector and two scheduler processes
 * share one DATA_DIR (LMDB takes several processes on one machine), on the embedded default and
 * again on the real servers (Kafka, MongoDB/FerretDB, OpenSearch, Redis; unique names). A
 * crawl published while they run is ingested and projected; the active projector is killed
 * with SIGKILL midway and the standby takes over within 30 s; both API processes then answer a
 * fixed list of requests identically, and the daily ranking ran exactly once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { projectionsPosition, SCHEDULE_COLLECTION } from '../../services/cli/schedule.ts';
import { openAdapters, type Adapters } from '../../services/shared/adapters.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { LEASES_COLLECTION } from '../../services/shared/lease.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { describeWithServer, serverUrl } from '../ports/requireServer.ts';
import { bin, embeddedEnv, freePort, marquee, root, scratchDirs, stop } from './process.ts';
import { dropServerData, until, type Proc as LoggedProc } from './topology.support.ts';

interface Proc extends LoggedProc {
  child: ChildProcess;
}

const SERVERS = ['KAFKA_BROKERS', 'MONGODB_URL', 'OPENSEARCH_URL', 'REDIS_URL'] as const;

function topology(title: string, servers: NodeJS.ProcessEnv | null): void {
  describe(title, function () {
    this.timeout(420_000);
    const dirs = scratchDirs('marquee-roles-');
    const procs: Proc[] = [];
    let env: NodeJS.ProcessEnv;
    let adapters: Adapters | undefined;

    const start = (name: string, roles: string, extra: NodeJS.ProcessEnv = {}): Proc => {
      const child = spawn(process.execPath, [bin, 'start', '--roles', roles], { env: { ...env, ...extra }, cwd: root });
      const proc: Proc = { name, child, log: '' };
      child.stdout?.on('data', (d) => (proc.log += d));
      child.stderr?.on('data', (d) => (proc.log += d));
      procs.push(proc);
      return proc;
    };

    before(() => {
      env = embeddedEnv({
        DATA_DIR: dirs.make(),
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '10000',
        LINK_TOKEN_KEYS: `1:${'ab'.repeat(32)}`,
        DOWNLOAD_SIGNING_KEY: 'roles-e2e-signing-key-of-32-chars',
        // SIGKILL must reach the process itself, not the launcher that re-executes it.
        MARQUEE_NO_REEXEC: '1',
        ...(servers ?? {}),
      });
    });

    after(async () => {
      // The killed projector has no exit to wait for.
      await Promise.all(procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => stop(p.child)));
      await adapters?.close();
      dirs.removeAll();
      if (servers) await dropServerData(servers);
    });

    it('splits the roles over processes, fails the projector over within 30 s of a SIGKILL, and answers identically from every API process', async () => {
      const crawl = (day: number, publishOnly: boolean) =>
        marquee(['crawl', '--titles', '300', '--countries', 'US,DE', '--day', String(day), ...(publishOnly ? ['--publish-only'] : [])], env);
      const first = await crawl(0, false);
      assert.equal(first.code, 0, first.stderr);

      const ports = [await freePort(), await freePort()];
      const apis = ports.map((port, i) => start(`api${i + 1}`, 'api', { PORT: String(port) }));
      // The ingest process serves no API: its probes and counts are on its ops port.
      const opsPort = await freePort();
      start('ingest1', 'ingest', { OPS_PORT: String(opsPort) });
      const projectorOps = [await freePort(), await freePort()];
      const projectors = projectorOps.map((port, i) => start(`projector${i + 1}`, 'projector', { OPS_PORT: String(port) }));
      const schedulers = [start('scheduler1', 'scheduler'), start('scheduler2', 'scheduler')];
      for (const port of ports) {
        await until(`API on ${port} ready`, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 120_000, procs);
      }
      // An API-only process runs no loop but its own search feed.
      assert.doesNotMatch(apis[0]!.log, /projector active|daily ranking computed/);

      const active = await until('a projector active', async () => projectors.find((p) => /projector active/.test(p.log)), 60_000, procs);
      const standby = projectors.find((p) => p !== active)!;
      assert.doesNotMatch(standby.log, /projector active/, 'one active projector at a time');

      // A crawl published while they run: ingest appends, the active projector folds it and is
      // killed as soon as the events arrive; the next day is published while no projector is
      // active, so the standby has work to take over.
      adapters = await openAdapters(loadConfig(env), silentLogger);
      const opened = adapters;
      const headBefore = await opened.eventStore.headPosition();
      const published = await crawl(1, true);
      assert.equal(published.code, 0, published.stderr);
      await until('ingest appending day 1', async () => (await opened.eventStore.headPosition()) > headBefore, 60_000, procs);
      const ops = `http://127.0.0.1:${opsPort}`;
      await until('ingest ready on its ops port', async () => (await fetch(`${ops}/readyz`)).status === 200, 60_000, procs);
      const appended = await until('ingest counting its appends on its ops port', async () => {
        const text = await (await fetch(`${ops}/metrics`)).text();
        const n = Number(/^marquee_ingest_events_appended_total (\d+)$/m.exec(text)?.[1] ?? 0);
        return n > 0 && /^marquee_component_state\{component="ingest",state="running"\} 1$/m.test(text) ? n : undefined;
      }, 60_000, procs);
      assert.ok(appended > 0);
      active.child.kill('SIGKILL');
      const killedAt = Date.now();
      const next = await crawl(2, true);
      assert.equal(next.code, 0, next.stderr);
      await until('the standby takes over', async () => /projector active/.test(standby.log), 30_000, procs);
      const takeoverMs = Date.now() - killedAt;
      console.log(`      standby projector active ${(takeoverMs / 1000).toFixed(1)} s after the SIGKILL (limit 30 s)`);
      assert.ok(takeoverMs < 30_000);
      const [lease] = await opened.readStore.scan<{ holder: string }>(LEASES_COLLECTION, { prefix: 'projector:', reverse: true, limit: 1 });
      assert.match(lease?.doc.holder ?? '', new RegExp(`:${standby.child.pid}:`), 'the standby holds the lease');
      const status = await marquee(['status'], env);
      assert.match(status.stdout, new RegExp(`projector: held by [^\\n]*:${standby.child.pid}:`), status.stdout);

      // Ingest finishes the day (the head stops moving), then the new projector folds it all.
      let lastHead = -1;
      await until('ingest idle', async () => {
        const head = await opened.eventStore.headPosition();
        const idle = head === lastHead;
        lastHead = head;
        if (!idle) await new Promise((r) => setTimeout(r, 1500));
        return idle;
      }, 120_000, procs);
      const head = await opened.eventStore.headPosition();
      await until('projections caught up', async () => (await projectionsPosition(opened.readStore)) >= head, 120_000, procs);
      // The new active projector tells the same on its ops port: no read model behind the log.
      const standbyOps = `http://127.0.0.1:${projectorOps[projectors.indexOf(standby)]}`;
      await until('no projection lag on the active projector\'s ops port', async () => {
        const lags = [...(await (await fetch(`${standbyOps}/metrics`)).text()).matchAll(/^marquee_projection_lag\{projection="[^"]+"\} (\d+)$/gm)];
        return lags.length === ALL_PROJECTIONS.length && lags.every((m) => m[1] === '0');
      }, 60_000, procs);
      assert.ok(ALL_PROJECTIONS.length > 5);

      // The daily ranking ran once across both schedulers, after the projections it reads.
      const today = new Date().toISOString().slice(0, 10);
      await until('the daily ranking recorded', async () => (await opened.readStore.get(SCHEDULE_COLLECTION, `ranking:${today}`)) !== null, 120_000, procs);
      const ranked = schedulers.filter((s) => /daily ranking computed/.test(s.log));
      assert.ok(ranked.length <= 1, `ranked by ${ranked.map((s) => s.name).join(', ')}`);

      // Both API processes answer a fixed list of requests identically (the search index of each
      // follows the shared `search` read model; give the feeds a moment past the projections).
      const created = await marquee(['keys', 'create', '--name', 'roles'], env);
      assert.equal(created.code, 0, created.stderr);
      const auth = { authorization: `Bearer ${created.stdout.trim().split('\n').at(-1)}` };
      const paths = [
        '/v1/search?q=the&country=US',
        '/v1/search?q=love&country=DE&language=de',
        '/v1/rankings?country=US&limit=20',
        '/v1/trending?country=US',
        '/v1/providers?country=DE',
        '/v1/collections?country=US',
        '/v1/featured?country=US',
        '/v1/locales',
      ];
      const answers = (port: number) =>
        Promise.all(paths.map(async (path) => {
          const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: auth });
          const body = (await res.json()) as Record<string, unknown>;
          // How long the engine took is the one field expected to differ.
          delete body.processing_time_ms;
          return `${path} ${res.status} ${JSON.stringify(body)}`;
        }));
      // A 503 is an answer too: the API gives it when a read outlives its deadline, which the
      // shared FerretDB can make happen while a scheduler's release build scans it. Wait for
      // answers that are identical and all 200, and assert on the last ones if none come.
      const allOk = (lines: string[]) => lines.every((line) => / 200 /.test(line));
      const [a, b] = await until('identical answers', async () => {
        const both = await Promise.all(ports.map(answers));
        return JSON.stringify(both[0]) === JSON.stringify(both[1]) && both.every(allOk) ? both : undefined;
      }, 60_000, procs).catch(async () => Promise.all(ports.map(answers)));
      for (let i = 0; i < paths.length; i += 1) assert.equal(a![i], b![i], String(paths[i]));
      assert.ok(a!.every((line) => / 200 /.test(line)), a!.filter((line) => !/ 200 /.test(line)).join('\n').slice(0, 2000));
      const search = JSON.parse(a![0]!.slice(a![0]!.indexOf('{'))) as { total: number };
      assert.ok(search.total > 0, 'search answers from the index each API process fed');
    });
  });
}

topology('marquee start --roles: one process per role on one data directory (e2e)', null);

describeWithServer('marquee start --roles on the real servers (e2e)', 'MONGODB_URL', () => {
  const missing = SERVERS.filter((name) => serverUrl(name) === undefined);
  if (missing.length > 0) {
    it(`needs ${missing.join(', ')}`, () => assert.fail(`${missing.join(', ')} not set beside MONGODB_URL`));
    return;
  }
  const id = `roles${Date.now().toString(36)}`;
  topology('two of each role', {
    MONGODB_DB: `marquee_${id}`,
    OPENSEARCH_INDEX_PREFIX: `marquee-${id}`,
    KAFKA_TOPIC_PREFIX: `marquee.${id}.`,
    INGEST_GROUP: `ingest-${id}`,
    ...Object.fromEntries(SERVERS.map((name) => [name, serverUrl(name)])),
  });
});
