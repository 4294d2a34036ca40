/**
 * Global positions of the port from EventStoreDB's `$all` positions, and back. On EventStoreDB a
 * port position is a COMMIT POSITION (plus one), not a 1-based count of events: a checkpoint,
 * `marquee status`'s lag (head minus checkpoint: bytes of log, not events) and a `/v1/changes`
 * cursor (the position of the last change examined) are byte offsets in the server's log.
 *
 * EventStoreDB places an event in `$all` by its byte offset in the transaction log: a
 * `{ commit, prepare }` pair. Events appended through the gRPC API are implicit transactions,
 * for which both are the offset of the event's own record, so each event has its own commit
 * position, and commit positions grow in the order events become visible in `$all`. (They differ
 * only for events written with the legacy TCP API's explicit transactions, which Marquee never
 * uses.)
 *
 * The port wants a number that orders events and leaves 0 for "before everything":
 *
 *   position = commit + 1        (so the event at byte 0, if one is ever ours, is still > 0)
 *
 * Positions therefore increase but are NOT gapless: two consecutive events differ by the size
 * of the first one's record (plus the system records in between). Nothing in the runner counts
 * on gaps being 1: it compares positions, and uses `head - checkpoint` only as an upper bound of
 * a batch size, which a larger difference keeps true. Byte offsets stay below 2^53 (8 PiB of
 * log), so a JavaScript number holds them exactly.
 */
import { START, type Position, type ReadPosition } from '@eventstore/db-client';
import { AppError } from '../../contracts/errors.ts';

export function positionOf(position: Position): number {
  if (position.commit >= BigInt(Number.MAX_SAFE_INTEGER)) {
    // The server answers 2^64-1 where it does not know a position (old servers, stream reads).
    throw new AppError('internal', `EventStoreDB returned no usable $all position (${position.commit})`, { retriable: false });
  }
  return Number(position.commit) + 1;
}

/**
 * Where to start reading or subscribing for "events after `after`". Reads from a position include
 * the event at it and subscriptions start after it; callers drop positions <= `after` either way.
 */
export function readPositionAfter(after: number): ReadPosition {
  if (after <= 0) return START;
  const offset = BigInt(after - 1);
  return { commit: offset, prepare: offset };
}
