/**
 * The shape of a projection: a pure fold of events into documents. No I/O, no clock, no driver:
 * the runner (projections/runner.ts) loads, batches, writes and checkpoints. Analysts write
 * modules of this same shape and run them with `marquee replay --module`.
 */
import type { EventType, RecordedEvent } from './events.ts';

export interface Projection<D = unknown> {
  /** Logical read-model name, e.g. `media`; the live physical collection is found by alias. */
  name: string;
  /** Bumped when the document shape or the fold changes; a new version is rebuilt beside the old. */
  version: number;
  /** Event types this projection folds; others are never routed to it. */
  canHandle: readonly EventType[];
  /** The document an event belongs to, or null when this event touches none. */
  documentId(event: RecordedEvent): string | null;
  /** `null` document in: none stored yet. `null` out: delete the document. */
  evolve(document: D | null, event: RecordedEvent): D | null;
  /**
   * Optional: the same fold as `evolve` applied to each event in turn, done at once. Equal to
   * the sequential fold by contract (projection tests check both ways); for a document many
   * events of one batch touch (a title's offers in a country: a series has one per episode),
   * where rebuilding and re-sorting it per event costs the square of its size.
   */
  evolveAll?(document: D | null, events: readonly RecordedEvent[]): D | null;
  /**
   * Optional: how a folded document is stored when reading it whole per request would cost
   * more than the answer (a chart paged by range). Returns the document stored under its id
   * (what the next fold receives) and further rows the runner writes beside it, at the same
   * position and in the same batch; `previous` is the document stored before the fold, so rows
   * it had and the new one lacks can be deleted (a null row). Without it the folded document is
   * stored as it is.
   */
  layout?(id: string, document: D | null, previous: D | null): StoredLayout<D>;
  /**
   * Optional: true when each document is made from one event alone, whatever was stored (its
   * id names the event: an analyst's projection of one row per event). The runner then writes
   * the batch's documents without reading them first: a replayed or redelivered event makes
   * the same document at the same position, which the store skips. On a read store behind a network a
   * read of a key not yet stored costs a round trip (on FerretDB more than the write itself).
   */
  onePerEvent?: boolean;
}

export interface StoredLayout<D> {
  document: D | null;
  rows: Array<{ key: string; doc: unknown }>;
}

/**
 * The writes that store a folded document at `position`: the document itself, or its layout
 * (the document and its rows, all at that position). The runner and the parked retry both
 * write through this, so a laid-out model is never stored whole.
 */
export function storedWrites<D>(
  projection: Pick<Projection<D>, 'layout'>, id: string, doc: D | null, previous: D | null, position: number,
): Array<{ key: string; doc: D | null; position: number }> {
  if (projection.layout === undefined) return [{ key: id, doc, position }];
  const laid = projection.layout(id, doc, previous);
  return [{ key: id, doc: laid.document, position }, ...laid.rows.map((row) => ({ key: row.key, doc: row.doc as D | null, position }))];
}

/** Folds `events` (of one document, in log order) onto `document`: `evolveAll` when there is one. */
export function evolveEach<D>(projection: Pick<Projection<D>, 'evolve' | 'evolveAll'>, document: D | null, events: readonly RecordedEvent[]): D | null {
  if (projection.evolveAll !== undefined) return projection.evolveAll(document, events);
  let doc = document;
  for (const event of events) doc = projection.evolve(doc, event);
  return doc;
}

export function defineProjection<D>(projection: Projection<D>): Projection<D> {
  return projection;
}
