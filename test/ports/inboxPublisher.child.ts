/**
 * Child process of inbox.int.test.ts: publishes `count` observations to the inbox of a data
 * directory in batches of 10, to show several processes can publish to one inbox at once.
 * Usage: node --import tsx inboxPublisher.child.ts <dataDir> <key> <count>
 */
import { lmdbInbox } from '../../infra/lmdb/inbox.ts';
import { availability } from './observationBus.suite.ts';

const [dataDir, key, count] = process.argv.slice(2);
if (!dataDir || !key || !count) throw new Error('usage: inboxPublisher.child.ts <dataDir> <key> <count>');
const bus = lmdbInbox({ dataDir });
for (let n = 0; n < Number(count); n += 10) {
  await bus.publish(Array.from({ length: Math.min(10, Number(count) - n) }, (_, i) => availability(n + i, Number(key))));
}
await bus.close();
