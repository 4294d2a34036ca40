/** Names and key ranges of the MongoDB read store (infra/mongo/keys.ts), without a server. */
import assert from 'node:assert/strict';
import {
  bucketChain,
  bucketOf,
  commonPrefix,
  directoryCollectionName,
  keyRange,
  metaCollectionName,
  mongoCollectionName,
  prefixEnd,
  readModelCollectionName,
} from '../../infra/mongo/keys.ts';
import { documentOf, escapeField, recordOf, unescapeField } from '../../infra/mongo/documents.ts';

describe('MongoDB read store keys', () => {
  it('ends a prefix range just after the last code point, skipping the surrogate block', () => {
    assert.equal(prefixEnd('b'), 'c');
    assert.equal(prefixEnd('movie:'), 'movie;');
    assert.equal(prefixEnd('a\u{10ffff}'), 'b');
    assert.equal(prefixEnd('x\ud7ff'), 'x\ue000');
    assert.equal(prefixEnd('\u{10ffff}'), null);
    assert.equal(prefixEnd(''), null);
  });

  it('narrows a prefix range by start and end in UTF-8 byte order', () => {
    assert.deepEqual(keyRange({}), { low: '', high: null });
    assert.deepEqual(keyRange({ prefix: 'b' }), { low: 'b', high: 'c' });
    assert.deepEqual(keyRange({ prefix: 'b', start: 'ba' }), { low: 'ba', high: 'c' });
    assert.deepEqual(keyRange({ prefix: 'b', start: 'a' }), { low: 'b', high: 'c' });
    assert.deepEqual(keyRange({ end: 'a1' }), { low: '', high: 'a1' });
    // U+FFFF sorts before an astral character in UTF-8 (EF BF BF < F0 ...), unlike in UTF-16.
    assert.deepEqual(keyRange({ start: '\uffff', end: '\u{1f600}' }), { low: '\uffff', high: '\u{1f600}' });
    assert.equal(keyRange({ start: 'c', end: 'c' }), null);
    assert.equal(keyRange({ prefix: 'b', end: 'a' }), null);
  });

  it('encodes collection names reversibly and never as the meta collection', () => {
    for (const name of ['titles.v3', 'a$b', '100%', 'nul\0x', '%meta', 'é']) {
      const encoded = mongoCollectionName('rm_', name);
      assert.equal(/[$\0]/.test(encoded), false, encoded);
      assert.notEqual(encoded, metaCollectionName('rm_'));
      assert.equal(readModelCollectionName('rm_', encoded), name);
    }
    assert.equal(readModelCollectionName('rm_', metaCollectionName('rm_')), null);
    assert.equal(readModelCollectionName('rm_', 'other'), null);
    assert.equal(readModelCollectionName('rm_', directoryCollectionName('rm_', 'links%dir')), null);
    assert.equal(readModelCollectionName('rm_', mongoCollectionName('rm_', 'links%dir')), 'links%dir');
    assert.throws(() => mongoCollectionName('rm_', ''), /must not be empty/);
  });

  it('escapes field names MongoDB refuses or the store owns, reversibly', () => {
    const names = ['title', 'a.b', '$price', 'x$', '_id', '_position', 'a_b', '', '%', '%24', '%a', 'nul\0x', '..', 'é✓'];
    for (const name of names) {
      const escaped = escapeField(name);
      assert.ok(!escaped.includes('.') && !escaped.includes('\0') && !escaped.startsWith('$') && !escaped.startsWith('_'), escaped);
      assert.equal(unescapeField(escaped), name);
    }
    assert.equal(new Set(names.map(escapeField)).size, names.length);
    assert.equal(escapeField('title'), 'title');
  });

  it('stores a document as fields, arrays of arrays as objects, and reads it back as JSON would', () => {
    const doc = { title: 'Dune', m: [[1, 2], [3, [4]]], '%a': [1], $p: { 'a.b': [{ _x: null }] }, gone: undefined, nan: Number.NaN, at: new Date(0) };
    const record = recordOf('k', doc, 7);
    assert.equal(record._id, 'k');
    assert.equal(record._position, 7);
    assert.equal(record.title, 'Dune');
    assert.deepEqual(record.m, [{ '%a': [1, 2] }, { '%a': [3, { '%a': [4] }] }]);
    assert.ok(!('gone' in record));
    assert.deepEqual(documentOf(record), JSON.parse(JSON.stringify(doc)));
    for (const value of [7, 'text', [1, [2]], true]) assert.deepEqual(documentOf(recordOf('k', value, 1)), value);
    assert.deepEqual(recordOf('k', null, 3), { _id: 'k', _position: 3, _deleted: true });
  });

  it('puts a key in the bucket of its leading code points, a whole number of strides shorter', () => {
    assert.equal(bucketOf(''), '');
    assert.equal(bucketOf('US'), '');
    assert.equal(bucketOf('US:'), 'US');
    assert.equal(bucketOf('US:1'), 'US');
    assert.equal(bucketOf('US:12'), 'US:1');
    // Code points, not UTF-16 units: a pair is never cut.
    assert.equal(bucketOf('a😀b'), 'a😀');
    assert.equal(bucketOf('😀😀'), '');
    assert.deepEqual(bucketChain('US:12345'), [
      { bucket: 'US:123', parent: 'US:1' },
      { bucket: 'US:1', parent: 'US' },
      { bucket: 'US', parent: '' },
    ]);
    assert.deepEqual(bucketChain('ab'), []);
  });

  it('cuts the common prefix of two bounds at a whole code point', () => {
    assert.equal(commonPrefix('US:', 'US;'), 'US');
    assert.equal(commonPrefix('abc', ''), '');
    assert.equal(commonPrefix('x\u{1f600}', 'x\u{1f601}'), 'x');
    assert.equal(commonPrefix('same', 'same'), 'same');
  });
});
