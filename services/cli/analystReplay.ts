/**
 * `marquee replay --module FILE --out FILE.ndjson`: an analyst's projection, run over the whole
 * history into NDJSON. The module is checked before anything runs, and its mistakes are said
 * with the event they were made on; what it folds is kept in a scratch collection of the read
 * store (a history of any size fits), written out page by page, and dropped.
 */
import { createWriteStream, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { AppError, isAppError } from '../../contracts/errors.ts';
import { EVENT_TYPES, type RecordedEvent } from '../../contracts/events.ts';
import type { Projection } from '../../contracts/projection.ts';
import { dropParked } from '../../projections/parking.ts';
import { catchUp } from '../../projections/runner.ts';
import type { Adapters } from '../shared/adapters.ts';
import { UsageError } from './args.ts';
import { progress } from './progress.ts';

export async function loadProjectionModule(file: string): Promise<Projection<unknown>> {
  const mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  const candidate = (mod.default ?? mod.projection) as Partial<Projection<unknown>> | undefined;
  const problems: string[] = [];
  if (!candidate || typeof candidate !== 'object') problems.push('no default export (or export named `projection`)');
  else {
    if (typeof candidate.name !== 'string') problems.push('`name` must be a string');
    if (typeof candidate.version !== 'number') problems.push('`version` must be a number');
    if (!Array.isArray(candidate.canHandle)) problems.push('`canHandle` must be an array of event types');
    else {
      // A misspelt type is folded by nothing: the replay would write no document and say nothing.
      const unknown = candidate.canHandle.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
      if (unknown.length > 0) problems.push(`\`canHandle\` names ${unknown.map((t) => JSON.stringify(t)).join(', ')}, which no event is; the event types are ${EVENT_TYPES.join(', ')}`);
    }
    if (typeof candidate.documentId !== 'function') problems.push('`documentId(event)` must be a function');
    if (typeof candidate.evolve !== 'function') problems.push('`evolve(document, event)` must be a function');
  }
  if (problems.length > 0) throw new UsageError(`${file} is not a projection: ${problems.join('; ')}`);
  return guardedProjection(candidate as Projection<unknown>, resolve(file));
}

/**
 * An analyst's projection whose mistakes name the event they were made on: an exception of
 * `documentId` or `evolve` (with the line of the module it came from), a document id that is no
 * string, an `undefined` document. Unguarded, the first printed a stack through the runner and
 * no event, the second failed inside LMDB ("The value of "size" is out of range").
 */
function guardedProjection(projection: Projection<unknown>, file: string): Projection<unknown> {
  const where = (event: RecordedEvent) => `${event.type} at position ${event.position} (stream ${event.streamId}, revision ${event.revision})`;
  const fail = (what: string, event: RecordedEvent, err?: unknown): never => {
    const frame = err instanceof Error ? err.stack?.split('\n').find((line) => line.includes(file))?.trim() : undefined;
    const reason = err === undefined ? '' : `: ${err instanceof Error ? err.message : String(err)}${frame ? ` (${frame})` : ''}`;
    throw new AppError('invalid_parameter', `replay: the projection's ${what} on ${where(event)}${reason}`, err === undefined ? {} : { cause: err });
  };
  return {
    name: projection.name,
    version: projection.version,
    canHandle: projection.canHandle,
    documentId(event) {
      let id: unknown;
      try {
        id = projection.documentId(event);
      } catch (err) {
        return fail('documentId threw', event, err);
      }
      if (id !== null && typeof id !== 'string') fail(`documentId returned ${JSON.stringify(id) ?? String(id)} (${typeof id}), not a string or null,`, event);
      return id as string | null;
    },
    evolve(document, event) {
      let next: unknown;
      try {
        next = projection.evolve(document, event);
      } catch (err) {
        return fail('evolve threw', event, err);
      }
      if (next === undefined) fail('evolve returned undefined (return the document, or null to delete it)', event);
      return next;
    },
    ...(projection.evolveAll === undefined
      ? {}
      : {
          evolveAll(document: unknown, events: readonly RecordedEvent[]) {
            let next: unknown;
            try {
              next = projection.evolveAll?.(document, events);
            } catch (err) {
              return fail(`evolveAll threw on ${events.length} events, the first`, events[0] as RecordedEvent, err);
            }
            if (next === undefined) fail(`evolveAll returned undefined on ${events.length} events, the first`, events[0] as RecordedEvent);
            return next;
          },
        }),
    ...(projection.layout === undefined ? {} : { layout: projection.layout.bind(projection) }),
    ...(projection.onePerEvent === undefined ? {} : { onePerEvent: projection.onePerEvent }),
  };
}

/** One line of an analyst's output; a document JSON cannot hold (a BigInt) is named, not taken for a failed write. */
function ndjsonLine(id: string, position: number, document: unknown): string {
  try {
    return JSON.stringify({ id, position, document });
  } catch (err) {
    throw new AppError('invalid_parameter', `replay: the projection's document ${id} (position ${position}) cannot be written as JSON: ${(err as Error).message}`);
  }
}

export async function replayToFile(adapters: Adapters, projection: Projection<unknown>, out: string): Promise<number> {
  const { readStore, eventStore } = adapters;
  // Documents are folded in the read store, not in memory, so a history of any size fits.
  const collection = `analyst_${projection.name.replace(/[^A-Za-z0-9_]/g, '_')}_${Date.now().toString(36)}`;
  const bar = progress(`replay ${projection.name}`, await eventStore.headPosition(), 'events');
  try {
    await catchUp({
      projection, eventStore, readStore, collection, batchSize: 5000, onProgress: (p, h) => bar.update(p, h),
      // A document the store refuses (a circular one) stops the replay: parked, as a live read
      // model's would be, every one was, the replay took a hundred times as long and wrote nothing.
      onParked([first]) {
        const event = first?.events[0];
        if (first === undefined || event === undefined) return;
        throw new AppError('invalid_parameter', `replay: the projection's document ${first.documentId}, folded up to ${event.type} at position ${event.position}, cannot be stored: ${event.reason}`);
      },
    });
    bar.stop();
    let written = 0;
    async function* pages(): AsyncGenerator<string> {
      let after: string | undefined;
      for (;;) {
        const page = await readStore.scan<unknown>(collection, { ...(after === undefined ? {} : { start: `${after}\u0000` }), limit: 5000 });
        yield page.map((stored) => `${ndjsonLine(stored.key, stored.position, stored.doc)}\n`).join('');
        written += page.length;
        if (page.length < 5000) return;
        after = page[page.length - 1]?.key;
      }
    }
    // pipeline() waits for the bytes to be written and fails with the file's error (a full disk),
    // said in one line below; written by hand, that error reached the person as a bare object.
    try {
      await pipeline(Readable.from(pages()), createWriteStream(out));
    } catch (err) {
      // What was written is part of the documents: not a file to be taken for the answer. Only
      // a regular file goes (`--out /dev/stdout` or a pipe stays).
      if (statSync(out, { throwIfNoEntry: false })?.isFile()) rmSync(out, { force: true });
      if (isAppError(err)) throw err;
      throw new AppError('unavailable', `replay: writing ${out} failed: ${(err as Error).message}`, { cause: err });
    }
    console.log(`${projection.name}: ${written} documents written to ${out}`);
    return 0;
  } finally {
    await readStore.dropCollection(collection);
    await dropParked(readStore, collection);
  }
}
