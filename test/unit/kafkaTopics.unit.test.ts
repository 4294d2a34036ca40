import assert from 'node:assert/strict';
import { OBSERVATION_TYPES, type Observation } from '../../contracts/observations.ts';
import { parseSource, sourceOf, streamKeyOf, topicNames, TOPIC_OF_TYPE } from '../../infra/kafka/topics.ts';
import { streamOf } from '../../services/ingest/route.ts';
import { OBSERVATION_SAMPLES } from '../fixtures/avro/samples.ts';

describe('Kafka topic layout and message keys', () => {
  it('keys every sample observation by the stream ingest routes it to', () => {
    for (const sample of Object.values(OBSERVATION_SAMPLES) as Observation[]) {
      assert.equal(streamKeyOf(sample), streamOf(sample), sample.type);
    }
  });

  it('keys a lower-case country by its upper-case stream, as ingest stores it', () => {
    const sample = OBSERVATION_SAMPLES.AvailabilityObserved;
    const lower = { ...sample, data: { ...sample.data, contentType: 'movie' as const, country: 'gb', sourceId: 7 } };
    assert.equal(streamKeyOf(lower), 'availability-mv00000007-GB');
  });

  it('puts every observation of a media stream on one topic, so their order is kept', () => {
    const names = topicNames('marquee.');
    assert.equal(names.of('MediaObserved'), 'marquee.observations.media');
    assert.equal(names.of('MediaTranslationObserved'), 'marquee.observations.media');
    assert.equal(names.of('SeasonsObserved'), 'marquee.observations.media');
    assert.equal(names.of('AvailabilityObserved'), 'marquee.observations.availability');
    assert.equal(names.deadLetter, 'marquee.observations.dead-letter');
    assert.deepEqual([...names.observations].sort(), [
      'marquee.observations.availability', 'marquee.observations.collection', 'marquee.observations.featured',
      'marquee.observations.genres', 'marquee.observations.media', 'marquee.observations.providers',
    ]);
    assert.deepEqual(Object.keys(TOPIC_OF_TYPE).sort(), [...OBSERVATION_TYPES].sort());
  });

  it('reads back the topic, partition and offset of a source, and nothing from another transport', () => {
    assert.deepEqual(parseSource(sourceOf('marquee.test.a.b', 3, '1234')), { topic: 'marquee.test.a.b', partition: 3, offset: '1234' });
    assert.equal(parseSource('inbox:42'), null);
  });
});
