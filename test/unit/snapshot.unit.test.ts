import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LINKS_FILE,
  METADATA_FILES,
  SNAPSHOT_FILES,
  isReleasePath,
  schemaDefinitions,
} from '../../contracts/snapshotSchema.ts';
import type { LinksDoc, MediaDoc } from '../../contracts/readModels.ts';
import { arrowSchemaOf, arrowTableMaker } from '../../services/snapshot/arrowSchema.ts';
import { contentTypeOf, matchesEtag, parseRange } from '../../services/snapshot/http.ts';
import { linkRows, mediaTalentRows, providerWeightRows, trendingRows } from '../../services/snapshot/rows.ts';
import { checkDownloadSignature, downloadUrl, loadSigningKey, signDownload } from '../../services/snapshot/signing.ts';
import { isoWeekLabel, trendingDays, weekStart } from '../../services/snapshot/week.ts';

describe('snapshot schema definitions', () => {
  it('start links.parquet with the anchor columns, types and nullability in order', () => {
    assert.deepEqual(LINKS_FILE.columns.slice(0, 10).map((c) => [c.name, c.type, c.nullable]), [
      ['media_id', 'UTF8', false],
      ['season_number', 'INT16', true],
      ['episode_number', 'INT16', true],
      ['provider_id', 'UTF8', false],
      ['addon_provider_id', 'UTF8', true],
      ['link_token', 'UTF8', false],
      ['available_from', 'DATE', true],
      ['available_to', 'DATE', true],
      ['first_seen_at', 'DATE', true],
      ['price_types', 'LIST<UTF8>', true],
    ]);
    assert.deepEqual(LINKS_FILE.columns.slice(10).map((c) => c.name), ['formats', 'audio_languages', 'subtitle_languages', 'platforms']);
  });

  it('name the sixteen metadata files of a release', () => {
    assert.deepEqual(METADATA_FILES.map((f) => f.file), [
      'media_details.parquet', 'movies.parquet', 'tv_shows.parquet', 'seasons.parquet', 'episodes.parquet',
      'media_genres.parquet', 'genres.parquet', 'media_ids.parquet', 'media_ratings.parquet', 'media_talents.parquet',
      'peoples.parquet', 'media_videos.parquet', 'providers.parquet', 'provider_weights.parquet', 'collections.parquet',
      'featured.parquet',
    ]);
  });

  it('sort every file only by its own columns, with unique column names and a description for each', () => {
    for (const f of SNAPSHOT_FILES) {
      const names = f.columns.map((c) => c.name);
      assert.equal(new Set(names).size, names.length, f.file);
      for (const key of f.sorted_by) assert.ok(names.includes(key), `${f.file} sorts by unknown ${key}`);
      for (const c of f.columns) assert.ok(c.description.length > 0, `${f.file} ${c.name}`);
    }
  });

  it('map to the Arrow schema the files are written with', () => {
    const schema = arrowSchemaOf(LINKS_FILE);
    assert.deepEqual(schema.fields.slice(0, 10).map((f) => [f.name, String(f.type), f.nullable]), [
      ['media_id', 'Utf8', false],
      ['season_number', 'Int16', true],
      ['episode_number', 'Int16', true],
      ['provider_id', 'Utf8', false],
      ['addon_provider_id', 'Utf8', true],
      ['link_token', 'Utf8', false],
      ['available_from', 'Date32<DAY>', true],
      ['available_to', 'Date32<DAY>', true],
      ['first_seen_at', 'Date32<DAY>', true],
      ['price_types', 'List<Utf8>', true],
    ]);
  });

  it('refuse a null in a non-nullable column and an out-of-range INT16', () => {
    const maker = arrowTableMaker(LINKS_FILE);
    const row = {
      media_id: 'mv00000001', season_number: null, episode_number: null, provider_id: 'netflix', addon_provider_id: null,
      link_token: 't', available_from: '2026-01-02', available_to: null, first_seen_at: null, price_types: ['rent'],
      formats: null, audio_languages: null, subtitle_languages: null, platforms: null,
    };
    const table = maker.make([row]);
    assert.equal(table.numRows, 1);
    assert.equal(table.getChild('available_from')?.get(0)?.valueOf(), Date.UTC(2026, 0, 2));
    assert.deepEqual([...(table.getChild('price_types')?.get(0) ?? [])], ['rent']);
    assert.throws(() => maker.make([{ ...row, media_id: null }]), (err: unknown) => (err as { code?: string }).code === 'internal');
    assert.throws(() => maker.make([{ ...row, season_number: 40_000 }]), /INT16/);
    assert.equal(maker.make([]).numRows, 0);
  });

  it('answer GET /v1/schemas with a copy of the definitions', () => {
    const body = schemaDefinitions('http://x/v1/openapi');
    assert.equal(body.docs, 'http://x/v1/openapi');
    assert.deepEqual(body.files, SNAPSHOT_FILES);
    body.files[0]?.columns.pop();
    assert.equal(LINKS_FILE.columns.length, 14);
  });

  it('accept only plain relative release paths', () => {
    for (const ok of ['metadata.tar.gz', 'country=US/links.parquet', 'metadata/translations/lang_de.parquet']) assert.ok(isReleasePath(ok), ok);
    for (const bad of ['', '/etc/passwd', '../x', 'a/../b', 'a//b', 'a/./b', 'a\\b', 'a%2Fb', 'a/', 'a\u0000b', 'ü.parquet']) {
      assert.equal(isReleasePath(bad), false, bad);
    }
  });
});

