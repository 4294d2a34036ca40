/**
 * Leases in the read store: one holder at a time for a piece of work shared by several
 * processes (a webhook's deliveries, the projections, the scheduled jobs). Every read store makes
 * one write atomic: inserting a key that does not exist yet. So each take or renewal inserts the
 * NEXT epoch's key, and of two processes racing for one epoch exactly one finds its own document
 * there. A holder that dies (kill -9) loses the lease when it expires; nothing else frees it.
 * This does not rest on the position guard being a compare-and-set across writers, which
 * FerretDB's is not.
 */
import type { ReadStore } from '../../contracts/ports.ts';

/** Collection of the process-wide leases (`projector`, `scheduler`). */
export const LEASES_COLLECTION = '_leases';
/** Held by the active projector (services/roles/projector.ts). */
export const PROJECTOR_LEASE = 'projector';
/** Held by the scheduler running a period's job (services/cli/schedule.ts). */
export const SCHEDULER_LEASE = 'scheduler';

/**
 * Inserts a document under a new key: true when this call created it, false when the key
 * existed. Read back rather than trusting the write count: a store may count an equal write
 * that lost a concurrent insert as written (MongoDB's guarded write does), but only the winner
 * finds its own document there. Contenders always write different documents (holder, id).
 */
export async function insertNew<T>(readStore: ReadStore, collection: string, key: string, doc: T): Promise<boolean> {
  const { written } = await readStore.writeBatch<T>(collection, [{ key, doc, position: 1 }]);
  if (written !== 1) return false;
  const stored = await readStore.get<T>(collection, key);
  return stored !== null && JSON.stringify(stored.doc) === JSON.stringify(doc);
}

interface Lease {
  holder: string;
  until: number;
}

const epochKey = (name: string, epoch: number): string => `${name}:${String(epoch).padStart(12, '0')}`;

/**
 * Takes or renews the lease `name` for `holder` at time `now` (ms) for `ms`: the time until which
 * `holder` holds it (at least `now + ms / 2`), or null when another holder has it. A renewal
 * inserts a new epoch only once half the lease is gone; the holder purges epochs older than the
 * previous one.
 *
 * Purged, not deleted: a deletion leaves a tombstone for good, and the projector's lease alone
 * renews every 5 s (17,000 tombstones a day, measured growing by 14 a minute under `start`).
 * Without the tombstone a process that read an old epoch, then stalled, can insert the epoch
 * after it again; so a taker also checks that its epoch is the newest after inserting it. The
 * holder keeps its current and previous epochs, so an old epoch inserted again is never the
 * newest, and the taker that inserted it walks away.
 */
export async function takeLease(readStore: ReadStore, collection: string, name: string, holder: string, now: number, ms: number): Promise<number | null> {
  const [latest] = await readStore.scan<Lease>(collection, { prefix: `${name}:`, reverse: true, limit: 1 });
  const epoch = latest === undefined ? 0 : Number(latest.key.slice(name.length + 1));
  if (latest && latest.doc.holder !== holder && latest.doc.until > now) return null;
  if (latest && latest.doc.holder === holder && latest.doc.until - now > ms / 2) return latest.doc.until;
  const until = now + ms;
  const mine = epochKey(name, epoch + 1);
  if (!(await insertNew<Lease>(readStore, collection, mine, { holder, until }))) return null;
  const [newest] = await readStore.scan<Lease>(collection, { prefix: `${name}:`, reverse: true, limit: 1 });
  if (newest?.key !== mine) return null;
  if (epoch > 1) {
    const old = await readStore.scan<Lease>(collection, { prefix: `${name}:`, end: epochKey(name, epoch), limit: 100 });
    if (old.length > 0) await readStore.purge(collection, old.map((o) => o.key));
  }
  return until;
}

/** Gives the lease up at once (a clean shutdown), so a standby need not wait for it to expire. */
export async function releaseLease(readStore: ReadStore, collection: string, name: string, holder: string, now: number): Promise<void> {
  const [latest] = await readStore.scan<Lease>(collection, { prefix: `${name}:`, reverse: true, limit: 1 });
  if (!latest || latest.doc.holder !== holder || latest.doc.until <= now) return;
  const epoch = Number(latest.key.slice(name.length + 1));
  // A new epoch that has already expired: the next taker finds it free.
  await insertNew<Lease>(readStore, collection, epochKey(name, epoch + 1), { holder, until: now });
}

/**
 * One process's hold on a lease: `take()` takes or renews it, `check()` throws unless it is held
 * with a margin to spare (a check without I/O, before each write the lease fences: a process
 * that was paused past its lease writes nothing when it resumes), `release()` gives it up.
 */
export class LeaseKeeper {
  private until = 0;

  constructor(
    private readonly readStore: ReadStore,
    readonly name: string,
    readonly holder: string,
    /** Lease length. A standby takes over at most this long (plus its poll) after a holder dies. */
    readonly ms: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes or renews the lease: true when held. A store that fails throws (the caller backs off). */
  async take(): Promise<boolean> {
    // Held with more than half to spare: takeLease would only read that back (no other holder
    // takes a lease before it expires), and on MongoDB its reverse scan of the lease keys was
    // about 1,000 commands a day of the first start's load, renewed every quarter of the lease.
    if (this.until - this.now() > this.ms / 2) return true;
    const until = await takeLease(this.readStore, LEASES_COLLECTION, this.name, this.holder, this.now(), this.ms);
    this.until = until ?? 0;
    return until !== null;
  }

  /** True while the lease is held with a quarter of it to spare. */
  holds(): boolean {
    return this.until - this.now() > this.ms / 4;
  }

  check(): void {
    if (!this.holds()) throw new Error(`the ${this.name} lease is not held by this process (${this.holder}); it writes nothing`);
  }

  async release(): Promise<void> {
    if (this.until === 0) return;
    this.until = 0;
    await releaseLease(this.readStore, LEASES_COLLECTION, this.name, this.holder, this.now());
  }
}

/** `marquee status`'s line on a lease: who holds it and for how long, or that it is free. */
export async function describeLease(readStore: ReadStore, name: string, now: number): Promise<string> {
  const [latest] = await readStore.scan<Lease>(LEASES_COLLECTION, { prefix: `${name}:`, reverse: true, limit: 1 });
  if (!latest || latest.doc.until <= now) return `${name}: free${latest ? ` (last held by ${latest.doc.holder})` : ''}`;
  return `${name}: held by ${latest.doc.holder}, ${((latest.doc.until - now) / 1000).toFixed(1)} s left unless renewed`;
}
