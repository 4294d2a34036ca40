/**
 * Webhooks end to end: created with the CLI, delivered by the worker the scheduler runs to a
 * receiver (a local HTTP server) that checks every signature, stopped for a minute and then
 * given every change it missed, in order; the delivery log, replay from a cursor, failure
 * after the retry window, and one deliverer per webhook with two workers.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { WEBHOOK_DELIVERIES_COLLECTION, WEBHOOK_LEASES_COLLECTION, WEBHOOK_REPLAYS_COLLECTION, WEBHOOK_STATE_COLLECTION } from '../../contracts/changeModels.ts';
import { systemClock } from '../../contracts/ports.ts';
import { createDeliveryWorker, DELIVERY_MAX_CHANGES, type DeliveryWorker, type DeliveryWorkerOptions } from '../../services/webhooks/worker.ts';
import { verifySignature } from '../../services/webhooks/signature.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, pendingReplays, requestReplay, webhookState } from '../../services/webhooks/store.ts';
import { crawledCatalog, followFeed, type CrawledCatalog } from './changes.support.ts';
import { marquee } from './process.ts';
import type { ProvidersDoc } from '../../contracts/readModels.ts';
import { providersProjection } from '../../projections/providers.ts';
import { resolveCollection } from '../../services/shared/readModels.ts';

interface Received {
  path: string;
  deliveryHeader: string | undefined;
  signature: string | undefined;
  raw: string;
  body: { webhook_id: string; delivery_id: string; changes: Array<{ id: string; type: string }> };
}

/** A receiver on a fixed port that can be stopped and started again; `/fail` always answers 500. */
function receiver(port = 0) {
  const received: Received[] = [];
  let server: Server | null = null;
  const read = (req: IncomingMessage) => new Promise<string>((ok) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => ok(text));
  });
  const self = {
    received,
    port,
    start: () => new Promise<void>((ok) => {
      server = createServer(async (req, res) => {
        const raw = await read(req);
        if (req.url === '/fail') {
          res.writeHead(500).end();
          return;
        }
        received.push({
          path: req.url ?? '', raw, deliveryHeader: req.headers['marquee-delivery'] as string | undefined,
          signature: req.headers['marquee-signature'] as string | undefined, body: JSON.parse(raw),
        });
        res.writeHead(204).end();
      });
      server.listen(self.port, '127.0.0.1', () => {
        const address = server?.address();
        if (typeof address === 'object' && address) self.port = address.port;
        ok();
      });
    }),
    stop: () => new Promise<void>((ok) => {
      server?.closeAllConnections();
      server?.close(() => ok());
    }),
    /** Change ids received on a path, first occurrences in arrival order. */
    ids(path: string): string[] {
      const seen = new Set<string>();
      for (const r of received.filter((x) => x.path === path)) for (const c of r.body.changes) seen.add(c.id);
      return [...seen];
    },
  };
  return self;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhooks (e2e)', function () {
  this.timeout(600_000);
  let catalog: CrawledCatalog;
  let env: NodeJS.ProcessEnv;
  const hooks = receiver();
  const workers: DeliveryWorker[] = [];

  function worker(options: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
    const w = createDeliveryWorker({
      readStore: catalog.adapters.readStore, clock: systemClock, encode: (url) => catalog.linkTokens.encode(url),
      logger: { info: () => {}, warn: () => {} }, intervalMs: 50, backoffBaseMs: 200, backoffMaxMs: 1000, holder: 'worker-a', ...options,
    });
    workers.push(w);
    w.start();
    return w;
  }

  before(async () => {
    catalog = await crawledCatalog({ titles: 600, countries: ['US'], days: 2 });
    env = { ...process.env, DATA_DIR: catalog.dataDir, LOG_LEVEL: 'warn', KAFKA_BROKERS: '', MONGODB_URL: '', OPENSEARCH_URL: '', EVENTSTORE_URL: '', RELEASES_S3_URL: '' };
    await hooks.start();
  });

  after(async () => {
    for (const w of workers) await w.stop();
    await hooks.stop();
    await catalog?.close();
  });

  it('delivers signed batches in feed order, and after the receiver was down a minute every missed change, in order', async () => {
    // From the feed's first change: these tests deliver the crawl's history (a new webhook's default is from now on).
    const created = await marquee(['webhooks', 'create', '--url', `http://127.0.0.1:${hooks.port}/all`, '--country', 'us', '--since', '0000000000000000'], env);
    assert.equal(created.code, 0, created.stderr);
    const id = /^id: (wh_[0-9a-f]+)$/m.exec(created.stdout)?.[1] as string;
    const secret = /^secret: (whsec_[0-9a-f]+)$/m.exec(created.stdout)?.[1] as string;
    assert.ok(id && secret, created.stdout);
    const filtered = await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/updates`, country: 'US', types: ['updated', 'removed'], since: null }, systemClock);

    worker();
    const feed = await followFeed(catalog, 'US', null);
    await until('the receiver has the whole feed', () => hooks.ids('/all').length === feed.changes.length);
    assert.deepEqual(hooks.ids('/all'), feed.changes.map((c) => c.id));

    for (const r of hooks.received) {
      assert.ok(r.body.changes.length >= 1 && r.body.changes.length <= 100);
      assert.equal(r.deliveryHeader, r.body.delivery_id);
      const hookSecret = r.path === '/all' ? secret : filtered.secret;
      assert.equal(verifySignature(hookSecret, r.signature, r.raw, { toleranceSeconds: 300 }), true, 'signed with the secret');
      assert.equal(verifySignature(`${hookSecret}x`, r.signature, r.raw), false, 'a wrong secret does not verify');
      assert.equal(verifySignature(hookSecret, r.signature, `${r.raw} `), false, 'a changed body does not verify');
    }
    assert.equal(new Set(hooks.received.filter((r) => r.path === '/all').map((r) => r.body.delivery_id)).size, hooks.received.filter((r) => r.path === '/all').length);

    // The receiver goes away for a minute; a crawl day brings new changes it must not miss.
    await hooks.stop();
    const stoppedAt = Date.now();
    const before = hooks.ids('/all').length;
    await catalog.crawlDay(2);
    const later = await followFeed(catalog, 'US', feed.cursor);
    assert.ok(later.changes.length > 0, 'the crawl day changed something');
    await until('attempts fail while the receiver is down', async () => {
      const [latest] = await listDeliveries(catalog.adapters.readStore, id, 1);
      return (latest?.attempts.filter((a) => a.status === null).length ?? 0) >= 3;
    });
    await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() - stoppedAt))));
    assert.equal(hooks.ids('/all').length, before);
    await hooks.start();
    const all = [...feed.changes, ...later.changes].map((c) => c.id);
    await until('the receiver has every missed change', () => hooks.ids('/all').length === all.length);
    assert.deepEqual(hooks.ids('/all'), all, 'every change once, in feed order');
    const updates = (await followFeed(catalog, 'US', null, '&type=updated,removed')).changes.map((c) => c.id);
    assert.ok(updates.length > 0);
    await until('the filtered webhook has its changes', () => hooks.ids('/updates').length === updates.length);
    assert.deepEqual(hooks.ids('/updates'), updates);

    const log = await marquee(['webhooks', 'deliveries', id, '--limit', '100'], env);
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, /delivered/);
    assert.match(log.stdout, /status - +\d+ ms +ECONNREFUSED/);
    assert.match(log.stdout, /status 204 +\d+ ms/);
    const deliveries = await listDeliveries(catalog.adapters.readStore, id, 1000);
    assert.ok(deliveries.every((d) => d.state === 'delivered'));
    assert.ok(deliveries.some((d) => d.attempts.length > 3 && d.attempts.at(-1)?.status === 204));

    // Replay from a cursor in the middle: everything after it arrives again, in order.
    const middle = await followFeed(catalog, 'US', null, '', 1000);
    const cursor = middle.cursors[0] as string;
    const afterCursor = (await followFeed(catalog, 'US', cursor)).changes.map((c) => c.id);
    const count = hooks.received.length;
    const replayed = await marquee(['webhooks', 'replay', id, '--since', cursor], env);
    assert.equal(replayed.code, 0, replayed.stderr);
    const again = () => {
      const seen: string[] = [];
      for (const r of hooks.received.slice(count).filter((x) => x.path === '/all')) seen.push(...r.body.changes.map((c) => c.id));
      return seen;
    };
    await until('the replay is delivered', () => again().length >= afterCursor.length);
    assert.deepEqual(again(), afterCursor);
    const bad = await marquee(['webhooks', 'replay', id, '--since', 'bogus'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not a cursor/);
    // A cursor past the feed's end would silence the webhook until the feed got there.
    const ahead = await marquee(['webhooks', 'replay', id, '--since', '9999999999999999'], env);
    assert.equal(ahead.code, 1);
    assert.match(ahead.stderr, /^marquee: --since 9999999999999999 is past the end of the change feed \(\d{16}\)/m);
    const extra = await marquee(['webhooks', 'replay', id, '--since', cursor, 'wh_other'], env);
    assert.equal(extra.code, 1);
    assert.match(extra.stderr, /^marquee: webhooks replay needs the webhook id and --since CURSOR, and no other argument$/m);
    assert.deepEqual((await pendingReplays(catalog.adapters.readStore, id)).keys, [], 'no replay requested');
  });

  it('marks a delivery failed after the retry window and moves on; lists and deletes with the CLI', async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    const failing = await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/fail`, country: 'US', types: ['new'], since: null }, systemClock);
    worker({ retryForMs: 1200, backoffBaseMs: 100, backoffMaxMs: 200 });
    await until('the first delivery failed for good and a second one is under way', async () => {
      const log = await listDeliveries(catalog.adapters.readStore, failing.id, 10);
      return log.length >= 2 && log.at(-1)?.state === 'failed';
    });
    const [first] = (await listDeliveries(catalog.adapters.readStore, failing.id, 100)).reverse();
    assert.ok((first?.attempts.length ?? 0) >= 3, 'retried before failing');
    assert.ok(first?.attempts.every((a) => a.status === 500 && a.latencyMs >= 0));

    const listed = await marquee(['webhooks', 'list'], env);
    assert.match(listed.stdout, new RegExp(`${failing.id}  US  http://127.0.0.1:${hooks.port}/fail  types=new`));
    const typo = await marquee(['webhooks', 'deliveries', failing.id, '--limit', 'ten'], env);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /^marquee: --limit takes a non-negative integer, got "ten"$/m);
    const deleted = await marquee(['webhooks', 'delete', failing.id], env);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(await listWebhooks(catalog.adapters.readStore), []);
  });

  it('counts a 2xx answer that never ends as delivered, reading at most 64 KiB of it and hanging up', async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    // A receiver that acknowledges with 200 and then streams its answer until the caller hangs up.
    let hangUps = 0;
    let sent = 0;
    let answers = 0;
    const endless = createServer((req, res) => {
      answers += 1;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 120);
      const pump = () => {
        while (!res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) break;
        }
      };
      res.on('drain', pump);
      res.on('close', () => (hangUps += 1));
      pump();
    });
    await new Promise<void>((ok) => endless.listen(0, '127.0.0.1', ok));
    const { port } = endless.address() as { port: number };
    try {
      const hook = await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${port}/endless`, country: 'US', types: ['new'], since: null }, systemClock);
      const timeoutMs = 3000;
      worker({ timeoutMs });
      // Before the fix each attempt read until the timeout and was logged as a failure (no status).
      await until('two deliveries are delivered', async () => (await listDeliveries(catalog.adapters.readStore, hook.id, 10)).filter((d) => d.state === 'delivered').length >= 2, 30_000);
      const delivered = (await listDeliveries(catalog.adapters.readStore, hook.id, 10)).filter((d) => d.state === 'delivered');
      for (const d of delivered) {
        assert.equal(d.attempts.length, 1, JSON.stringify(d.attempts));
        assert.equal(d.attempts[0]?.status, 200);
        assert.ok((d.attempts[0]?.latencyMs ?? timeoutMs) < timeoutMs, `answered in ${d.attempts[0]?.latencyMs} ms`);
      }
      assert.ok(hangUps >= 2, 'the worker hung up on each endless answer');
      // What the kernel's socket buffers took before the hang-up (a few MB), not the gigabytes
      // the whole answer held in memory took by the timeout (4.5 GB of RSS in 10 s on loopback).
      assert.ok(sent < answers * 32 * 1024 * 1024, `${Math.round(sent / 1e6)} MB streamed for ${answers} answers`);
      for (const w of workers.splice(0)) await w.stop();
      await deleteWebhook(catalog.adapters.readStore, hook.id);
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((ok) => endless.close(() => ok()));
    }
  });

  it('keeps delivering to other webhooks while one receiver takes seconds to answer', async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    let slowAnswers = 0;
    const slow = createServer((req, res) => {
      req.resume();
      setTimeout(() => {
        slowAnswers += 1;
        res.writeHead(204).end();
      }, 2500);
    });
    await new Promise<void>((ok) => slow.listen(0, '127.0.0.1', ok));
    const { port } = slow.address() as { port: number };
    try {
      await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${port}/slow`, country: 'US', since: null }, systemClock);
      await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/beside-slow`, country: 'US', since: null }, systemClock);
      const feed = await followFeed(catalog, 'US', null);
      assert.ok(feed.changes.length > 400, `${feed.changes.length} changes: more than four deliveries`);
      worker({ timeoutMs: 10_000 });
      // Looked at one after the other, the fast webhook got one delivery per 2.5 s answer of the slow one.
      await until('the fast receiver has the whole feed', () => hooks.ids('/beside-slow').length === feed.changes.length, 20_000);
      assert.ok(slowAnswers <= 2, `the slow receiver answered ${slowAnswers} times meanwhile`);
      for (const w of workers.splice(0)) await w.stop();
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((ok) => slow.close(() => ok()));
      for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    }
  });

  it('gives every webhook its turn when there are more webhooks than steps at once', async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/turn-a`, country: 'US', since: null }, systemClock);
    await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/turn-b`, country: 'US', since: null }, systemClock);
    const feed = await followFeed(catalog, 'US', null);
    // One step at a time, as 16 at a time with 17 webhooks: each look started from the top of
    // the list, so the first webhook took the one slot every time and the second never had it.
    worker({ concurrency: 1 });
    await until('both receivers have the whole feed', () => hooks.ids('/turn-a').length === feed.changes.length && hooks.ids('/turn-b').length === feed.changes.length, 30_000);
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
  });

  it('keeps the newest deliveries of each log; deleting a webhook removes its log, state, lease and replays', async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    const hook = await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/trimmed`, country: 'US', since: null }, systemClock);
    const feed = await followFeed(catalog, 'US', null);
    const expected = Math.ceil(feed.changes.length / DELIVERY_MAX_CHANGES);
    assert.ok(expected > 3, `the feed takes ${expected} deliveries`);
    worker({ deliveriesKeep: 3 });
    await until('the whole feed delivered', () => hooks.ids('/trimmed').length === feed.changes.length, 30_000);
    await until('the last delivery recorded', async () => (await webhookState(catalog.adapters.readStore, hook.id)).pending === null);
    for (const w of workers.splice(0)) await w.stop();
    const log = await listDeliveries(catalog.adapters.readStore, hook.id, 1000);
    const { deliveries } = await webhookState(catalog.adapters.readStore, hook.id);
    assert.ok(deliveries >= expected, `${deliveries} deliveries`);
    assert.deepEqual(log.map((d) => [d.sequence, d.state]), [0, 1, 2].map((k) => [deliveries - k, 'delivered']));

    // The lease's epochs the worker left, and a replay asked for since.
    assert.ok((await catalog.adapters.readStore.count(WEBHOOK_LEASES_COLLECTION, { prefix: `${hook.id}:` })) > 0);
    await requestReplay(catalog.adapters.readStore, hook.id, null, systemClock);
    await deleteWebhook(catalog.adapters.readStore, hook.id);
    assert.equal(await catalog.adapters.readStore.count(WEBHOOK_DELIVERIES_COLLECTION, { prefix: `${hook.id}:` }), 0);
    assert.equal(await catalog.adapters.readStore.get(WEBHOOK_STATE_COLLECTION, hook.id), null);
    assert.equal(await catalog.adapters.readStore.count(WEBHOOK_LEASES_COLLECTION, { prefix: `${hook.id}:` }), 0);
    assert.equal(await catalog.adapters.readStore.count(WEBHOOK_REPLAYS_COLLECTION, { prefix: `${hook.id}:` }), 0);
  });

  it('has exactly one worker deliver a webhook when two run', async () => {
    for (const w of workers.splice(0)) await w.stop();
    const hook = await createWebhook(catalog.adapters.readStore, { url: `http://127.0.0.1:${hooks.port}/pair`, country: 'US', since: null }, systemClock);
    worker({ holder: 'worker-a' });
    worker({ holder: 'worker-b' });
    const feed = await followFeed(catalog, 'US', null);
    await until('the receiver has the feed', () => hooks.ids('/pair').length === feed.changes.length);
    const holders = new Set((await listDeliveries(catalog.adapters.readStore, hook.id, 1000)).flatMap((d) => d.attempts.map((a) => a.holder)));
    assert.equal(holders.size, 1, [...holders].join(','));
    assert.equal(hooks.received.filter((r) => r.path === '/pair').length, (await listDeliveries(catalog.adapters.readStore, hook.id, 1000)).length);
  });

  it('takes a country or provider the catalog does not know, and says so; list and delete refuse arguments they do not take', async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of await listWebhooks(catalog.adapters.readStore)) await deleteWebhook(catalog.adapters.readStore, h.id);
    const providers = await catalog.adapters.readStore.get<ProvidersDoc>(await resolveCollection(catalog.adapters.readStore, providersProjection), 'US');
    const known = providers?.doc.providers.map((p) => p.id) ?? [];
    assert.ok(known.length >= 2, 'the catalog has providers in US');
    const url = `http://127.0.0.1:${hooks.port}/notes`;

    const uk = await marquee(['webhooks', 'create', '--url', url, '--country', 'uk'], env);
    assert.equal(uk.code, 0, uk.stderr);
    assert.match(uk.stderr, /^note: the catalog has no offers in UK yet: this webhook delivers once changes there are ingested/m);
    const typo = await marquee(['webhooks', 'create', '--url', url, '--country', 'US', '--provider', `${known[0]},no-such-provider`], env);
    assert.equal(typo.code, 0, typo.stderr);
    // Only the unknown one is named (the known one given first is not).
    assert.match(typo.stderr, /^note: no provider no-such-provider in US yet: its changes are delivered once it appears/m);
    const fine = await marquee(['webhooks', 'create', '--url', url, '--country', 'US', '--provider', known.slice(0, 2).join(',')], env);
    assert.equal(fine.code, 0, fine.stderr);
    assert.equal(fine.stderr.includes('note:'), false, fine.stderr);
    assert.equal((await listWebhooks(catalog.adapters.readStore)).length, 3, 'all three were created');

    // What could never deliver is refused, and nothing is created: fetch refuses credentials in
    // a URL, and a malformed media id matches no change.
    for (const [args, message] of [
      [['--url', `http://hook:s3cret@127.0.0.1:${hooks.port}/creds`, '--country', 'US'], /^marquee: --url must not carry a user or password/m],
      [['--url', url, '--country', 'US', '--media', 'mv00000001,mv_1'], /^marquee: --media takes media ids such as mv00001234 or tv00000567, got "mv_1"$/m],
      [['--url', `${url}?${'x'.repeat(3000)}`, '--country', 'US'], /^marquee: --url is 30\d\d characters long; at most 2048$/m],
    ] as const) {
      const refused = await marquee(['webhooks', 'create', ...args], env);
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(refused.stderr, message);
      assert.doesNotMatch(refused.stderr + refused.stdout, /s3cret/, 'the password is not echoed');
    }
    assert.equal((await listWebhooks(catalog.adapters.readStore)).length, 3, 'none of them was created');

    const ids = (await listWebhooks(catalog.adapters.readStore)).map((h) => h.id);
    const extra = await marquee(['webhooks', 'list', '--json'], env);
    assert.equal(extra.code, 1);
    assert.match(extra.stderr, /^marquee: Unknown option '--json'/m);
    const two = await marquee(['webhooks', 'delete', ids[0] as string, ids[1] as string], env);
    assert.equal(two.code, 1);
    assert.match(two.stderr, /^marquee: webhooks delete needs the webhook id, and nothing else$/m);
    assert.equal((await listWebhooks(catalog.adapters.readStore)).length, 3, 'nothing deleted');
    for (const id of ids) await deleteWebhook(catalog.adapters.readStore, id);
  });
  it('delivers a new webhook the changes from its creation on, not the history before it', async () => {
    for (const w of workers.splice(0)) await w.stop();
    const before = await followFeed(catalog, 'US', null);
    assert.ok(before.changes.length > 0, 'the crawl has a history');
    const created = await marquee(['webhooks', 'create', '--url', `http://127.0.0.1:${hooks.port}/from-now`, '--country', 'US'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^it delivers the changes from now on \(--since 0000000000000000 would deliver the whole history, or replay it later\)$/m);
    const listed = await marquee(['webhooks', 'list'], env);
    assert.match(listed.stdout, /\/from-now {2}all changes {2}deliveries=0 {2}cursor=\d{16} \(at the worker's next look\)$/m);
    assert.doesNotMatch(listed.stdout, /\/from-now .*cursor=start/);
    worker();
    await catalog.crawlDay(3);
    const after = (await followFeed(catalog, 'US', before.cursor)).changes.map((c) => c.id);
    assert.ok(after.length > 0, 'the new day changed something');
    await until('the new day is delivered', () => hooks.ids('/from-now').length >= after.length);
    assert.deepEqual(hooks.ids('/from-now'), after, 'exactly the changes after its creation, in order');
  });
});
