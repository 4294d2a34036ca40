import assert from 'node:assert/strict';
import { createKafka, type KafkaLogger } from '../../infra/kafka/client.ts';

describe('the kafkajs client logs', function () {
  it('sends broker errors kafkajs retries by itself to debug, and any other error to error', function () {
    const seen: Array<[string, string | undefined]> = [];
    const logger: KafkaLogger = {
      debug: (_o, msg) => seen.push(['debug', msg]),
      info: (_o, msg) => seen.push(['info', msg]),
      warn: (_o, msg) => seen.push(['warn', msg]),
      error: (_o, msg) => seen.push(['error', msg]),
    };
    // No broker is contacted: only the client's logger is used.
    const log = createKafka({ brokers: ['127.0.0.1:9'], logger }).logger();
    log.error('Response ListOffsets(key: 2, version: 3)', { error: 'This server is not the leader for that topic-partition' });
    log.error('Response InitProducerId(key: 22, version: 1)', { error: "The coordinator is loading and hence can't process requests for this group" });
    log.error('Response Produce(key: 0, version: 7)', { error: 'The request included a message larger than the max message size the server will accept' });
    log.error('Connection error: connect ECONNREFUSED', { error: 'connect ECONNREFUSED 127.0.0.1:9' });
    log.warn('Crash: group rebalancing', {});
    assert.deepEqual(seen, [
      ['debug', 'Response ListOffsets(key: 2, version: 3)'],
      ['debug', 'Response InitProducerId(key: 22, version: 1)'],
      ['error', 'Response Produce(key: 0, version: 7)'],
      ['error', 'Connection error: connect ECONNREFUSED'],
      ['warn', 'Crash: group rebalancing'],
    ]);
  });
});
