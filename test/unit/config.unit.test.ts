/** The event store engine is chosen once, in the configuration, and refused without its server. */
import assert from 'node:assert/strict';
import { isAppError } from '../../contracts/errors.ts';
import { loadConfig, redactUrl } from '../../services/shared/config.ts';

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

describe('loadConfig: server URLs and names, brokers, the public base URL, the log level and the sample start', () => {
  it('refuses a value of the wrong shape at start, naming the variable, with any password hidden', () => {
    for (const [env, message] of [
      [{ MONGODB_URL: 'garbage' }, /^MONGODB_URL must start with mongodb:\/\/ or mongodb\+srv:\/\/ and name a host, such as mongodb:\/\/127.0.0.1:27017; got "garbage"$/],
      [{ MONGODB_URL: 'mongodb://' }, /^MONGODB_URL must start with/],
      [{ MONGODB_URL: 'mongodb://admin:hunter2@' }, /got "mongodb:\/\/admin:\*\*\*@"$/],
      [{ EVENTSTORE_URL: 'http://127.0.0.1:2113' }, /^EVENTSTORE_URL must start with esdb:\/\/ or esdb\+discover:\/\/ and name a host/],
      [{ OPENSEARCH_URL: 'ftp://x' }, /^OPENSEARCH_URL must start with http:\/\/ or https:\/\/ and name a host, such as http:\/\/127.0.0.1:9200; got "ftp:\/\/x"$/],
      [{ OPENSEARCH_URL: 'http://opensearch :9200' }, /^OPENSEARCH_URL must start with/],
      [{ REDIS_URL: '127.0.0.1:6379' }, /^REDIS_URL must start with redis:\/\/ or rediss:\/\//],
      [{ RELEASES_S3_URL: 's3.amazonaws.com' }, /^RELEASES_S3_URL must start with http:\/\/ or https:\/\//],
      [{ KAFKA_BROKERS: '::::' }, /^KAFKA_BROKERS takes host:port pairs separated by commas, such as 127.0.0.1:9092; got "::::"$/],
      [{ KAFKA_BROKERS: '127.0.0.1:9092,kafka2' }, /got "kafka2"$/],
      [{ KAFKA_BROKERS: 'kafka:99999' }, /got "kafka:99999"$/],
      [{ PUBLIC_BASE_URL: 'api.example.com' }, /^PUBLIC_BASE_URL must be an http:\/\/ or https:\/\/ URL, got "api.example.com"$/],
      [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL takes one of fatal, error, warn, info, debug, trace, silent; got "loud"$/],
      [{ SAMPLE_START_DATE: 'garbage' }, /^SAMPLE_START_DATE takes a date YYYY-MM-DD, got "garbage"$/],
      [{ SAMPLE_START_DATE: '2026-02-30' }, /^SAMPLE_START_DATE takes a date/],
      [{ SAMPLE_SEED: '99999999999999999999' }, /^SAMPLE_SEED must be a non-negative integer, got "99999999999999999999"$/],
      [{ API_WORKERS: '0' }, /^API_WORKERS must be at least 1, got 0$/],
      [{ API_WORKERS: '500' }, /^API_WORKERS must be at most \d+ \(four per core of this machine's \d+; `auto` is one per core\), got 500$/],
      [{ IMAGE_BASE: 'not-a-url' }, /^IMAGE_BASE must be an http:\/\/ or https:\/\/ URL, got "not-a-url"$/],
      [{ SAMPLE_COUNTRIES: 'usa' }, /^SAMPLE_COUNTRIES takes two-letter country codes separated by commas, such as US,DE; got "usa"$/],
      [{ SAMPLE_COUNTRIES: ' , ' }, /^SAMPLE_COUNTRIES takes two-letter country codes/],
      [{ SAMPLE_DAYS: '0' }, /^SAMPLE_DAYS must be at least 1, got 0 \(a sample of no day holds nothing\)$/],
      [{ SAMPLE_DAYS: '1000000000' }, /^SAMPLE_DAYS must be at most 3660, got 1000000000$/],
      [{ SAMPLE_START_DATE: '2999-01-01' }, /^SAMPLE_START_DATE 2999-01-01 puts the sample's last day \(2999-01-07, 7 days: SAMPLE_DAYS\) after today \(\d{4}-\d\d-\d\d, UTC\); the sample's days must have come$/],
      [{ SAMPLE_START_DATE: new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10), SAMPLE_DAYS: '7' }, /puts the sample's last day/],
      [{ RELEASES_KEEP: '0' }, /^RELEASES_KEEP must be at least 1, got 0 \(0 would prune each release the moment it is published\)$/],
      [{ RATE_LIMIT_PER_MINUTE: '0' }, /^RATE_LIMIT_PER_MINUTE must be at least 1, got 0 \(0 would refuse every request\)$/],
      [{ GO_RATE_LIMIT_PER_MINUTE: '0' }, /^GO_RATE_LIMIT_PER_MINUTE must be at least 1/],
      [{ REPLAY_DROP_GRACE_MS: '99999999999999' }, /^REPLAY_DROP_GRACE_MS must be at most 2147483647, got 99999999999999$/],
      [{ SAMPLE_TITLES: '0' }, /^SAMPLE_TITLES must be at least 1, got 0$/],
      [{ SAMPLE_TITLES: '5000001' }, /^SAMPLE_TITLES must be at most 5000000/],
      [{ MONGODB_DB: 'my.db' }, /^MONGODB_DB is a MongoDB database name: at most 63 characters, none of .*; got "my.db"$/],
      [{ MONGODB_DB: 'd'.repeat(64) }, /^MONGODB_DB is a MongoDB database name/],
      [{ KAFKA_TOPIC_PREFIX: 'my/prefix.' }, /^KAFKA_TOPIC_PREFIX takes letters, digits, ".", "_" and "-" \(at most 200\), as Kafka topic names do; got "my\/prefix."$/],
      [{ OPENSEARCH_INDEX_PREFIX: 'Marquee_Search' }, /^OPENSEARCH_INDEX_PREFIX takes lowercase letters/],
      [{ OPENSEARCH_INDEX_PREFIX: '_hidden' }, /^OPENSEARCH_INDEX_PREFIX takes lowercase letters/],
    ] as const) {
      assert.throws(() => loadConfig(env), (err: unknown) => isAppError(err) && message.test(err.message), JSON.stringify(env));
    }
  });

  it('takes what the drivers take: several hosts, SRV and discovery schemes, credentials, IPv6 brokers', () => {
    const config = loadConfig({
      MONGODB_URL: 'mongodb://u:p@a:27017,b:27017/marquee?replicaSet=rs0',
      EVENTSTORE_URL: 'esdb+discover://cluster.example:2113?tls=true',
      OPENSEARCH_URL: 'https://admin:secret@search.example:9200',
      REDIS_URL: 'rediss://:pw@cache.example:6380/0',
      RELEASES_S3_URL: 'https://s3.amazonaws.com',
      KAFKA_BROKERS: 'kafka1:9092, [::1]:9093',
      PUBLIC_BASE_URL: 'https://api.example.com/marquee',
      LOG_LEVEL: 'debug',
    });
    assert.equal(config.mongodbUrl, 'mongodb://u:p@a:27017,b:27017/marquee?replicaSet=rs0');
    assert.equal(config.eventStore, 'eventstoredb');
    assert.deepEqual(config.kafkaBrokers, ['kafka1:9092', '[::1]:9093']);
    assert.equal(config.logLevel, 'debug');
    assert.equal(loadConfig({ MONGODB_URL: 'mongodb+srv://cluster0.example.net/' }).mongodbUrl, 'mongodb+srv://cluster0.example.net/');
    assert.equal(loadConfig({ LOG_LEVEL: '' }).logLevel, 'info');
    assert.equal(loadConfig({ SAMPLE_START_DATE: '2026-11-01' }).sampleStartDate, '2026-11-01');
    // Seven days whose last is today: every one has come.
    const sixDaysAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    assert.equal(loadConfig({ SAMPLE_START_DATE: sixDaysAgo, SAMPLE_DAYS: '7' }).sampleStartDate, sixDaysAgo);
    const names = loadConfig({ MONGODB_DB: 'marquee_lanes_42_x1', KAFKA_TOPIC_PREFIX: 'Staging-2.', OPENSEARCH_INDEX_PREFIX: 'marquee-deps-42-x1' });
    assert.deepEqual([names.mongodbDb, names.kafkaTopicPrefix, names.opensearchIndexPrefix], ['marquee_lanes_42_x1', 'Staging-2.', 'marquee-deps-42-x1']);
    assert.deepEqual([loadConfig({}).mongodbDb, loadConfig({}).kafkaTopicPrefix, loadConfig({}).opensearchIndexPrefix], ['marquee', 'marquee.', 'marquee-search']);
  });
});

describe('redactUrl', () => {
  it('hides the password of every connection string the drivers take, several hosts included, and leaves the rest as given', () => {
    assert.equal(redactUrl('mongodb://u:secret@a:27017,b:27017/marquee?replicaSet=rs0'), 'mongodb://u:***@a:27017,b:27017/marquee?replicaSet=rs0');
    assert.equal(redactUrl('https://admin:secret@search.example:9200'), 'https://admin:***@search.example:9200');
    assert.equal(redactUrl('rediss://:pw@cache.example:6380/0'), 'rediss://:***@cache.example:6380/0');
    assert.equal(redactUrl('http://127.0.0.1:9200'), 'http://127.0.0.1:9200');
    assert.equal(redactUrl('garbage'), 'garbage');
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
