import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import type Koa from 'koa';
import { AppError, isAppError } from '../../contracts/errors.ts';
import { endpoints } from '../../services/api/endpoints.ts';
import { errorMiddleware } from '../../services/api/errors.ts';
import { buildOpenApi, openApiPath } from '../../services/api/openapi.ts';
import { paramSchema, parseParams, p, type ParamDef } from '../../services/api/params.ts';
import { ExpiringMap, rateLimiter } from '../../services/api/rateLimit.ts';
import { createAjv } from '../e2e/api.openapi.ts';

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
  throw new assert.AssertionError({ message: 'expected an AppError' });
}

describe('request parameters', () => {
  const defs: ParamDef[] = [p.country(), p.limit(20, 100), p.offset(), p.kind(), p.lang('x'),
    { name: 'hide_children', in: 'query', type: 'boolean', default: false, description: 'x' },
    { name: 'date', in: 'query', type: 'date', description: 'x' }];

  it('upper-cases the country, parses integers and applies defaults', () => {
    assert.deepEqual(parseParams(defs, { country: 'us', limit: '7' }, {}), {
      country: 'US', limit: 7, offset: 0, kind: undefined, lang: undefined, hide_children: false, date: undefined,
    });
  });

  it('clamps a limit above the maximum and allows limit=0', () => {
    assert.equal(parseParams(defs, { country: 'US', limit: '1000' }, {}).limit, 100);
    assert.equal(parseParams(defs, { country: 'US', limit: '0' }, {}).limit, 0);
  });

  it('refuses a missing required parameter with missing_parameter naming it', () => {
    const err = refusal(() => parseParams(defs, {}, {}));
    assert.equal(err.code, 'missing_parameter');
    assert.deepEqual(err.details, { parameter: 'country' });
  });

  for (const [name, value] of [
    ['limit', '-1'], ['limit', '1.5'], ['limit', 'ten'], ['offset', '-3'], ['country', 'USA'], ['country', 'U'],
    ['kind', 'film'], ['lang', 'xx'], ['hide_children', '1'], ['date', '2026-02-30'], ['date', '20260101'],
  ] as const) {
    it(`refuses ${name}=${value} with invalid_parameter`, () => {
      const err = refusal(() => parseParams(defs, { country: 'US', [name]: value }, {}));
      assert.equal(err.code, 'invalid_parameter');
      assert.deepEqual(err.details, { parameter: name });
    });
  }

  it('refuses a parameter given twice', () => {
    const err = refusal(() => parseParams(defs, { country: ['US', 'DE'] }, {}));
    assert.equal(err.code, 'invalid_parameter');
  });

  it('accepts a lang in any case and answers it lower-cased', () => {
    assert.equal(parseParams(defs, { country: 'US', lang: 'DE' }, {}).lang, 'de');
  });

  it('refuses an empty typed value, and reads empty free text as absent', () => {
    for (const name of ['limit', 'kind', 'lang', 'hide_children', 'date']) {
      const err = refusal(() => parseParams(defs, { country: 'US', [name]: '' }, {}));
      assert.deepEqual([err.code, err.details], ['invalid_parameter', { parameter: name }], name);
    }
    const free: ParamDef = { name: 'genre', in: 'query', type: 'string', default: 'all', description: 'x' };
    assert.equal(parseParams([free], { genre: '' }, {}).genre, 'all');
    assert.equal(refusal(() => parseParams([p.country()], { country: '' }, {})).code, 'missing_parameter');
  });

  it('answers a path parameter not of its form with not_found, naming it', () => {
    const err = refusal(() => parseParams([p.mediaId()], {}, { id: 'mv123' }));
    assert.deepEqual([err.code, err.details], ['not_found', { parameter: 'id' }]);
    assert.equal(parseParams([p.mediaId()], {}, { id: 'tv00000003' }).id, 'tv00000003');
  });

  it('refuses an integer above its maximum, and counts maxLength in characters', () => {
    const offset = p.offset();
    assert.equal(parseParams([offset], { offset: String(Number.MAX_SAFE_INTEGER) }, {}).offset, Number.MAX_SAFE_INTEGER);
    assert.equal(refusal(() => parseParams([offset], { offset: '9007199254740992' }, {})).code, 'invalid_parameter');
    const short: ParamDef = { name: 't', in: 'query', type: 'string', maxLength: 3, description: 'x' };
    assert.equal(parseParams([short], { t: '\u{1F600}\u{1F600}\u{1F600}' }, {}).t, '\u{1F600}\u{1F600}\u{1F600}');
    assert.equal(refusal(() => parseParams([short], { t: 'abcd' }, {})).code, 'invalid_parameter');
  });

  it('accepts exactly the string values its documented schema allows', () => {
    const ajv = createAjv();
    const candidates = ['', 'US', 'us', 'uS', 'USA', 'U1', '\u212An', 'kn', 'KN', 'de', 'xx', 'true', 'false', 'True', 'movie',
      'tv_show', 'film', '2024-02-29', '2026-02-29', '2026-1-01', 'mv00000001', 'mv0000001', 'a-b', 'a--b', '-a', '\u{1F600}\u{1F600}\u{1F600}', 'abcd'];
    const typed: ParamDef[] = [p.country(), p.lang('x'), p.kind(), p.mediaId(),
      { name: 'b', in: 'query', type: 'boolean', description: 'x' }, { name: 'd', in: 'query', type: 'date', description: 'x' },
      { name: 's', in: 'query', type: 'string', pattern: /^[a-z]+(?:-[a-z]+)*$/, description: 'x' },
      { name: 't', in: 'query', type: 'string', maxLength: 3, required: true, description: 'x' }];
    for (const def of typed) {
      const validate = ajv.compile(paramSchema(def));
      for (const value of candidates) {
        if (value === '' && def.in === 'path') continue;
        let accepted = true;
        try {
          parseParams([def], { [def.name]: value }, { [def.name]: value });
        } catch (err) {
          if (!isAppError(err)) throw err;
          accepted = false;
        }
        assert.equal(accepted, validate(value), `${def.name}=${JSON.stringify(value)}: code ${accepted ? 'accepts' : 'refuses'} it, the schema does not agree`);
      }
    }
  });
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.0.3 according to swagger-parser', async () => {
    const doc = buildOpenApi(endpoints(() => ({})), { version: '1.2.3' });
    assert.equal(doc.openapi, '3.0.3');
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it('links each 200 answer only to operations and parameters that exist, with values its schema has', () => {
    const doc = buildOpenApi(endpoints(() => ({})), { version: '1' }) as any;
    const operations = new Map<string, any>();
    for (const item of Object.values(doc.paths) as any[]) operations.set(item.get.operationId, item.get);
    /** The component schema a `$ref` names, followed until it is one. */
    const deref = (schema: any): any => (schema?.$ref ? deref(doc.components.schemas[String(schema.$ref).split('/').at(-1) as string]) : schema);
    /** The schema at a JSON pointer into an answer of `schema` (a number steps into an array's items). */
    const schemaAt = (schema: any, pointer: string): any =>
      pointer.split('/').slice(1).reduce((at, step) => deref(/^\d+$/.test(step) ? deref(at)?.items : deref(at)?.properties?.[step]), deref(schema));
    const seen: string[] = [];
    for (const [from, source] of operations) {
      const ok = source.responses['200'];
      for (const [name, link] of Object.entries(ok?.links ?? {}) as Array<[string, any]>) {
        const target = operations.get(link.operationId);
        assert.ok(target, `${from} links ${name} to ${link.operationId}, which is no operation`);
        for (const [key, expression] of Object.entries(link.parameters) as Array<[string, string]>) {
          const [where, param] = key.split('.');
          const declared = target.parameters.find((x: any) => x.name === param && x.in === where);
          assert.ok(declared, `${from} -> ${link.operationId}: no ${where} parameter ${param}`);
          if (expression.startsWith('$response.body#')) {
            const value = schemaAt(ok.content['application/json'].schema, expression.slice('$response.body#'.length));
            assert.ok(value?.type === 'string' || value?.type === 'integer', `${from} -> ${link.operationId}: ${expression} is no string or integer of the answer`);
            assert.equal(value.type, declared.schema.type === 'integer' ? 'integer' : 'string', `${from} -> ${link.operationId}: ${expression} against ${param}`);
          } else {
            const query = /^\$request\.query\.(\w+)$/.exec(expression);
            assert.ok(query && source.parameters.some((x: any) => x.in === 'query' && x.name === query[1]), `${from}: ${expression} names no query parameter of its own`);
          }
          seen.push(`${from}->${link.operationId}`);
        }
      }
    }
    // The walks a client (and schemathesis's stateful phase) takes from a listing to a season's episodes.
    for (const walk of ['search->getMedia', 'getRankings->getSeasons', 'getMedia->getSeasons', 'getSeasons->getEpisodes', 'listCollections->getCollection', 'getMediaLinks->followLink']) {
      assert.ok(seen.includes(walk), `no link ${walk}`);
    }
  });

  it('turns koa paths into OpenAPI templates', () => {
    assert.equal(openApiPath('/v1/media/:id/seasons/:season/episodes'), '/v1/media/{id}/seasons/{season}/episodes');
    assert.equal(openApiPath('/v1/snapshots/file/:version/*path'), '/v1/snapshots/file/{version}/{path}');
  });

  it('documents each parameter of the definitions, with its clamping maximum in words', () => {
    const doc = buildOpenApi(endpoints(() => ({})), { version: '1' }) as any;
    const params = doc.paths['/v1/search'].get.parameters;
    assert.deepEqual(params.map((x: any) => [x.name, x.required]), [
      ['q', true], ['country', true], ['lang', false], ['limit', false], ['offset', false], ['kind', false], ['genre', false], ['provider', false],
    ]);
    assert.match(params[3].description, /clamped to 100/);
    assert.deepEqual(doc.paths['/v1/snapshots'].get.security, [{}, { bearerAuth: [] }, { apiKeyHeader: [] }]);
    assert.deepEqual(doc.components.schemas.Media.properties.original_title, { type: 'string', nullable: true });
  });
});

