/**
 * `marquee_projection_lag` (services/roles/projector.ts) on the embedded engines: the log's head
 * minus each read model's checkpoint, read at each scrape, gone from a scrape whose reads fail.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { createPipeline } from '../../services/cli/pipeline.ts';
import { registerProjectionMetrics } from '../../services/roles/projector.ts';
import { openAdapters, type Adapters } from '../../services/shared/adapters.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { fixtureStreams } from '../e2e/api.fixture.ts';

describe('projection lag in /metrics (LMDB)', function () {
  this.timeout(30_000);
  let dir: string;
  let adapters: Adapters;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-lag-'));
    adapters = await openAdapters(loadConfig({ DATA_DIR: dir }), silentLogger);
  });
  after(async () => {
    await adapters?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lags = async (registry: Registry) => {
    const text = await registry.metrics();
    return Object.fromEntries([...text.matchAll(/^marquee_projection_lag\{projection="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
  };

  it('is the head minus each checkpoint, read again a second later, and falls to 0 once the projections fold the log', async () => {
    const registry = new Registry();
    registerProjectionMetrics(registry, adapters);
    for (const { stream, events } of fixtureStreams()) await adapters.eventStore.append(stream, events, 'no_stream');
    const head = await adapters.eventStore.headPosition();
    assert.ok(head > 10);
    const before = await lags(registry);
    assert.deepEqual(Object.keys(before).sort(), ALL_PROJECTIONS.map((p) => p.name).sort());
    for (const lag of Object.values(before)) assert.equal(lag, head);

    await createPipeline(adapters, silentLogger).projections.catchUp();
    // Scrapes within a second share one read (the next test).
    await new Promise((r) => setTimeout(r, 1050));
    for (const lag of Object.values(await lags(registry))) assert.equal(lag, 0);
  });

  it('reads the stores once for the scrapes of one second, however many there are', async () => {
    let reads = 0;
    const counted = { ...adapters, eventStore: { ...adapters.eventStore, headPosition: () => ((reads += 1), adapters.eventStore.headPosition()) } };
    const registry = new Registry();
    registerProjectionMetrics(registry, counted);
    await Promise.all(Array.from({ length: 50 }, () => registry.metrics()));
    for (let i = 0; i < 20; i += 1) await registry.metrics();
    assert.equal(reads, 1);
    await new Promise((r) => setTimeout(r, 1050));
    await registry.metrics();
    assert.equal(reads, 2);
  });

  it('leaves the lag out of a scrape whose reads fail, instead of failing the scrape or showing an old value', async () => {
    const registry = new Registry();
    const broken = { ...adapters, eventStore: { ...adapters.eventStore, headPosition: () => Promise.reject(new Error('the event store is down')) } };
    registerProjectionMetrics(registry, broken);
    const text = await registry.metrics();
    assert.match(text, /^# TYPE marquee_projection_lag gauge$/m);
    assert.doesNotMatch(text, /^marquee_projection_lag\{/m);
  });
});
