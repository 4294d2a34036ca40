import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import avsc from 'avsc';
import { codec, decodeEvent, decodeObservation } from '../../contracts/codec.ts';
import { isAppError } from '../../contracts/errors.ts';
import { chartPart, EVENT_TYPES, type RankingComputed } from '../../contracts/events.ts';
import { OBSERVATION_TYPES } from '../../contracts/observations.ts';
import { rabinFingerprint, type VersionedSchema } from '../../contracts/schemaRegistry.ts';
import { BUNDLE_FILE, renderBundle } from '../../infra/avro/bundleSchemas.ts';
import { SCHEMAS_DIR, loadSchemas } from '../../infra/avro/loadSchemas.ts';
import { fixturePath } from '../fixtures/avro/record.ts';
import { EVENT_SAMPLES } from '../fixtures/avro/samples.ts';

const registry = codec.registry;

describe('contracts schemas', () => {
  it('has a schema for every observation and event type, named after the type in namespace marquee', () => {
    for (const type of OBSERVATION_TYPES) assert.equal(registry.latest('observation', type)?.avro.name, `marquee.${type}`);
    for (const type of EVENT_TYPES) assert.equal(registry.latest('event', type)?.avro.name, `marquee.${type}`);
    assert.equal(registry.all.length, OBSERVATION_TYPES.length + EVENT_TYPES.length + 3);
  });

  it('keeps a real second version of MediaObserved and the second and third of RankingComputed', () => {
    assert.equal(registry.versions('observation', 'MediaObserved').length, 2);
    assert.equal(registry.versions('event', 'RankingComputed').length, 3);
  });

  it('computes CRC-64-AVRO fingerprints matching the Avro specification', () => {
    assert.equal(rabinFingerprint('"null"').readBigUInt64LE(), 7195948357588979594n);
    assert.equal(rabinFingerprint('"int"').readBigUInt64LE(), 8247732601305521295n);
  });

  it('bundles exactly the .avsc files into contracts/schemas/bundle.ts', async () => {
    const expected = await renderBundle();
    const actual = await readFile(BUNDLE_FILE, 'utf8');
    assert.ok(actual === expected, 'contracts/schemas/bundle.ts is stale: run `npx tsx infra/avro/bundleSchemas.ts`');
  });

  it('loads the same registry from the files as the codec carries', async () => {
    const loaded = await loadSchemas();
    assert.deepEqual(
      loaded.all.map((s) => `${s.typeName}/v${s.version}:${s.fingerprintHex}`).sort(),
      registry.all.map((s) => `${s.typeName}/v${s.version}:${s.fingerprintHex}`).sort(),
    );
  });

  describe('the loader', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'marquee-schemas-'));
      await cp(SCHEMAS_DIR, dir, { recursive: true, filter: (src) => !src.endsWith('.ts') });
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('rejects a schema file that is not JSON, naming the file', async () => {
      const file = join(dir, 'events', 'OfferAdded', 'v1.avsc');
      await writeFile(file, '{ "type": "record", "name": "OfferAdded", ');
      await assert.rejects(loadSchemas(dir), (err) => isAppError(err, 'invalid_schema') && err.message.startsWith(`${file}: not valid JSON`));
    });

    it('rejects a schema that references an undefined type, naming the file', async () => {
      const file = join(dir, 'events', 'GenreDefined', 'v1.avsc');
      const schema = JSON.parse(await readFile(file, 'utf8'));
      schema.fields[0].type.fields[0].type = 'marquee.Genus';
      await writeFile(file, JSON.stringify(schema));
      await assert.rejects(loadSchemas(dir), (err) => isAppError(err, 'invalid_schema') && err.message.startsWith(`${file}: `) && /Genus/.test(err.message));
    });

    it('rejects a record whose name is not its type, naming the file', async () => {
      const file = join(dir, 'observations', 'GenresObserved', 'v1.avsc');
      const schema = JSON.parse(await readFile(file, 'utf8'));
      schema.name = 'GenreObserved';
      await writeFile(file, JSON.stringify(schema));
      await assert.rejects(loadSchemas(dir), (err) => isAppError(err, 'invalid_schema') && err.message === `${file}: must be a record named "GenresObserved" in namespace "marquee"`);
    });

    it('rejects a new version that cannot read the previous one, naming the new file', async () => {
      const file = join(dir, 'events', 'GenreChanged', 'v2.avsc');
      const schema = JSON.parse(await readFile(join(dir, 'events', 'GenreChanged', 'v1.avsc'), 'utf8'));
      schema.fields[0].type.fields.push({ name: 'parentId', type: 'int' }); // required, no default
      await writeFile(file, JSON.stringify(schema));
      await assert.rejects(loadSchemas(dir), (err) => isAppError(err, 'invalid_schema') && err.message.startsWith(`${file}: cannot read data written with`));
    });

    it('rejects a version gap, naming the file', async () => {
      const file = join(dir, 'events', 'GenreChanged', 'v3.avsc');
      const schema = JSON.parse(await readFile(join(dir, 'events', 'GenreChanged', 'v1.avsc'), 'utf8'));
      schema.fields[0].type.fields.push({ name: 'note', type: ['null', 'string'], default: null });
      await writeFile(file, JSON.stringify(schema));
      await assert.rejects(loadSchemas(dir), (err) => isAppError(err, 'invalid_schema') && err.message.startsWith(`${file}: version 3 leaves a gap`));
    });
  });

  describe('recorded fixtures', () => {
    const read = async (schema: VersionedSchema) => ({
      bytes: await readFile(fixturePath(schema, 'bin')),
      written: JSON.parse(await readFile(fixturePath(schema, 'json'), 'utf8')) as unknown,
    });

    for (const schema of registry.all) {
      it(`holds ${schema.typeName} v${schema.version} bytes written with exactly today's v${schema.version} schema`, async () => {
        const { bytes, written } = await read(schema);
        // A changed fingerprint means a published schema was edited in place: add a version instead.
        assert.equal(bytes.subarray(2, 10).toString('hex'), schema.fingerprintHex);
        assert.deepEqual(JSON.parse(JSON.stringify(schema.avro.fromBuffer(bytes.subarray(10)))), written);
      });
    }

    const multi = [...new Set(registry.all.filter((s) => s.version > 1).map((s) => `${s.kind}:${s.typeName}`))];
    for (const key of multi) {
      const [kind, typeName] = key.split(':') as ['observation' | 'event', string];
      it(`reads every older ${typeName} fixture with the next version through createResolver`, async () => {
        const versions = registry.versions(kind, typeName);
        for (let i = 1; i < versions.length; i += 1) {
          const older = versions[i - 1] as VersionedSchema;
          const newer = versions[i] as VersionedSchema;
          const { bytes, written } = await read(older);
          const value = newer.avro.fromBuffer(bytes.subarray(10), newer.avro.createResolver(older.avro));
          assert.equal(newer.avro.isValid(value), true);
          // Everything the older version wrote survives under the same names.
          const plain = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
          assert.deepEqual(pick(plain, written), written);
        }
      });
    }

    it('decodes a MediaObserved v1 record as v2 with the TV status fields null', async () => {
      const v1 = registry.versions('observation', 'MediaObserved')[0] as VersionedSchema;
      const { bytes, written } = await read(v1);
      const decoded = decodeObservation(bytes);
      assert.equal(decoded.type, 'MediaObserved');
      assert.deepEqual(decoded, {
        type: 'MediaObserved',
        ...(written as object),
        data: { ...(written as { data: object }).data, inProduction: null, lastAirDate: null },
      });
    });

    it('decodes a RankingComputed v1 event as v2 with formula version 1', async () => {
      const v1 = registry.versions('event', 'RankingComputed')[0] as VersionedSchema;
      const { bytes } = await read(v1);
      const decoded = decodeEvent(bytes);
      assert.equal(decoded.type, 'RankingComputed');
      assert.equal((decoded.data as { formulaVersion: number }).formulaVersion, 1);
      assert.deepEqual(decoded.metadata, { producer: 'ranking' });
    });

    it('decodes a RankingComputed v2 event (a whole chart) as v3 part 1 of 1 with no latest date', async () => {
      const v2 = registry.versions('event', 'RankingComputed')[1] as VersionedSchema;
      const { bytes, written } = await read(v2);
      const decoded = decodeEvent(bytes);
      assert.equal(decoded.type, 'RankingComputed');
      const data = decoded.data as RankingComputed['data'];
      assert.deepEqual(chartPart(data), { part: 1, parts: 1 });
      assert.equal(data.latestDate, null);
      assert.deepEqual(data.entries, (written as { data: { entries: unknown } }).data.entries);
    });

    it('encodes a RankingComputed written without parts (the shape before the split) as part 1 of 1', () => {
      const whole = { ...EVENT_SAMPLES.RankingComputed, data: { country: 'GB', date: '2026-11-21', formulaVersion: 2, entries: [] } };
      const data = decodeEvent(codec.encodeEvent(whole)).data as RankingComputed['data'];
      assert.deepEqual({ part: data.part, parts: data.parts }, { part: 1, parts: 1 });
    });

    it('refuses bytes of a schema the reader does not know with its fingerprint in the reason', () => {
      const alien = avsc.Type.forSchema({ type: 'record', name: 'Alien', namespace: 'marquee', fields: [] });
      const fingerprint = rabinFingerprint(JSON.stringify(alien.schema()));
      const bytes = Buffer.concat([Buffer.from([0xc3, 0x01]), fingerprint, alien.toBuffer({})]);
      assert.throws(
        () => decodeObservation(bytes),
        (err) => isAppError(err, 'invalid_observation') && err.message === `unknown writer schema fingerprint ${fingerprint.toString('hex')}`,
      );
    });
  });
});

/** The parts of `value` at the paths `shape` has (objects by key, arrays by index). */
function pick(value: unknown, shape: unknown): unknown {
  if (Array.isArray(shape)) return Array.isArray(value) ? shape.map((s, i) => pick(value[i], s)) : value;
  if (typeof shape !== 'object' || shape === null || typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(shape).map((k) => [k, pick((value as Record<string, unknown>)[k], (shape as Record<string, unknown>)[k])]));
}