describe('ISO weeks of releases', () => {
  it('labels an instant with its ISO year and two-digit week', () => {
    assert.equal(isoWeekLabel(new Date('2026-11-21T08:00:00Z')), '2026-W47');
    assert.equal(isoWeekLabel(new Date('2021-01-03T23:59:59Z')), '2020-W53');
    assert.equal(isoWeekLabel(new Date('2024-12-30T00:00:00Z')), '2025-W01');
    assert.equal(isoWeekLabel(new Date('2026-01-05T00:00:00Z')), '2026-W02');
  });

  it('finds the Monday of a week and refuses weeks that do not exist', () => {
    assert.equal(new Date(weekStart('2026-W47')).toISOString(), '2026-11-16T00:00:00.000Z');
    assert.equal(new Date(weekStart('2020-W53')).toISOString(), '2020-12-28T00:00:00.000Z');
    assert.equal(new Date(weekStart('2026-W53')).toISOString(), '2026-12-28T00:00:00.000Z');
    assert.throws(() => weekStart('2025-W53'), (err: unknown) => (err as { code?: string }).code === 'invalid_parameter');
    assert.throws(() => weekStart('2026-W7'), /release version/);
  });

  it('covers seven days of trending ending on the Sunday, or on the build day when earlier', () => {
    assert.deepEqual(trendingDays('2026-W47', new Date('2026-11-30T00:00:00Z')), [
      '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22',
    ]);
    assert.deepEqual(trendingDays('2026-W47', new Date('2026-11-18T12:00:00Z')), [
      '2026-11-12', '2026-11-13', '2026-11-14', '2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18',
    ]);
  });
});

