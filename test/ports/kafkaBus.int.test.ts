import { kafkaObservationBus } from '../../infra/kafka/observationBus.ts';
import { describeKafka, uniquePrefix } from '../fixtures/kafka/support.ts';
import { observationBusSuite } from './observationBus.suite.ts';

describeKafka('Kafka observation bus', (brokers) => {
  // Every test gets its own topics (a unique prefix); the suite's group names are unique too.
  observationBusSuite('Kafka', async () => {
    const bus = kafkaObservationBus({ brokers, topicPrefix: uniquePrefix(), partitions: 4, maxWaitMs: 100, idleCheckMs: 100 });
    return {
      bus,
      publishRaw: async (bytes) => {
        await bus.publishRaw([{ value: bytes }]);
      },
      cleanup: async () => {
        await bus.deleteTopics().catch(() => {});
        await bus.close();
      },
    };
  });
});
