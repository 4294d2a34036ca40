/**
 * The EventStore behaviour suite on EventStoreDB, wherever EVENTSTORE_URL points at one (for
 * example infra/eventstoredb/docker-compose.yml: EVENTSTORE_URL='esdb://127.0.0.1:2113?tls=false').
 *
 * No registry reachable here ships EventStoreDB, so CI cannot start one: an unset EVENTSTORE_URL
 * is a skip even under REQUIRE_SERVERS=1. A set one that does not answer is a failure.
 */
import assert from 'node:assert/strict';
import { eventStoreDbEventStore } from '../../infra/eventstoredb/eventStore.ts';
import { eventStoreSuite } from './eventStore.suite.ts';
import { describeWithServer } from './requireServer.ts';

describeWithServer(
  'eventStoreDbEventStore',
  'EVENTSTORE_URL',
  (url) => {
    before(async function () {
      this.timeout(20_000);
      const store = eventStoreDbEventStore({ connectionString: url });
      try {
        await store.headPosition();
      } catch (err) {
        assert.fail(`EVENTSTORE_URL is set to ${url} but EventStoreDB does not answer there: ${(err as Error).message} (${String((err as Error).cause)})`);
      } finally {
        await store.close();
      }
    });

    // Positions are $all log offsets: increasing, not gapless (infra/eventstoredb/positions.ts).
    eventStoreSuite(
      'eventStoreDbEventStore',
      async () => {
        const store = eventStoreDbEventStore({ connectionString: url });
        return { store, spec: `esdb:${url}`, cleanup: () => store.close() };
      },
      { positions: 'increasing' },
    );
  },
  {
    requirable: false,
    skipReason: 'EVENTSTORE_URL not set: no EventStoreDB server is available from any package registry here',
  },
);
