/** The event store engine is chosen once, in the configuration, and refused without its server. */
import assert from 'node:assert/strict';
import { isAppError } from '../../contracts/errors.ts';
import { loadConfig } from '../../services/shared/config.ts';

describe('loadConfig: EVENT_STORE', () => {
  it('defaults to LMDB, or to EventStoreDB when EVENTSTORE_URL is set', () => {
    assert.equal(loadConfig({}).eventStore, 'lmdb');
    assert.equal(loadConfig({ KAFKA_BROKERS: '127.0.0.1:9092' }).eventStore, 'lmdb');
    assert.equal(loadConfig({ EVENTSTORE_URL: 'esdb://127.0.0.1:2113?tls=false' }).eventStore, 'eventstoredb');
  });

  it('selects the Kafka event log with EVENT_STORE=kafka and KAFKA_BROKERS', () => {
    const config = loadConfig({ EVENT_STORE: 'kafka', KAFKA_BROKERS: '127.0.0.1:9092' });
    assert.equal(config.eventStore, 'kafka');
    assert.deepEqual(config.kafkaBrokers, ['127.0.0.1:9092']);
  });

  it('refuses an engine without its server, and an unknown engine', () => {
    assert.throws(() => loadConfig({ EVENT_STORE: 'kafka' }), /EVENT_STORE=kafka needs KAFKA_BROKERS/);
    assert.throws(() => loadConfig({ EVENT_STORE: 'eventstoredb' }), /needs EVENTSTORE_URL/);
    assert.throws(() => loadConfig({ EVENT_STORE: 'postgres' }), /EVENT_STORE must be lmdb, kafka or eventstoredb/);
  });
});

describe('loadConfig: INGEST_GROUP', () => {
  it('defaults to the topic prefix + ingest, so deployments under different prefixes never share a consumer group', () => {
    assert.equal(loadConfig({}).ingestGroup, 'marquee.ingest');
    assert.equal(loadConfig({ KAFKA_TOPIC_PREFIX: 'staging.' }).ingestGroup, 'staging.ingest');
    assert.equal(loadConfig({ KAFKA_TOPIC_PREFIX: 'staging.', INGEST_GROUP: 'mine' }).ingestGroup, 'mine');
  });
});

describe('loadConfig: OPS_PORT', () => {
  it('is off unless set, and refuses what is not a port', () => {
    assert.equal(loadConfig({}).opsPort, null);
    assert.equal(loadConfig({ OPS_PORT: ' 9464 ' }).opsPort, 9464);
    for (const bad of ['0', '65536', 'http', '-1', '9464.5']) assert.throws(() => loadConfig({ OPS_PORT: bad }), /OPS_PORT/, bad);
  });
});

describe('loadConfig: a setting that cannot be used', () => {
  it('is refused at start as one line naming the variable (an AppError, which main.ts prints without a stack)', () => {
    for (const [env, message] of [
      [{ PORT: 'abc' }, /^PORT must be a non-negative integer, got "abc"$/],
      [{ PORT: '99999' }, /^PORT must be a port between 1 and 65535, got "99999"$/],
      [{ EVENT_STORE: 'kafka' }, /^EVENT_STORE=kafka needs KAFKA_BROKERS$/],
      [{ RELEASES_S3_URL: 'http://s3.example', RELEASES_S3_ACCESS_KEY: 'a' }, /must be set together/],
      [{ DOWNLOAD_SIGNING_KEY: 'secret' }, /^DOWNLOAD_SIGNING_KEY is too short \(6 characters\): it signs download URLs, so it must be at least 32; make one with `openssl rand -hex 32`$/],
    ] as const) {
      assert.throws(() => loadConfig(env), (err: unknown) => isAppError(err) && message.test(err.message), JSON.stringify(env));
    }
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({}).port, 8080);
    assert.equal(loadConfig({ DOWNLOAD_SIGNING_KEY: 'k'.repeat(32) }).downloadSigningKey, 'k'.repeat(32));
  });
});

describe('loadConfig: TRUSTED_PROXIES', () => {
  it('ignores X-Forwarded-For unless set, and takes a count of proxies', () => {
    assert.equal(loadConfig({}).trustedProxies, 0);
    assert.equal(loadConfig({ TRUSTED_PROXIES: '2' }).trustedProxies, 2);
    for (const bad of ['true', '-1', '1.5']) assert.throws(() => loadConfig({ TRUSTED_PROXIES: bad }), /TRUSTED_PROXIES must be a non-negative integer/, bad);
  });
});

describe('loadConfig: INBOX_RETENTION_HOURS', () => {
  it("keeps the local inbox 7 days, as Kafka's default, and refuses a retention of nothing", () => {
    assert.equal(loadConfig({}).inboxRetentionHours, 168);
    assert.equal(loadConfig({ INBOX_RETENTION_HOURS: '24' }).inboxRetentionHours, 24);
    assert.throws(() => loadConfig({ INBOX_RETENTION_HOURS: '0' }), /INBOX_RETENTION_HOURS must be at least 1, got 0/);
    assert.throws(() => loadConfig({ INBOX_RETENTION_HOURS: 'week' }), /INBOX_RETENTION_HOURS must be a non-negative integer/);
  });
});
