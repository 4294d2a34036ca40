import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { describeHealthReports, Health, supervise } from '../../services/shared/health.ts';
import { silentLogger } from '../../services/shared/logger.ts';

const until = async (check: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('health and supervision', () => {
  it('says what a process not ready yet is doing, and nothing once it is ready', () => {
    const now = new Date('2026-12-05T20:00:00Z');
    const health = new Health(() => now, 'host:1');
    assert.equal(health.report(false).note, undefined);
    health.note('loading the sample: day 3 of 12');
    const loading = health.report(false);
    assert.equal(loading.note, 'loading the sample: day 3 of 12');
    assert.deepEqual(describeHealthReports([loading], now), ['host:1  not ready: loading the sample: day 3 of 12  (reported 2026-12-05T20:00:00.000Z)']);
    // Ready: no note, whatever was said last.
    assert.equal(health.report(true).note, undefined);
    health.note(null);
    assert.deepEqual(describeHealthReports([health.report(false)], now), ['host:1  not ready  (reported 2026-12-05T20:00:00.000Z)']);
  });

  it('restarts a failing loop with backoff, records the error, and stops cleanly', async () => {
    const health = new Health();
    let runs = 0;
    const loop = supervise(
      health,
      'ingest',
      silentLogger,
      async (signal) => {
        runs += 1;
        if (runs < 3) throw new Error(`broker gone (${runs})`);
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      },
      { minBackoffMs: 10 },
    );
    await until(() => runs === 3 && health.get('ingest')?.state === 'running');
    const status = health.get('ingest');
    assert.equal(status?.restarts, 2);
    assert.equal(status?.lastError, 'broker gone (2)');
    assert.deepEqual(health.failing(), []);
    await loop.stop();
    assert.equal(health.get('ingest')?.state, 'stopped');
  });

  it('treats a loop that returns by itself as a failure', async () => {
    const health = new Health();
    let runs = 0;
    const loop = supervise(health, 'projections', silentLogger, async () => {
      runs += 1;
    }, { minBackoffMs: 10_000 });
    await until(() => health.get('projections')?.state === 'backing_off');
    assert.match(health.get('projections')?.lastError ?? '', /stopped by itself/);
    assert.deepEqual(health.failing().map((c) => c.name), ['projections']);
    // stop() wakes the backoff pause instead of waiting it out.
    const started = Date.now();
    await loop.stop();
    assert.ok(Date.now() - started < 1000);
    assert.equal(runs, 1);
  });

  it('exports the state of each component as a gauge', async () => {
    const health = new Health();
    health.register('redis', 'dependency', { critical: false });
    const registry = new Registry();
    health.registerMetrics(registry);
    health.set('redis', 'down', new Error('ECONNREFUSED'));
    const text = await registry.metrics();
    assert.match(text, /marquee_component_state\{component="redis",state="down"\} 1/);
    assert.match(text, /marquee_component_state\{component="redis",state="running"\} 0/);
    // Not critical: reported, but never holds readiness.
    assert.deepEqual(health.failing(), []);
    assert.equal(health.report(true).components[0]?.lastError, 'ECONNREFUSED');
  });
});
