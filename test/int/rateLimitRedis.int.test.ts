/**
 * The API's rate limit against a real Redis: two API instances (each with its own ioredis
 * client, as two processes would have) share one count per key, and the counters expire.
 *
 * Runs when REDIS_URL is set (`eval "$(bash infra/local/servers.sh env)"`); otherwise it is
 * skipped, unless REQUIRE_SERVERS=1 (CI), where one failing test names what is missing.
 * Every test uses its own ioredis `keyPrefix`, so runs never see each other's counters.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ApiKeyStore, Clock, ReadStore } from '../../contracts/ports.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { checkRedis, redisClient } from '../../infra/redis/client.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';
import { testLinkTokens } from '../e2e/api.linkTokens.ts';
import { waitFor } from '../ports/support.ts';

const requireServers = process.env.REQUIRE_SERVERS === '1';
const redisUrl = process.env.REDIS_URL?.trim() || null;
const clock: Clock = { now: () => new Date() };

/** Unique per run; each test adds a counter, so every test has its own Redis key prefix. */
const runId = `${Date.now().toString(36)}${randomUUID().slice(0, 8)}`;
let testCounter = 0;
function uniquePrefix(): string {
  testCounter += 1;
  return `marquee:test:ratelimit:${runId}:${testCounter}:`;
}

interface Reply {
  status: number;
  headers: Headers;
  body: { code?: string } | undefined;
}

async function get(api: RunningApi, path: string, key: string): Promise<Reply> {
  const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  const isJson = res.headers.get('content-type')?.startsWith('application/json') && text !== '';
  return { status: res.status, headers: res.headers, body: isJson ? (JSON.parse(text) as { code?: string }) : undefined };
}

