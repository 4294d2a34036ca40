/**
 * The ops port of a process that serves no API (OPS_PORT): the API's probes and metrics, on a
 * server of their own, with ingest's counts when the process ingests.
 */
import assert from 'node:assert/strict';
import { isAppError } from '../../contracts/errors.ts';
import { startOpsServer } from '../../services/api/opsServer.ts';
import { urlHost, type RunningApi } from '../../services/api/server.ts';
import { emptyStats } from '../../services/ingest/ingest.ts';
import { registerIngestMetrics } from '../../services/ingest/metrics.ts';
import { Health } from '../../services/shared/health.ts';

describe('ops server (OPS_PORT)', () => {
  let ops: RunningApi;
  let ready = false;
  const health = new Health();
  const totals = emptyStats();

  before(async () => {
    health.register('ingest', 'loop');
    health.register('redis', 'dependency', { critical: false });
    ops = await startOpsServer({ port: 0, host: '127.0.0.1', health, ready: () => ready });
    // Registered after the server: a part of the process adds its metrics whenever it starts.
    health.exportMetrics((registry) => registerIngestMetrics(registry, () => totals));
  });
  after(() => ops.close());

  it('answers /healthz at once, and /readyz 503 until the process is ready and its critical loops run', async () => {
    assert.deepEqual(await (await fetch(`${ops.url}/healthz`)).json(), { status: 'ok' });
    const loading = await fetch(`${ops.url}/readyz`);
    assert.equal(loading.status, 503);
    assert.equal(loading.headers.get('retry-after'), '5');
    assert.equal(((await loading.json()) as { code: string }).code, 'unavailable');

    ready = true;
    const starting = await fetch(`${ops.url}/readyz`);
    assert.equal(starting.status, 503);
    assert.deepEqual(((await starting.json()) as { details: unknown }).details, { components: [{ name: 'ingest', state: 'starting', last_error: null }] });

    health.set('ingest', 'running');
    health.set('redis', 'down', new Error('ECONNREFUSED'));
    const up = await fetch(`${ops.url}/readyz`);
    assert.equal(up.status, 200);
    assert.deepEqual(await up.json(), { status: 'ready', components: [{ name: 'ingest', state: 'running' }, { name: 'redis', state: 'down' }] });
  });

  it('exports the loops, their restarts, ingest counts and the process metrics in /metrics', async () => {
    health.restarted('ingest');
    health.restarted('ingest');
    Object.assign(totals, { observations: 120, appended: 300, skipped: 15, rejected: 5, conflicts: 1, takeovers: 2 });
    const res = await fetch(`${ops.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, /^marquee_component_state\{component="ingest",state="running"\} 1$/m);
    assert.match(text, /^marquee_component_state\{component="redis",state="down"\} 1$/m);
    assert.match(text, /^marquee_component_restarts_total\{component="ingest"\} 2$/m);
    assert.doesNotMatch(text, /marquee_component_restarts_total\{component="redis"\}/, 'a dependency is checked, not restarted');
    assert.match(text, /^marquee_ingest_observations_total 120$/m);
    assert.match(text, /^marquee_ingest_observations_skipped_total 15$/m);
    assert.match(text, /^marquee_ingest_observations_rejected_total 5$/m);
    assert.match(text, /^marquee_ingest_events_appended_total 300$/m);
    assert.match(text, /^marquee_ingest_conflicts_total 1$/m);
    assert.match(text, /^marquee_ingest_takeovers_total 2$/m);
    assert.match(text, /^process_cpu_seconds_total /m);
    // Counts read at each scrape.
    totals.observations = 121;
    assert.match(await (await fetch(`${ops.url}/metrics`)).text(), /^marquee_ingest_observations_total 121$/m);
  });

  it('says which port is taken, or that HOST resolves to nothing, and what sets it, not a stack (main.ts prints an AppError as one line)', async () => {
    const port = Number(new URL(ops.url).port);
    await assert.rejects(startOpsServer({ port, host: '127.0.0.1', health, ready: () => true }), (err: unknown) => {
      assert.ok(isAppError(err));
      assert.equal(err.message, `127.0.0.1:${port} is already in use (another Marquee, or another server?): stop it, or choose another port (PORT for the API, OPS_PORT for the ops server)`);
      return true;
    });
    // A HOST that resolves to nothing (.invalid never does, RFC 2606).
    await assert.rejects(startOpsServer({ port: 0, host: 'no-such-host.invalid', health, ready: () => true }), (err: unknown) => {
      assert.ok(isAppError(err), String(err));
      assert.match(err.message, /^HOST no-such-host\.invalid does not resolve to an address \((ENOTFOUND|EAI_AGAIN)\): set it to an address of this machine, or 0\.0\.0\.0 for all$/);
      return true;
    });
  });

  it('logs a URL a person can open for any listening address', () => {
    // HOST=:: logged http://:::8080, HOST=::1 http://::1:8080: neither is a URL.
    assert.deepEqual(['0.0.0.0', '::', '::1', '127.0.0.1', 'api.internal'].map((h) => new URL(`http://${urlHost(h)}:8080/v1`).host), [
      '127.0.0.1:8080', '[::1]:8080', '[::1]:8080', '127.0.0.1:8080', 'api.internal:8080',
    ]);
  });

  it('answers nothing else: 404 and 405 in the JSON error shape of the API', async () => {
    const missing = await fetch(`${ops.url}/v1/media`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, 'not_found');
    const post = await fetch(`${ops.url}/metrics`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal(((await post.json()) as { code: string }).code, 'method_not_allowed');
  });
});