function fakeCtx(ip: string): Koa.Context {
  const headers: Record<string, string> = {};
  return {
    ip,
    state: {},
    status: 404,
    set(field: string | Record<string, unknown>, value?: unknown) {
      if (typeof field === 'string') headers[field.toLowerCase()] = String(value);
      else for (const [k, v] of Object.entries(field)) headers[k.toLowerCase()] = String(v);
    },
    response: { get: (field: string) => headers[field.toLowerCase()] ?? '' },
    headers,
  } as unknown as Koa.Context;
}

describe('the in-memory rate-limit store', () => {
  it('drops entries whose window has ended when written to', () => {
    let now = 1_000_000;
    const map = new ExpiringMap(() => now, 0);
    map.set('a', { reset: (now + 1000) / 1000 });
    map.set('b', { reset: (now + 5000) / 1000 });
    now += 2000;
    map.set('c', { reset: (now + 1000) / 1000 });
    assert.deepEqual([...map.keys()], ['b', 'c']);
  });

  it('sweeps at most once per interval', () => {
    let now = 0;
    const map = new ExpiringMap(() => now, 1000);
    map.set('a', { reset: 0.5 });
    now = 600;
    map.set('b', { reset: 10 });
    assert.equal(map.size, 2);
    now = 1000;
    map.set('c', { reset: 10 });
    assert.deepEqual([...map.keys()], ['b', 'c']);
  });

  it('keeps the in-memory counters bounded to the clients of the current window', async () => {
    const memory = new ExpiringMap(Date.now, 0);
    // A window long enough that a loaded machine still counts all 50 clients inside it.
    const limit = rateLimiter({ max: 5, windowMs: 400, memory });
    for (let i = 0; i < 50; i += 1) await limit(fakeCtx(`10.0.0.${i}`), async () => {});
    assert.equal(memory.size, 50);
    const windowEnd = Date.now() + 410;
    // Wait for the condition "the window is over", polling instead of one fixed sleep.
    while (Date.now() <= windowEnd) await new Promise((resolve) => setTimeout(resolve, 5));
    await limit(fakeCtx('10.0.1.1'), async () => {});
    assert.equal(memory.size, 1);
  });

  it('counts per client and refuses past the limit with rate_limited and seconds to wait', async () => {
    const limit = rateLimiter({ max: 2, windowMs: 60_000, memory: new ExpiringMap() });
    const statuses: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const ctx = fakeCtx('10.9.9.9');
      try {
        await limit(ctx, async () => { ctx.status = 200; });
        statuses.push(`${ctx.status} ${ctx.response.get('RateLimit-Remaining')}`);
      } catch (err) {
        assert.ok(isAppError(err, 'rate_limited'));
        const reset = Number(ctx.response.get('RateLimit-Reset'));
        assert.ok(reset >= 59 && reset <= 60, `reset ${reset}`);
        assert.equal(err.details?.retry_after, reset);
        statuses.push('429');
      }
    }
    assert.deepEqual(statuses, ['200 1', '200 0', '429']);
  });
});