function defineSuite(url: string): void {
  let dir: string;
  let readStore: ReadStore;
  let apiKeys: ApiKeyStore;
  let linkTokens: LinkTokenCodec;
  /** Reads Redis without a prefix, to see the keys the limiter wrote. */
  let inspector: Redis;
  let opened: Array<{ close(): Promise<unknown> }> = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-ratelimit-redis-'));
    readStore = lmdbReadStore({ dataDir: dir });
    apiKeys = lmdbApiKeyStore({ dataDir: dir });
    linkTokens = await testLinkTokens();
    inspector = new Redis(url, { maxRetriesPerRequest: 1 });
    await inspector.ping();
  });

  afterEach(async () => {
    const closing = opened;
    opened = [];
    for (const thing of closing.reverse()) await thing.close();
  });

  after(async () => {
    inspector?.disconnect();
    await apiKeys?.close();
    await readStore?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Two API instances, each with its own ioredis client, sharing one Redis under `prefix`. */
  async function twoInstances(prefix: string, perMinute: number, windowMs?: number): Promise<[RunningApi, RunningApi]> {
    const start = async (): Promise<RunningApi> => {
      const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 1 });
      opened.push({ close: async () => redis.disconnect() });
      const api = await startApi({
        port: 0,
        readStore,
        apiKeys,
        search: inProcessSearchIndex(),
        linkTokens,
        clock,
        rateLimit: { perMinute, redis, ...(windowMs ? { windowMs } : {}) },
      });
      opened.push(api);
      return api;
    };
    return [await start(), await start()];
  }

  /** The limiter's keys in Redis under `prefix`. */
  async function keysUnder(prefix: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await inspector.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found.sort();
  }

  it("reports Redis up to a health check made as the client is created, not down for still connecting", async () => {
    // The check made as a process starts: a bare ping failed there (no offline queue), so the
    // rate limit counted in memory until the next check, a second later.
    const client = redisClient(url);
    try {
      await checkRedis(client);
    } finally {
      client.disconnect();
    }
  });

  it('shares one count per key across two instances: the 6th request of 5 per minute gets 429 rate_limited with Retry-After', async () => {
    const [a, b] = await twoInstances(uniquePrefix(), 5);
    const { key } = await createApiKey(apiKeys, 'redis-shared', clock);
    const order = [a, b, a, b, a, b];
    const replies: Reply[] = [];
    for (const api of order) replies.push(await get(api, '/v1/locales', key));

    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
    assert.deepEqual(replies.map((r) => r.headers.get('ratelimit-limit')), ['5', '5', '5', '5', '5', '5']);
    // Decreasing by one per request whichever instance answered it.
    assert.deepEqual(replies.map((r) => r.headers.get('ratelimit-remaining')), ['4', '3', '2', '1', '0', '0']);
    const refused = replies[5] as Reply;
    assert.equal(refused.body?.code, 'rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers.get('retry-after')}`);
    const reset = Number(refused.headers.get('ratelimit-reset'));
    assert.ok(Number.isInteger(reset) && reset >= 0 && reset <= 60, `RateLimit-Reset ${refused.headers.get('ratelimit-reset')}`);

    // The first instance refuses too: the count is not per process.
    assert.equal((await get(a, '/v1/locales', key)).status, 429);
  });

  it('counts each API key on its own, even on a shared Redis', async () => {
    const [a, b] = await twoInstances(uniquePrefix(), 5);
    const { key: first } = await createApiKey(apiKeys, 'redis-first', clock);
    const { key: second } = await createApiKey(apiKeys, 'redis-second', clock);
    for (let i = 0; i < 5; i += 1) assert.equal((await get(i % 2 ? a : b, '/v1/locales', first)).status, 200);
    assert.equal((await get(a, '/v1/locales', first)).status, 429);

    const other = await get(b, '/v1/locales', second);
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('ratelimit-remaining'), '4');
  });

  it('stores one counter per key in Redis with a TTL of at most 60 s', async () => {
    const prefix = uniquePrefix();
    const [a, b] = await twoInstances(prefix, 5);
    const { key, doc } = await createApiKey(apiKeys, 'redis-ttl', clock);
    await get(a, '/v1/locales', key);
    await get(b, '/v1/locales', key);

    const keys = await keysUnder(prefix);
    assert.deepEqual(keys, [`${prefix}marquee-ratelimit:key:${doc.id}`]);
    const ttl = await inspector.pttl(keys[0] as string);
    // -1 would mean "no expiry" (a leak), -2 "no such key".
    assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
    assert.equal(await inspector.zcard(keys[0] as string), 2);
  });

  it('lets the counter expire from Redis when the window ends, and then answers 200 again', async () => {
    const prefix = uniquePrefix();
    const windowMs = 1500;
    const [a, b] = await twoInstances(prefix, 2, windowMs);
    const { key } = await createApiKey(apiKeys, 'redis-expiry', clock);
    const statuses = [];
    for (const api of [a, b, a]) statuses.push((await get(api, '/v1/locales', key)).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const [stored] = await keysUnder(prefix);
    assert.ok(stored, 'the limiter wrote no key');
    const ttl = await inspector.pttl(stored);
    assert.ok(ttl > 0 && ttl <= windowMs, `PTTL ${ttl}`);

    await waitFor('the rate-limit key to expire', async () => (await inspector.exists(stored)) === 0, windowMs + 5_000);
    const again = await get(b, '/v1/locales', key);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('ratelimit-remaining'), '1');
  });
}

describe('the API rate limit on a shared Redis', function () {
  this.timeout(30_000);
  if (redisUrl) {
    describe(`(Redis at ${redisUrl})`, () => defineSuite(redisUrl));
    return;
  }
  if (requireServers) {
    it('fails: REQUIRE_SERVERS=1 but REDIS_URL is not set', () => {
      assert.fail(
        'REDIS_URL is not set. Start Redis with `bash infra/local/servers.sh up redis` ' +
          'and export its address with `eval "$(bash infra/local/servers.sh env)"`.',
      );
    });
  } else {
    it('skipped: REDIS_URL is not set (run infra/local/servers.sh up redis, then eval its env)', function () {
      this.skip();
    });
  }
});
