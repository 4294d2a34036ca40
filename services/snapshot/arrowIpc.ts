/**
 * One record batch as an Arrow IPC stream (schema message, record batch message, end of
 * stream), written straight from the columns' Arrow data into one buffer: the bytes parquet-wasm
 * reads (`Table.fromIPCStream`), as apache-arrow's `tableToIPC` would give them.
 *
 * Why not `tableToIPC`: a release hands parquet-wasm a batch every 4096 rows of every file, and
 * `tableToIPC` encoded the file's schema again each time, walked the columns with a visitor,
 * and gathered the buffers through its stream writer's queue before copying them out: about
 * a tenth of the CPU of writing a file, as much as the rest of the hand-over. Here the schema
 * message is encoded once per file, only the small record batch header each batch (with
 * apache-arrow's own encoder), and each buffer is copied once.
 *
 * The columns are those columns.ts makes: flat (numbers, dates, booleans), UTF-8 and lists of
 * UTF-8, every Data at offset 0.
 */
import { DataType, type Data, type Schema } from 'apache-arrow';
import { BufferRegion, FieldNode, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';

/** Body buffers and the message itself are padded to eight bytes. */
const pad8 = (n: number): number => (n + 7) & ~7;

/** The encapsulation of one message: continuation marker, metadata length, then the metadata. */
function framed(metadata: Uint8Array): Uint8Array {
  const size = pad8(metadata.byteLength);
  const out = new Uint8Array(8 + size);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, size, true);
  out.set(metadata, 8);
  return out;
}

/** The end-of-stream marker: a continuation marker and a zero length. */
const EOS = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

/** The buffers of `data` and its children in IPC order, and a node per array. */
function collect(data: Data, nodes: FieldNode[], buffers: Uint8Array[]): void {
  const { length, nullCount } = data;
  nodes.push(new FieldNode(length, nullCount));
  // A validity bitmap only with nulls (an empty placeholder otherwise, as tableToIPC writes).
  buffers.push(nullCount > 0 && data.nullBitmap ? data.nullBitmap.subarray(0, (length + 7) >> 3) : new Uint8Array(0));
  const { type } = data;
  const bytes = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  if (DataType.isUtf8(type)) {
    const offsets = data.valueOffsets as Int32Array;
    buffers.push(bytes(offsets.subarray(0, length + 1)));
    buffers.push((data.values as Uint8Array).subarray(0, offsets[length] ?? 0));
  } else if (DataType.isList(type)) {
    buffers.push(bytes((data.valueOffsets as Int32Array).subarray(0, length + 1)));
    collect(data.children[0] as Data, nodes, buffers);
  } else if (DataType.isBool(type)) {
    buffers.push((data.values as Uint8Array).subarray(0, (length + 7) >> 3));
  } else {
    buffers.push(bytes((data.values as Int16Array | Int32Array | Float64Array).subarray(0, length)));
  }
}

/**
 * Writes the IPC streams of one file's batches: `encode` turns a batch's columns into bytes.
 * The bytes are those of one buffer kept from batch to batch, valid until the next `encode`,
 * unless they were transferred to another thread (which detaches the buffer, and the next
 * batch gets a fresh one): a file encoded on its own thread is read into wasm memory at once
 * (parquetEncoder.ts), and a fresh zeroed buffer for each batch of a large file cost as much
 * as copying the columns into it.
 */
export function ipcStreamWriter(schema: Schema): { encode(length: number, columns: readonly Data[]): Uint8Array } {
  const schemaMessage = framed(Message.encode(Message.from(schema)));
  let kept = new Uint8Array(0);
  return {
    encode(length, columns) {
      const nodes: FieldNode[] = [];
      const buffers: Uint8Array[] = [];
      for (const column of columns) collect(column, nodes, buffers);
      const regions: BufferRegion[] = [];
      let bodyLength = 0;
      for (const buffer of buffers) {
        // Each region's length is its padded length, as tableToIPC records it.
        const padded = pad8(buffer.byteLength);
        regions.push(new BufferRegion(bodyLength, padded));
        bodyLength += padded;
      }
      const header = framed(Message.encode(Message.from(new RecordBatchHeader(length, nodes, regions, null), bodyLength)));
      const size = schemaMessage.byteLength + header.byteLength + bodyLength + EOS.byteLength;
      // A buffer fresh from the allocator is zeroed; a kept one is zeroed between the buffers
      // below, so the padding bytes are zeros either way, as tableToIPC's.
      const fresh = kept.byteLength < size;
      // Exactly the size needed after a transfer (so the next is transferred whole, not copied:
      // parquetPool.ts), twice that when a kept buffer grows, so the batches settle on one.
      if (fresh) kept = new Uint8Array(kept.byteLength === 0 ? size : size * 2);
      const out = kept.subarray(0, size);
      out.set(schemaMessage, 0);
      out.set(header, schemaMessage.byteLength);
      let at = schemaMessage.byteLength + header.byteLength;
      for (const buffer of buffers) {
        out.set(buffer, at);
        at += buffer.byteLength;
        const next = pad8(at);
        if (!fresh) out.fill(0, at, next);
        at = next;
      }
      out.set(EOS, at);
      return out;
    },
  };
}