describe('serving release files', () => {
  it('parses single byte ranges, suffix ranges and unsatisfiable ones', () => {
    assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
    assert.deepEqual(parseRange('bytes=90-200', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=95-', 100), { start: 95, end: 99 });
    assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
    assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-0', 0), 'unsatisfiable');
    assert.equal(parseRange('', 100), null);
    assert.equal(parseRange('bytes=5-1', 100), null);
    assert.equal(parseRange('bytes=0-1,5-6', 100), null);
    assert.equal(parseRange('items=0-1', 100), null);
  });

  it('matches If-None-Match lists, weak tags and the wildcard', () => {
    assert.equal(matchesEtag('"a", W/"b"', '"b"'), true);
    assert.equal(matchesEtag('*', '"b"'), true);
    assert.equal(matchesEtag('"a"', '"b"'), false);
    assert.equal(matchesEtag('', '"b"'), false);
  });

  it('names the content types of Parquet files and the bundle', () => {
    assert.equal(contentTypeOf('country=US/links.parquet'), 'application/vnd.apache.parquet');
    assert.equal(contentTypeOf('metadata.tar.gz'), 'application/gzip');
  });

  it('signs version, path and expiry, and tells expired from tampered', () => {
    const sig = signDownload('k', '2026-W47', 'metadata.tar.gz', 1000);
    const input = { version: '2026-W47', path: 'metadata.tar.gz', expires: '1000', sig };
    assert.equal(checkDownloadSignature('k', input, 999), 'valid');
    assert.equal(checkDownloadSignature('k', input, 1000), 'valid');
    assert.equal(checkDownloadSignature('k', input, 1001), 'expired');
    assert.equal(checkDownloadSignature('other', input, 999), 'mismatch');
    assert.equal(checkDownloadSignature('k', { ...input, path: 'country=US/links.parquet' }, 999), 'mismatch');
    assert.equal(checkDownloadSignature('k', { ...input, version: '2026-W46' }, 999), 'mismatch');
    assert.equal(checkDownloadSignature('k', { ...input, expires: '1001' }, 999), 'mismatch');
    assert.equal(checkDownloadSignature('k', { ...input, sig: sig.toUpperCase() }, 999), 'malformed');
    assert.equal(checkDownloadSignature('k', { ...input, sig: undefined }, 999), 'malformed');
    assert.equal(checkDownloadSignature('k', { ...input, expires: '-1' }, 999), 'malformed');
    assert.equal(
      downloadUrl('http://h/', '2026-W47', 'country=US/links.parquet', 5, 'ab'),
      'http://h/v1/snapshots/file/2026-W47/country=US/links.parquet?expires=5&sig=ab',
    );
  });
});

describe('the download signing key', () => {
  it('is the configured key, or with --sample a random one kept in the data directory across restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'marquee-signing-'));
    const development = { development: true };
    try {
      assert.equal(await loadSigningKey('configured', dir), 'configured');
      assert.equal(await loadSigningKey('configured', dir, development), 'configured');
      const first = await loadSigningKey(null, dir, development);
      assert.match(first, /^[0-9a-f]{64}$/);
      assert.equal(await loadSigningKey(null, dir, development), first);
      assert.notEqual(await loadSigningKey(null, join(dir, 'other'), development), first);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to make up a key without --sample, naming DOWNLOAD_SIGNING_KEY', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'marquee-signing-'));
    try {
      await assert.rejects(loadSigningKey(null, dir), { code: 'missing_parameter', message: /^DOWNLOAD_SIGNING_KEY is not set: / });
      await assert.rejects(loadSigningKey('', dir), { code: 'missing_parameter' });
      assert.deepEqual(readdirSync(dir), [], 'no development key file written');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('snapshot rows', () => {
  it('orders the links of a title by season, episode, provider, add-on and token, nulls first, with sorted price types', () => {
    const offer = (providerId: string, season: number | null, episode: number | null, addon: string | null, url: string) => ({
      providerId, addonProviderId: addon, seasonNumber: season, episodeNumber: episode, webUrl: url,
      priceTypes: ['rent', 'buy'] as Array<'rent' | 'buy'>, formats: null, audioLanguages: null, subtitleLanguages: null,
      availableFrom: null, availableTo: null, platforms: null, firstSeenAt: '2026-11-01', startedOn: '2026-11-01',
    });
    const doc: LinksDoc = {
      mediaId: 'tv00000001', kind: 'tv_show', country: 'US',
      offers: [
        offer('netflix', 1, 2, null, 'u1'), offer('netflix', 1, 1, null, 'u2'), offer('hulu', null, null, null, 'u3'),
        offer('netflix', 1, null, null, 'u4'), offer('hulu', null, null, 'addon', 'u5'), offer('hulu', null, null, null, 'u0'),
      ],
    };
    const rows = linkRows(doc, doc.offers.map((o) => `t-${o.webUrl}`));
    assert.deepEqual(rows.map((r) => [r.season_number, r.episode_number, r.provider_id, r.addon_provider_id, r.link_token]), [
      [null, null, 'hulu', null, 't-u0'],
      [null, null, 'hulu', null, 't-u3'],
      [null, null, 'hulu', 'addon', 't-u5'],
      [1, null, 'netflix', null, 't-u4'],
      [1, 1, 'netflix', null, 't-u2'],
      [1, 2, 'netflix', null, 't-u1'],
    ]);
    assert.deepEqual(rows[0]?.price_types, ['buy', 'rent']);
  });

  it('sorts a list only when out of order, never touching the stored document', () => {
    // In order already: the rows keep it (the fast path); out of order, with a repeat: sorted, once each.
    const member = (order: number, personId: string) => ({ personId, name: personId, role: 'actor', character: null, order });
    const talents = (cast: Array<ReturnType<typeof member>>) =>
      mediaTalentRows({ id: 'mv1', details: { cast } } as unknown as MediaDoc).map((r) => [r.cast_order, r.person_id]);
    assert.deepEqual(talents([member(0, 'a'), member(0, 'a'), member(1, 'b'), member(1, 'c')]), [[0, 'a'], [1, 'b'], [1, 'c']]);
    const shuffled = [member(2, 'c'), member(0, 'a'), member(2, 'c'), member(1, 'b')];
    assert.deepEqual(talents(shuffled), [[0, 'a'], [1, 'b'], [2, 'c']]);
    const priced = (priceTypes: string[]) => ({
      providerId: 'p', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'u', priceTypes, formats: null,
      audioLanguages: null, subtitleLanguages: null, availableFrom: null, availableTo: null, platforms: null, firstSeenAt: '2026-11-01',
    });
    const stored = ['rent', 'buy', 'ads'];
    const doc = { mediaId: 'mv1', kind: 'movie', country: 'US', offers: [priced(stored), priced(['buy', 'rent'])] } as unknown as LinksDoc;
    const rows = linkRows(doc, ['t2', 't1']);
    assert.deepEqual(rows.map((r) => [r.link_token, r.price_types]), [['t1', ['buy', 'rent']], ['t2', ['ads', 'buy', 'rent']]]);
    assert.deepEqual(stored, ['rent', 'buy', 'ads']);
  });

  it('computes the trending change and leaves it null for entries and exits', () => {
    const rows = trendingRows({
      country: 'US', date: '2026-11-20',
      entries: [
        { mediaId: 'mv2', kind: 'movie', position: 3, previousPosition: 1 },
        { mediaId: 'mv1', kind: 'movie', position: null, previousPosition: 4 },
        { mediaId: 'mv3', kind: 'movie', position: 2, previousPosition: null },
      ],
    });
    assert.deepEqual(rows.map((r) => [r.media_id, r.change]), [['mv1', null], ['mv2', -2], ['mv3', null]]);
  });

  it('ranks providers by weight, ties by id, and lists them by id', () => {
    const p = (id: string, weight: number) => ({ id, parentId: null, name: id, logo: null, shortId: null, weight });
    assert.deepEqual(providerWeightRows('US', [p('b', 5), p('a', 5), p('c', 9)]).map((r) => [r.provider_id, r.rank]), [
      ['a', 2], ['b', 3], ['c', 1],
    ]);
  });
});
