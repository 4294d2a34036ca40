import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { LINKS_FILE } from '../../contracts/snapshotSchema.ts';
import { writeParquetRows } from './parquet.ts';
const sink = (path: string) => async (bytes: AsyncIterable<Uint8Array>) => { let n = 0; await pipeline(Readable.from((async function*(){ for await (const b of bytes) { n += b.length; yield b; } })()), createWriteStream(path)); return n; };
function* rows(n: number) { for (let i = 0; i < n; i++) yield { media_id: `mv${String(i).padStart(8,'0')}`, season_number: null, episode_number: i%2?null:3, provider_id: 'netflix', addon_provider_id: null, link_token: 'tok'+i, available_from: '2026-01-02', available_to: null, first_seen_at: '2026-11-01', price_types: ['buy','rent'], formats: null, audio_languages: ['en'], subtitle_languages: [], platforms: ['web'] }; }
const t0 = Date.now();
console.log(await writeParquetRows(LINKS_FILE, rows(300000), sink('/tmp/h9/p.parquet')), Date.now()-t0);
console.log(await writeParquetRows(LINKS_FILE, rows(0), sink('/tmp/h9/e.parquet')));
