import assert from 'node:assert/strict';
import { PeopleIndex } from '../../services/snapshot/people.ts';

/** The people of `cast` as a Map of the last name per id would give them, sorted by id. */
function expected(cast: ReadonlyArray<[string, string]>): Array<{ id: string; name: string }> {
  const people = new Map<string, string>();
  for (const [id, name] of cast) people.set(id, name);
  return [...people.keys()].sort().map((id) => ({ id, name: people.get(id) as string }));
}

function indexed(cast: ReadonlyArray<[string, string]>): Array<{ id: string; name: string }> {
  const people = new PeopleIndex();
  for (const [id, name] of cast) people.note(id, name);
  return [...people.byId()];
}

/**
 * A seeded linear congruential generator: `next(n)` in [0, n), the same sequence every run. Its
 * low bits cycle quickly, so `shift` drops that many of them first (the cases were made with the
 * shift each test gives).
 */
function lcg(seed: number, shift: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> shift) % n;
  };
}

describe('the release people index', () => {
  it('keeps every person once, sorted by id, with the name last seen', () => {
    const cast: Array<[string, string]> = [
      ['p2', 'Ann'],
      ['p10', 'Bob'],
      ['p2', 'Ann Lee'],
      ['p1', 'Cy'],
      ['p10', 'Bob'],
      ['p2', 'Ann'],
      ['p3', ''],
    ];
    assert.deepEqual(indexed(cast), [
      { id: 'p1', name: 'Cy' },
      { id: 'p10', name: 'Bob' },
      { id: 'p2', name: 'Ann' },
      { id: 'p3', name: '' },
    ]);
  });

  it('tells apart ids whose hashes are equal', () => {
    // 'p1uzx' and 'pc2ad' have the same 32-bit FNV-1a hash, so they share a slot chain.
    assert.deepEqual(indexed([['p1uzx', 'One'], ['pc2ad', 'Two'], ['p1uzx', 'Uno']]), [
      { id: 'p1uzx', name: 'Uno' },
      { id: 'pc2ad', name: 'Two' },
    ]);
  });

  it('keeps the code units of any string, lone surrogates and astral characters included, in code-unit order', () => {
    // An astral character's first code unit (0xd83d) sorts before 0xffff, though its code point is larger.
    const cast: Array<[string, string]> = [['\ud83d\ude00', 'smile'], ['\uffff', 'last BMP'], ['\ud800', 'lone \udc00'], ['é', 'Zoë'], ['e', 'plain']];
    assert.deepEqual(indexed(cast), expected(cast));
  });

  it('keeps an id and a name far longer than usual', () => {
    const long = `${'\ud800x'.repeat(200_000)}end`;
    assert.deepEqual(indexed([['p1', long], [long, 'Long'], ['p1', `${long}!`]]), [
      { id: 'p1', name: `${long}!` },
      { id: long, name: 'Long' },
    ]);
  });

  it('agrees with a Map over many people and renames, across table growths and batches', () => {
    const next = lcg(7, 0);
    const cast: Array<[string, string]> = [];
    for (let i = 0; i < 50_000; i++) {
      const person = next(9_000);
      cast.push([`p${person}`, next(10) === 0 ? `Renamed ${next(3)}` : `Person ${person}`]);
    }
    assert.deepEqual(indexed(cast), expected(cast));
  });

  it('orders ids as the default sort does, packed into 64 bits or not', () => {
    const next = lcg(11, 8);
    // Ids of `alphabet` code units and up to `longest` of them: 15 units and 13 of them with
    // 4,096 people take 13 * 4 + 12 = 64 bits, the most that is sorted as numbers; one more
    // person or one more code unit and they are sorted as strings. Renames along the way.
    const cases = [
      { alphabet: ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', '\u0001', '\uffff'], longest: 13, people: 4096 },
      { alphabet: ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', '\u0001', '\uffff'], longest: 13, people: 4097 },
      { alphabet: ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', '\u0001', '\uffff', '\u0000'], longest: 13, people: 4096 },
      { alphabet: ['\ud83d', '\ude00', 'x', '\u00e9'], longest: 5, people: 300 },
    ];
    for (const { alphabet, longest, people } of cases) {
      const ids = new Set<string>(['', alphabet.join('').slice(0, longest)]);
      while (ids.size < people) {
        let id = '';
        for (let i = next(longest + 1); i > 0; i--) id += alphabet[next(alphabet.length)];
        ids.add(id);
      }
      const cast: Array<[string, string]> = [];
      for (const id of ids) cast.push([id, `Person ${next(1000)}`]);
      for (let i = 0; i < people; i++) cast.push([cast[next(people)]![0], `Renamed ${next(3)}`]);
      assert.deepEqual(indexed(cast), expected(cast));
    }
  });

  it('reads back the code units below 0x100 as they are, a block of people at a time, and those above one at a time', () => {
    // latin1Block: blocks of 1,024 people read back as one string when every code unit of
    // their ids and names is below 0x100 (Latin-1, 0x80-0xff included), else each on its own.
    const next = lcg(5, 8);
    const text = (length: number, top: number): string => {
      let s = '';
      for (let i = 0; i < length; i++) s += String.fromCharCode(next(top));
      return s;
    };
    const cast: Array<[string, string]> = [['', ''], ['\u00ff', '\u0080\u0000']];
    for (let i = 0; i < 3000; i++) cast.push([`p${text(1 + next(6), 0x100)}`, text(next(20), 0x100)]);
    // One person past 0xff in the last block, and renames to empty and back.
    cast.push(['q\u0100', 'Ā'], ['q', '\u00e9\u0100']);
    for (let i = 0; i < 500; i++) cast.push([cast[next(cast.length)]![0], next(2) === 0 ? '' : text(3, 0x100)]);
    const people = indexed(cast);
    assert.ok(people.length > 2048);
    assert.deepEqual(people, expected(cast));
  });

  it('orders ids of every code unit', () => {
    const cast: Array<[string, string]> = [];
    for (let unit = 0xffff; unit >= 0; unit--) cast.push([String.fromCharCode(unit), `Unit ${unit}`]);
    cast.push(['', 'Empty']);
    assert.deepEqual(indexed(cast), expected(cast));
  });

  it('is empty once read', () => {
    const people = new PeopleIndex();
    people.note('p1', 'One');
    assert.equal([...people.byId()].length, 1);
    assert.deepEqual([...people.byId()], []);
  });
});
