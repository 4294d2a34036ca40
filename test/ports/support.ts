/** Helpers shared by the port behaviour suites and the runner tests. */
import { MongoClient } from 'mongodb';
import type { GenreDefined, PositionChanged } from '../../contracts/events.ts';

/** Polls `condition` until it holds; fails with `what` after `timeoutMs` (default 10 s). */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A small, valid domain event whose content is determined by `n`. */
export function genreEvent(n: number, producer = 'test'): GenreDefined {
  return {
    type: 'GenreDefined',
    data: { genre: { id: n, slug: `genre-${n}`, name: `Genre ${n}` } },
    metadata: { producer },
  };
}

/** A PositionChanged event, for projections keyed by title. */
export function positionEvent(mediaId: string, position: number | null, date = '2024-01-01'): PositionChanged {
  return {
    type: 'PositionChanged',
    data: { country: 'US', date, mediaId, kind: 'movie', position, previousPosition: null },
    metadata: { producer: 'test' },
  };
}

/** Unique names per test, so suites can share one store (e.g. a server) without clashing. */
let counter = 0;
export function uniqueName(base: string): string {
  counter += 1;
  return `${base}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** Drops the MongoDB `database` a test file used, once the file's tests are done. */
export function dropDatabaseAfterAll(url: string, database: string): void {
  after(async function () {
    this.timeout(30_000);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
    try {
      await client.db(database).dropDatabase();
    } finally {
      await client.close();
    }
  });
}