/** Just enough of ioredis for async-ratelimiter: its Lua script, re-enacted in memory. */
class FakeRedis {
  readonly logs = new Map<string, number[]>();
  [command: string]: unknown;
  defineCommand(name: string): void {
    this[name] = async (key: string, now: number, duration: number, max: number) => {
      const log = (this.logs.get(key) ?? []).filter((t) => t > now - duration);
      const remaining = max - log.length;
      const oldest = log[0] ?? now;
      if (remaining <= 0) return [0, Math.floor((oldest + duration) / 1000), max];
      log.push(now);
      this.logs.set(key, log);
      return [remaining, Math.floor(((log[0] ?? now) + duration) / 1000), max];
    };
  }
}

describe('the Redis rate-limit driver', () => {
  it('shares counters through the client and reports seconds until reset', async () => {
    const redis = new FakeRedis();
    const first = rateLimiter({ max: 2, windowMs: 60_000, redis });
    const second = rateLimiter({ max: 2, windowMs: 60_000, redis });
    const results: string[] = [];
    for (const limit of [first, second, first]) {
      const ctx = fakeCtx('10.1.1.1');
      try {
        await limit(ctx, async () => { ctx.status = 200; });
        results.push(`200 ${ctx.response.get('RateLimit-Remaining')}`);
      } catch (err) {
        assert.ok(isAppError(err, 'rate_limited'));
        results.push('429');
      }
      const reset = Number(ctx.response.get('RateLimit-Reset'));
      assert.ok(Number.isInteger(reset) && reset >= 58 && reset <= 60, `reset ${reset}`);
    }
    assert.deepEqual(results, ['200 1', '200 0', '429']);
    assert.deepEqual([...redis.logs.keys()], ['marquee-ratelimit:ip:10.1.1.1']);
  });

  it('counts the seconds until reset on the clock the driver stamps with, whatever the wall clock did since it loaded', async () => {
    const limit = rateLimiter({ max: 2, windowMs: 60_000, redis: new FakeRedis() });
    // The wall clock 23 s ahead of where the driver's clock (its load time plus monotonic time)
    // puts it: what an NTP step or a paused and resumed machine leaves.
    const wall = Date.now;
    Date.now = () => wall() + 23_000;
    try {
      const ctx = fakeCtx('10.1.1.2');
      await limit(ctx, async () => { ctx.status = 200; });
      const reset = Number(ctx.response.get('RateLimit-Reset'));
      assert.ok(reset >= 59 && reset <= 60, `reset ${reset}`);
    } finally {
      Date.now = wall;
    }
  });
});

