/**
 * The behaviour every SearchIndex adapter must show (in-process now, OpenSearch later).
 * Expectations are about which titles come back and in what order where the spec fixes it
 * (typo thresholds, country first, filters, pagination), never about scores.
 */
import assert from 'node:assert/strict';
import type { SearchDocument, SearchIndex, SearchQuery } from '../../contracts/ports.ts';

let seq = 0;

/** A movie document with defaults: available nowhere, no genres, popularity 10. */
export function searchDoc(title: string, over: Partial<SearchDocument> = {}): SearchDocument {
  seq++;
  return {
    id: `mv${String(seq).padStart(8, '0')}`,
    kind: 'movie',
    title,
    originalTitle: null,
    titles: {},
    year: 2000,
    genres: [],
    popularity: 10,
    availability: {},
    ...over,
  };
}

export function searchIndexSuite(name: string, make: () => Promise<SearchIndex>): void {
  describe(`SearchIndex behaviour: ${name}`, function () {
    let index: SearchIndex;

    beforeEach(async function () {
      index = await make();
    });

    afterEach(async function () {
      await index.close();
    });

    function query(q: string, over: Partial<SearchQuery> = {}): Promise<{ total: number; ids: string[] }> {
      return index.search({ q, country: 'US', lang: 'en', limit: 20, offset: 0, ...over });
    }

    /** Indexes the given titles and returns their documents in the same order. */
    async function load(...docs: SearchDocument[]): Promise<SearchDocument[]> {
      await index.upsert(docs);
      return docs;
    }

    describe('documents', function () {
      it('counts upserted documents, replaces a document upserted again and forgets removed ones', async function () {
        const [a, b] = await load(searchDoc('Titanic'), searchDoc('Gladiator'));
        assert.equal(await index.count(), 2);

        await index.upsert([{ ...a!, title: 'Casablanca' }]);
        assert.equal(await index.count(), 2);
        assert.deepEqual((await query('titanic')).ids, []);
        assert.deepEqual((await query('casablanca')).ids, [a!.id]);

        await index.remove([b!.id, 'mv99999999']);
        assert.equal(await index.count(), 1);
        assert.deepEqual(await query('gladiator'), { total: 0, ids: [] });
      });

      it('answers a query asked again after each kind of write from what was written, not from before', async function () {
        const [first] = await load(searchDoc('Velvet Harbor', { popularity: 1 }));
        assert.deepEqual((await query('velvet harb')).ids, [first!.id]);
        const second = searchDoc('Velvet Harbor', { popularity: 100 });
        await index.upsert([second]);
        assert.deepEqual((await query('velvet harb')).ids, [second.id, first!.id]);
        await index.remove([second.id]);
        assert.deepEqual((await query('velvet harb')).ids, [first!.id]);
        await index.write([{ id: first!.id, version: 1, doc: null }]);
        assert.deepEqual(await query('velvet harb'), { total: 0, ids: [] });
        await index.write([{ id: first!.id, version: 2, doc: { ...first!, title: 'Velvet Harbour' } }]);
        assert.deepEqual((await query('velvet harb')).ids, [first!.id]);
      });

      it('answers nothing for a query without letters or digits', async function () {
        await load(searchDoc('Titanic'));
        assert.deepEqual(await query('  -- !! '), { total: 0, ids: [] });
      });
    });

    describe('versioned writes (the search feed)', function () {
      it('applies a write at or above the version it holds and ignores an older one, removals included', async function () {
        const doc = searchDoc('Titanic');
        await index.write([{ id: doc.id, doc, version: 5 }]);
        // An older write (replayed after a failure, or delivered late) changes nothing.
        await index.write([{ id: doc.id, doc: { ...doc, title: 'Casablanca' }, version: 3 }]);
        assert.deepEqual((await query('titanic')).ids, [doc.id]);
        assert.deepEqual((await query('casablanca')).ids, []);
        // The same write again (at-least-once delivery) is accepted, a newer one replaces.
        await index.write([{ id: doc.id, doc, version: 5 }]);
        await index.write([{ id: doc.id, doc: { ...doc, title: 'Gladiator' }, version: 8 }]);
        assert.deepEqual((await query('gladiator')).ids, [doc.id]);
        assert.deepEqual((await query('titanic')).ids, []);

        // An older removal is ignored; a newer one removes, and an older write cannot bring it back.
        await index.write([{ id: doc.id, doc: null, version: 7 }]);
        assert.equal(await index.count(), 1);
        await index.write([{ id: doc.id, doc: null, version: 9 }]);
        assert.equal(await index.count(), 0);
        await index.write([{ id: doc.id, doc, version: 8 }]);
        assert.equal(await index.count(), 0);
        assert.deepEqual(await query('titanic'), { total: 0, ids: [] });

        // Removing a title never indexed is no error; in one call, writes apply in order.
        const other = searchDoc('Alien');
        await index.write([
          { id: other.id, doc: null, version: 2 },
          { id: other.id, doc: other, version: 4 },
          { id: other.id, doc: { ...other, title: 'Prometheus' }, version: 3 },
        ]);
        assert.deepEqual((await query('alien')).ids, [other.id]);
        assert.deepEqual((await query('prometheus')).ids, []);
      });
    });

    describe('typo tolerance', function () {
      it("finds Titanic from 'Titanc' (6 characters, one deletion)", async function () {
        const [titanic] = await load(searchDoc('Titanic'), searchDoc('Casablanca'));
        assert.deepEqual((await query('Titanc')).ids, [titanic!.id]);
      });

      it('counts an adjacent transposition as one typo from 5 characters', async function () {
        const [titanic, alien] = await load(searchDoc('Titanic'), searchDoc('Alien'));
        assert.deepEqual((await query('Titnaic')).ids, [titanic!.id]);
        assert.deepEqual((await query('Alein')).ids, [alien!.id]);
      });

      it('tolerates one substitution in a 5-letter word', async function () {
        const [alien] = await load(searchDoc('Alien'), searchDoc('Jaws'));
        assert.deepEqual((await query('Aliem')).ids, [alien!.id]);
      });

      it('tolerates one typo in a 4-letter word, none in a 3-letter one', async function () {
        const [jaws, heat, blood] = await load(searchDoc('Jaws'), searchDoc('Heat'), searchDoc('In Cold Blood'), searchDoc('Her'));
        assert.deepEqual((await query('Jawz')).ids, [jaws!.id]);
        assert.deepEqual((await query('Haet')).ids, [heat!.id]);
        // "bood" is blood missing a letter: four letters as typed, so one typo is allowed.
        assert.deepEqual((await query('In Cold Bood')).ids, [blood!.id]);
        assert.deepEqual(await query('Hwr'), { total: 0, ids: [] });
        // Two typos in four letters are too many.
        assert.deepEqual(await query('Jqwz'), { total: 0, ids: [] });
      });

      it('allows two typos only from 9 characters', async function () {
        const [inception] = await load(searchDoc('Inception'), searchDoc('Predator'));
        // 9 letters, two substitutions: found.
        assert.deepEqual((await query('Incebtiom')).ids, [inception!.id]);
        // 8 letters, two substitutions: one typo only is allowed, so nothing.
        assert.deepEqual(await query('Prebatoz'), { total: 0, ids: [] });
        // 8 letters, one substitution: found.
        assert.equal((await query('Prebator')).total, 1);
      });

      it('forgives typos up to 24 characters, and matches a longer word exactly only', async function () {
        const long = 'abcdefghijklmnopqrstuvwxyzab'; // 28 letters, a "word" no typo may reach
        const [w24, w28] = await load(searchDoc('Donaudampfschifffahrtsge'), searchDoc(long));
        // 24 letters, one substitution: found.
        assert.deepEqual((await query('Donaudampfschifffahrtsgx')).ids, [w24!.id]);
        assert.deepEqual((await query(long)).ids, [w28!.id]);
        assert.deepEqual(await query(`${long.slice(0, -1)}x`), { total: 0, ids: [] });
      });

      it('answers a 4,000-character word and a 500-word query quickly (bounded typo work)', async function () {
        const [titanic] = await load(searchDoc('Titanic'), searchDoc('Casablanca'));
        const letters = 'qwertyuiopasdfghjklzxcvbnm';
        const word = Array.from({ length: 4000 }, (_, i) => letters[(i * 7) % 26]).join('');
        const words = Array.from({ length: 500 }, (_, i) => `titanc${letters.slice(i % 20, (i % 20) + 6)}`).join(' ');
        for (const q of [word, `titanc ${word}`, words]) {
          const started = performance.now();
          await query(q);
          const ms = performance.now() - started;
          assert.ok(ms < 1000, `${q.length} characters took ${ms.toFixed(0)} ms`);
        }
        // Words past the looked-up ones are ignored, the first ones still count.
        assert.deepEqual((await query(`titanc ${word}`)).ids, [titanic!.id]);
      });

      it("matches the last word as a prefix ('Tit' finds Titanic), and only the last word", async function () {
        const [titanic, reborn] = await load(searchDoc('Titanic'), searchDoc('Dragon Reborn'));
        assert.deepEqual((await query('Tit')).ids, [titanic!.id]);
        assert.deepEqual((await query('dragon reb')).ids, [reborn!.id]);
        // 'tit' is not the last word here, so it is not a prefix of 'titanic'.
        assert.deepEqual((await query('tit reborn')).ids, [reborn!.id]);
      });

      it('ignores case and accents on both sides', async function () {
        const [amelie, leon] = await load(searchDoc('Amélie'), searchDoc('Leon'));
        assert.deepEqual((await query('AMELIE')).ids, [amelie!.id]);
        assert.deepEqual((await query('Léon')).ids, [leon!.id]);
      });

      it('finds a name written with hyphens or dots when it is typed as one word', async function () {
        const [spiderMan, spiderMan2, xMen, et, wallE] = await load(
          searchDoc('Spider-Man', { popularity: 100 }),
          searchDoc('Spider-Man 2', { popularity: 90 }),
          searchDoc('X-Men', { popularity: 80 }),
          searchDoc('E.T. the Extra-Terrestrial', { popularity: 70 }),
          searchDoc('WALL-E', { popularity: 60 }),
          searchDoc('The Omen', { popularity: 5000 }),
          searchDoc('Spider', { popularity: 5000 }),
          // One typo from "xmen" as a whole title, streaming where X-Men does not: "xmen" is a
          // whole word of X-Men as written, which ranks first (MATCH_EVERY_WORD).
          searchDoc('Amen', { popularity: 5000, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('spiderman')).ids.slice(0, 2), [spiderMan!.id, spiderMan2!.id]);
        assert.equal((await query('spiderman 2')).ids[0], spiderMan2!.id);
        assert.equal((await query('xmen')).ids[0], xMen!.id);
        assert.equal((await query('et')).ids[0], et!.id);
        assert.equal((await query('extraterrestrial')).ids[0], et!.id);
        assert.equal((await query('walle')).ids[0], wallE!.id);
        // Written apart, as before.
        assert.equal((await query('spider man')).ids[0], spiderMan!.id);
      });

      it('takes a name typed as one word for the whole title it is (xmen is X-Men, before its sequels)', async function () {
        const [xMen, lastStand, spiderMan, farFrom] = await load(
          searchDoc('X-Men', { popularity: 10 }),
          // More popular and streaming in the US, where X-Men does not: it still comes second,
          // as it does for "x men", since "xmen" is the whole of X-Men and only begins it.
          searchDoc('X-Men: The Last Stand', { popularity: 500, availability: { US: ['nfx'] } }),
          searchDoc('Spider-Man', { popularity: 10 }),
          searchDoc('Spider-Man: Far From Home', { popularity: 900, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('xmen')).ids.slice(0, 2), [xMen!.id, lastStand!.id]);
        assert.deepEqual((await query('x men')).ids.slice(0, 2), [xMen!.id, lastStand!.id]);
        assert.deepEqual((await query('spiderman')).ids.slice(0, 2), [spiderMan!.id, farFrom!.id]);
        // The joined whole name of the sequel is the sequel; typed in part, it begins it.
        assert.equal((await query('xmen the last stand')).ids[0], lastStand!.id);
        assert.equal((await query('spiderman far fr')).ids[0], farFrom!.id);
      });

      it('finds a sequel by its number written another way (rocky 2 is Rocky II, oceans 11 is Ocean\'s Eleven)', async function () {
        const [rocky, rocky2, rocky3, oceans11, oceans13, ep5] = await load(
          searchDoc('Rocky', { popularity: 900, availability: { US: ['nfx'] } }),
          searchDoc('Rocky II', { popularity: 50 }),
          searchDoc('Rocky III', { popularity: 800, availability: { US: ['nfx'] } }),
          searchDoc("Ocean's Eleven", { popularity: 50 }),
          searchDoc("Ocean's Thirteen", { popularity: 900, availability: { US: ['nfx'] } }),
          searchDoc('Star Wars: Episode V - The Empire Strikes Back', { popularity: 50 }),
          searchDoc('Star Wars: Episode IV - A New Hope', { popularity: 900, availability: { US: ['nfx'] } }),
          searchDoc('11:14', { popularity: 900, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('rocky 2')).ids.slice(0, 1), [rocky2!.id]);
        assert.deepEqual((await query('rocky two')).ids.slice(0, 1), [rocky2!.id]);
        assert.equal((await query('rocky ii')).ids[0], rocky2!.id);
        assert.equal((await query('rocky 3')).ids[0], rocky3!.id);
        assert.equal((await query('oceans 11')).ids[0], oceans11!.id);
        assert.equal((await query('oceans 13')).ids[0], oceans13!.id);
        assert.equal((await query('star wars 5')).ids[0], ep5!.id);
        assert.equal((await query('rocky')).ids[0], rocky!.id);
      });

      it('takes "&" and "and" for one word (fast and furious is Fast & Furious)', async function () {
        const [fastFurious, , pride2005, pride1995] = await load(
          searchDoc('Fast & Furious', { popularity: 10 }),
          // Holds both words too, more popular and streaming in the US: second.
          searchDoc('2 Fast 2 Furious', { popularity: 900, availability: { US: ['nfx'] } }),
          searchDoc('Pride & Prejudice', { popularity: 50 }),
          searchDoc('Pride and Prejudice', { popularity: 40 }),
        );
        assert.equal((await query('fast and furious')).ids[0], fastFurious!.id);
        assert.equal((await query('fast & furious')).ids[0], fastFurious!.id);
        // Both are the whole title, whichever way it is written (relevance orders them).
        const both = [pride2005!.id, pride1995!.id].sort();
        assert.deepEqual((await query('pride and prejudice')).ids.slice(0, 2).sort(), both);
        assert.deepEqual((await query('pride & prejudice')).ids.slice(0, 2).sort(), both);
      });

      it('finds a title when the query leaves out its articles', async function () {
        const [lotr] = await load(
          searchDoc('The Lord of the Rings', { popularity: 1 }),
          searchDoc('Lord of War', { popularity: 1000 }),
          searchDoc('The Rings of Power', { popularity: 1000 }),
        );
        assert.equal((await query('Lord of Rings')).ids[0], lotr!.id);
        assert.equal((await query('lord of the rings')).ids[0], lotr!.id);
      });
    });

    describe('ranking', function () {
      it('ranks the titles a query begins by popularity, above titles that only contain its words', async function () {
        const [matrix, reloaded, , mask, , man] = await load(
          searchDoc('The Matrix', { popularity: 380_000, availability: {} }),
          searchDoc('The Matrix Reloaded', { popularity: 150_000, availability: { US: ['nfx'] } }),
          searchDoc('Mad Max', { popularity: 36_000, availability: { US: ['nfx'] } }),
          searchDoc('The Mask', { popularity: 73_000 }),
          searchDoc('Mamma Mia', { popularity: 1_000, availability: { US: ['nfx'] } }),
          // "ma" is not where it begins: only contains a word that does.
          searchDoc('Iron Man', { popularity: 900_000, availability: { US: ['nfx'] } }),
        );
        const { ids, total } = await query('The Ma', { limit: 6 });
        assert.equal(total, 6);
        assert.deepEqual(ids.slice(0, 3), [matrix!.id, reloaded!.id, mask!.id]);
        assert.equal(ids[5], man!.id);
        // Every word but the last exact, the last cut: the title it begins.
        assert.deepEqual((await query('the matrix rel')).ids[0], reloaded!.id);
        // The whole title still comes before the longer titles it begins.
        assert.deepEqual((await query('the matrix')).ids.slice(0, 2), [matrix!.id, reloaded!.id]);
      });

      it('puts a misspelt whole title before titles that merely contain its words', async function () {
        const [glory] = await load(
          searchDoc('Glory', { popularity: 10, availability: {} }),
          searchDoc('Blades of Glory', { popularity: 5000, availability: { US: ['nfx'] } }),
          searchDoc('The Work and the Glory', { popularity: 5000, availability: { US: ['nfx'] } }),
          searchDoc('Glory Road', { popularity: 5000, availability: { US: ['nfx'] } }),
        );
        assert.equal((await query('glry')).ids[0], glory!.id);
      });

      it('puts a title holding every word of the query whole before one the query is a typo of, or only begins a word of', async function () {
        // "amelie" is one typo from Amelia, and a whole word of Amélie's title once its elided
        // "d'" is split off (normalize.ts), typed with it or not.
        const [amelie, amelia] = await load(
          searchDoc("Le Fabuleux destin d'Amélie Poulain", { popularity: 100, availability: {} }),
          searchDoc('Amelia', { popularity: 5000, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('amelie')).ids, [amelie!.id, amelia!.id]);
        assert.equal((await query("d'amelie")).ids[0], amelie!.id);
        assert.equal((await query('destin damelie')).ids[0], amelie!.id);
        // "nights" is one typo from Night, and a whole word of Boogie Nights.
        const [boogie, night] = await load(
          searchDoc('Boogie Nights', { popularity: 100, availability: {} }),
          searchDoc('Night', { popularity: 5000, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('nights')).ids, [boogie!.id, night!.id]);
        assert.deepEqual((await query('night')).ids, [night!.id, boogie!.id]);
        // Part III streams and is the more popular, but "ii" is only the beginning of its "iii".
        const [two, three] = await load(
          searchDoc('The Godfather: Part II', { popularity: 24, availability: {} }),
          searchDoc('The Godfather: Part III', { popularity: 27, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('godfather ii')).ids.slice(0, 2), [two!.id, three!.id]);
        assert.deepEqual((await query('godfather iii')).ids[0], three!.id);
        // Whole words of one name: a word of the title and one of the original title do not add up.
        const [split, whole] = await load(
          searchDoc('Harbor Lights', { originalTitle: 'Die Nacht', popularity: 5000, availability: { US: ['nfx'] } }),
          searchDoc('Harbor Nacht Club', { popularity: 1, availability: {} }),
        );
        assert.deepEqual((await query('harbor nacht')).ids.slice(0, 2), [whole!.id, split!.id]);
      });

      it('puts titles available in the query country first among equal matches', async function () {
        const [elsewhere, here] = await load(
          searchDoc('Night Train', { popularity: 5000, availability: { GB: ['bbc'] } }),
          searchDoc('Night Train', { popularity: 1, availability: { US: ['nfx'] } }),
          searchDoc('Night Train', { popularity: 50, availability: { US: [] } }),
        );
        const { ids } = await query('night train');
        assert.equal(ids[0], here!.id);
        assert.equal((await query('night train', { country: 'GB' })).ids[0], elsewhere!.id);
      });

      it('breaks ties between equal matches by popularity', async function () {
        const [low, high] = await load(
          searchDoc('Harbor Lights', { popularity: 3, availability: { US: ['nfx'] } }),
          searchDoc('Harbor Lights', { popularity: 300, availability: { US: ['nfx'] } }),
        );
        assert.deepEqual((await query('harbor lights')).ids, [high!.id, low!.id]);
      });

      it('ranks the title the query names first even when similar titles are far more popular', async function () {
        const [titanic] = await load(
          searchDoc('Titanic', { popularity: 1 }),
          searchDoc('Titans', { popularity: 100000 }),
          searchDoc('Titanic II: The Return', { popularity: 100000 }),
          searchDoc('Clash of the Titans', { popularity: 100000 }),
        );
        assert.equal((await query('titanic')).ids[0], titanic!.id);
        assert.ok((await query('titanc')).ids.slice(0, 3).includes(titanic!.id));
      });
    });

    describe('filters and pagination', function () {
      it('filters by kind, genre and provider in the query country, and counts after filtering', async function () {
        const [film, show, drama] = await load(
          searchDoc('Crimson Harbor', { genres: ['thriller'], availability: { US: ['nfx'], GB: ['bbc'] } }),
          searchDoc('Crimson Harbor', { id: 'tv00000001', kind: 'tv_show', genres: ['drama'], availability: { US: ['hulu'] } }),
          searchDoc('Crimson Harbor Nights', { genres: ['drama', 'romance'], availability: { GB: ['nfx'] } }),
        );
        assert.equal((await query('crimson harbor')).total, 3);
        assert.deepEqual(await query('crimson harbor', { kind: 'tv_show' }), { total: 1, ids: [show!.id] });
        assert.deepEqual((await query('crimson harbor', { kind: 'movie' })).ids.slice().sort(), [film!.id, drama!.id].sort());
        assert.deepEqual((await query('crimson harbor', { genre: 'drama' })).ids.slice().sort(), [show!.id, drama!.id].sort());
        assert.deepEqual(await query('crimson harbor', { provider: 'nfx' }), { total: 1, ids: [film!.id] });
        assert.deepEqual(await query('crimson harbor', { provider: 'nfx', country: 'GB' }), { total: 1, ids: [drama!.id] });
        assert.deepEqual(await query('crimson harbor', { provider: 'bbc', genre: 'drama', country: 'GB' }), { total: 0, ids: [] });
      });

      it('pages through all matches with offset and limit, and reports the total before paging', async function () {
        const docs = await load(...Array.from({ length: 25 }, (_, i) => searchDoc(`Harbor ${i + 1}`, { popularity: i })));
        const all = await query('harbor', { limit: 100 });
        assert.equal(all.total, 25);
        assert.deepEqual(all.ids.slice().sort(), docs.map((d) => d.id).sort());

        const pages = [];
        for (let offset = 0; offset < 25; offset += 10) pages.push(await query('harbor', { limit: 10, offset }));
        assert.deepEqual(pages.map((p) => p.ids.length), [10, 10, 5]);
        assert.deepEqual(pages.map((p) => p.total), [25, 25, 25]);
        assert.deepEqual(pages.flatMap((p) => p.ids), all.ids);

        assert.deepEqual(await query('harbor', { limit: 0 }), { total: 25, ids: [] });
        assert.deepEqual(await query('harbor', { offset: 30 }), { total: 25, ids: [] });
      });
    });

    describe('locales', function () {
      it("searches a title by its title in the query language, and by its base and original titles", async function () {
        const [boat] = await load(
          searchDoc('The Boat', { originalTitle: 'Das Boot', titles: { fr: 'Le Bateau' } }),
          searchDoc('Boat Trip'),
        );
        assert.deepEqual((await query('bateau', { lang: 'fr' })).ids, [boat!.id]);
        assert.deepEqual(await query('bateau', { lang: 'en' }), { total: 0, ids: [] });
        assert.equal((await query('the boat', { lang: 'fr' })).ids[0], boat!.id);
        assert.equal((await query('das boot', { lang: 'en' })).ids[0], boat!.id);
      });

      it('finds a Japanese or Chinese title by any word of it, though such titles have no spaces', async function () {
        const [silent, lights, spirited, train] = await load(
          searchDoc('The Silent Harbor', { titles: { ja: '静かな港' } }),
          searchDoc('Harbor Lights', { titles: { ja: '港の灯' } }),
          searchDoc('Spirited Away', { titles: { ja: '千と千尋の神隠し', zh: '千与千寻' } }),
          searchDoc('Night Train', { titles: { ja: '夜行列車' } }),
        );
        const ja = { lang: 'ja' };
        assert.deepEqual((await query('港', ja)).ids.sort(), [silent!.id, lights!.id].sort());
        assert.deepEqual((await query('かな港', ja)).ids, [silent!.id]);
        assert.equal((await query('静かな港', ja)).ids[0], silent!.id);
        assert.deepEqual((await query('神隠し', ja)).ids, [spirited!.id]);
        assert.deepEqual((await query('千尋', ja)).ids, [spirited!.id]);
        assert.deepEqual((await query('列車', ja)).ids, [train!.id]);
        assert.deepEqual((await query('千寻', { lang: 'zh' })).ids, [spirited!.id]);
      });

      it('forgets translated titles when a document is removed or its translation changes', async function () {
        const [doc] = await load(searchDoc('The Boat', { titles: { fr: 'Le Bateau' } }));
        await index.upsert([{ ...doc!, titles: { fr: 'La Barque' } }]);
        assert.deepEqual(await query('bateau', { lang: 'fr' }), { total: 0, ids: [] });
        assert.deepEqual((await query('barque', { lang: 'fr' })).ids, [doc!.id]);
        await index.remove([doc!.id]);
        assert.deepEqual(await query('barque', { lang: 'fr' }), { total: 0, ids: [] });
      });
    });
  });
}
