import assert from 'node:assert/strict';
import { AppError, isAppError } from '../../contracts/errors.ts';
import { guarded, watchDependencies } from '../../services/shared/dependencies.ts';
import { Health } from '../../services/shared/health.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { waitFor } from '../ports/support.ts';

/** A server the test switches between answering, refusing and hanging. */
function fakeServer() {
  const server = {
    mode: 'up' as 'up' | 'refusing' | 'hanging',
    checks: 0,
    async answer(): Promise<string> {
      if (server.mode === 'refusing') throw new AppError('unavailable', 'connection refused', { retriable: true });
      if (server.mode === 'hanging') await new Promise(() => undefined);
      return 'ok';
    },
  };
  return server;
}

describe('dependency breakers', () => {
  it('fails a call that outlives its deadline with unavailable, then fails fast until a check answers', async () => {
    const server = fakeServer();
    const health = new Health();
    const watched = watchDependencies(
      health,
      [{ name: 'opensearch', critical: true, check: () => { server.checks += 1; return server.answer(); } }],
      silentLogger,
      { callTimeoutMs: 100, checkTimeoutMs: 50, checkEveryMs: 20, abandonCheckAfterMs: 600 },
    );
    try {
      const dep = watched.get('opensearch');
      assert.ok(dep);
      await waitFor('the first check', () => health.get('opensearch')?.state === 'running', 2000);
      assert.equal(await dep.call('search', () => server.answer()), 'ok');

      server.mode = 'hanging';
      const started = performance.now();
      await assert.rejects(dep.call('search', () => server.answer()), (err: unknown) => isAppError(err, 'unavailable') && err.retriable);
      assert.ok(performance.now() - started < 300, 'bounded by the call deadline');
      assert.equal(dep.available, false);
      assert.deepEqual(health.failing().map((c) => [c.name, c.state]), [['opensearch', 'down']]);

      // Open: a call does not even reach the server.
      let reached = false;
      const fast = performance.now();
      await assert.rejects(dep.call('search', async () => { reached = true; return 'ok'; }), /opensearch is down/);
      assert.equal(reached, false);
      assert.ok(performance.now() - fast < 20);

      // A hanging server gets one check in flight at a time, not one per tick.
      const checksBefore = server.checks;
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(server.checks - checksBefore <= 1, `${server.checks - checksBefore} checks started against a hanging server`);

      // The check in flight never settles; once given up, a fresh check finds the server back.
      server.mode = 'up';
      await waitFor('the breaker to close', () => dep.available, 2000);
      assert.equal(health.get('opensearch')?.state, 'running');
      assert.equal(await dep.call('search', () => server.answer()), 'ok');
    } finally {
      await watched.stop();
    }
  });

  it('closes the breaker when the server answers again, and passes other errors through without opening it', async () => {
    const server = fakeServer();
    const health = new Health();
    const watched = watchDependencies(
      health,
      [{ name: 'mongodb', critical: true, check: () => server.answer() }],
      silentLogger,
      { callTimeoutMs: 100, checkTimeoutMs: 50, checkEveryMs: 20 },
    );
    try {
      const dep = watched.get('mongodb');
      assert.ok(dep);
      const store = guarded({ async get(key: string) { return server.answer().then(() => key); }, async close() {} }, dep);
      await waitFor('the first check', () => health.get('mongodb')?.state === 'running', 2000);

      await assert.rejects(
        dep.call('get', async () => { throw new AppError('not_found', 'no such title'); }),
        (err: unknown) => isAppError(err, 'not_found'),
      );
      assert.equal(dep.available, true, 'a request error is not an outage');

      server.mode = 'refusing';
      await assert.rejects(store.get('a'), (err: unknown) => isAppError(err, 'unavailable'));
      assert.equal(health.get('mongodb')?.state, 'down');
      assert.equal(health.get('mongodb')?.lastError, 'connection refused');

      server.mode = 'up';
      await waitFor('the check to close the breaker', () => dep.available, 2000);
      assert.equal(health.get('mongodb')?.state, 'running');
      assert.equal(await store.get('b'), 'b');
    } finally {
      await watched.stop();
    }
  });

  it('keeps a dependency up through one check answered late, and marks it down when the next tick finds a check still unanswered', async () => {
    let delayMs = 0;
    let checks = 0;
    const health = new Health();
    const watched = watchDependencies(
      health,
      [{ name: 'kafka', critical: true, check: async () => { checks += 1; if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs)); return 'ok'; } }],
      silentLogger,
      { checkTimeoutMs: 50, checkEveryMs: 20 },
    );
    try {
      await waitFor('the first check', () => health.get('kafka')?.state === 'running', 2000);
      const states = new Set<string>();
      const watch = setInterval(() => states.add(health.get('kafka')?.state ?? 'none'), 1);
      // Answers after 60 ms: past the 50 ms timeout, but before the next tick gives up on it.
      delayMs = 60;
      const before = checks;
      await waitFor('two slow checks', () => checks - before >= 2, 2000);
      delayMs = 0;
      await new Promise((r) => setTimeout(r, 150));
      clearInterval(watch);
      assert.deepEqual([...states], ['running'], 'a late answer is not an outage');
      assert.equal(watched.get('kafka')?.available, true);

      // Hanging: down once a check has missed twice (two timeouts and a tick), not before.
      delayMs = 10_000;
      const hung = performance.now();
      await waitFor('down', () => health.get('kafka')?.state === 'down', 2000);
      assert.ok(performance.now() - hung >= 90, `down after ${performance.now() - hung} ms`);
    } finally {
      await watched.stop();
    }
  });

  it('registers a non-critical dependency that is reported but keeps the process ready', async () => {
    const health = new Health();
    const watched = watchDependencies(
      health,
      [{ name: 'redis', critical: false, check: async () => { throw new Error('ECONNREFUSED'); } }],
      silentLogger,
      { checkEveryMs: 20 },
    );
    try {
      await waitFor('redis to be down', () => health.get('redis')?.state === 'down', 2000);
      assert.deepEqual(health.failing(), []);
      assert.equal(health.report(true).components.find((c) => c.name === 'redis')?.kind, 'dependency');
    } finally {
      await watched.stop();
    }
  });
});