describe('the error middleware', () => {
  async function run(err: unknown): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
    const headers: Record<string, string> = {};
    const ctx = { path: '/v1/x', status: 200, body: undefined as unknown, set: (k: string, v: string) => { headers[k] = v; } };
    await errorMiddleware()(ctx as unknown as Koa.Context, async () => { throw err; });
    return { status: ctx.status, body: ctx.body, headers };
  }

  it('exposes the message and details of a 4xx', async () => {
    const r = await run(new AppError('invalid_parameter', "Parameter 'limit' must be a non-negative integer.", { details: { parameter: 'limit' } }));
    assert.deepEqual(r, { status: 400, headers: {}, body: { error: "Parameter 'limit' must be a non-negative integer.", code: 'invalid_parameter', details: { parameter: 'limit' } } });
  });

  it('hides the message of a dependency outage behind a generic 503', async () => {
    const r = await run(new AppError('unavailable', 'mongodb://secret-host refused'));
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, { error: 'The service is temporarily unavailable; try again shortly.', code: 'unavailable' });
  });

  it('answers anything unexpected with a generic 500 internal', async () => {
    const r = await run(new TypeError('x is undefined'));
    assert.deepEqual(r.body, { error: 'Something went wrong on our side.', code: 'internal' });
    assert.equal(r.status, 500);
  });

  it('sets WWW-Authenticate on 401 and Allow on 405', async () => {
    assert.equal((await run(new AppError('unauthorized', 'no key'))).headers['WWW-Authenticate'], 'Bearer');
    assert.equal((await run(new AppError('method_not_allowed', 'no'))).headers.Allow, 'GET, HEAD');
  });
});
