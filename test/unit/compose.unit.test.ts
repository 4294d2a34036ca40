/**
 * `docker-compose.yml` for users: no Docker engine runs here, so the file is parsed with the YAML
 * parser already installed (js-yaml, the one mocha uses) and checked for what `docker compose`
 * would refuse or what would make the topology wrong: merge keys resolved, every image pinned,
 * the roles each in processes of their own, every dependency and volume declared, and every
 * variable handed to Marquee documented in docs/operations.md.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ROLES } from '../../services/shared/config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  profiles?: string[];
  healthcheck?: { test: string[] };
}
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

describe('docker-compose.yml', () => {
  const compose = yaml.load(readFileSync(`${root}docker-compose.yml`, 'utf8')) as Compose;
  const services = Object.entries(compose.services);
  const marquee = services.filter(([, s]) => s.build !== undefined);
  const rolesOf = (s: Service) => (s.command?.[0] === 'start' && s.command[1] === '--roles' ? (s.command[2] ?? '').split(',') : []);

  it('runs each role in processes of its own: 2 API, 2 ingest, 2 projector, 1-2 scheduler', () => {
    const count = (role: string) => marquee.filter(([, s]) => !s.profiles && rolesOf(s).includes(role)).length;
    assert.deepEqual(ROLES.map((r) => [r, count(r) >= (r === 'scheduler' ? 1 : 2)]), ROLES.map((r) => [r, true]));
    for (const [name, s] of marquee) if (!s.profiles) assert.equal(rolesOf(s).length, 1, `${name} runs one role`);
  });

  it('pins every server image to a version', () => {
    for (const [name, s] of services.filter(([, s]) => s.build === undefined)) {
      assert.match(s.image ?? '', /^[\w./-]+:\d+(\.\d+){1,2}(-[\w.]+)?$/, `${name}: ${s.image}`);
    }
    const images = services.map(([, s]) => s.image?.split(':')[0]);
    for (const server of ['apache/kafka', 'mongo', 'opensearchproject/opensearch', 'redis']) assert.ok(images.includes(server), server);
    assert.match(readFileSync(`${root}Dockerfile`, 'utf8'), /^FROM node:24\.\d+\.\d+-/m);
  });

  it('points every Marquee process at the servers, and the API at every interface of its container', () => {
    for (const [name, s] of marquee) {
      const env = s.environment ?? {};
      for (const v of ['KAFKA_BROKERS', 'MONGODB_URL', 'OPENSEARCH_URL', 'REDIS_URL', 'LINK_TOKEN_KEYS', 'DOWNLOAD_SIGNING_KEY']) assert.ok(env[v], `${name}: ${v}`);
      assert.equal(env.HOST, '0.0.0.0', name);
      assert.ok(s.volumes?.some((v) => v.endsWith(`:${env.DATA_DIR}`)), `${name}: DATA_DIR on a volume`);
    }
    for (const [name, s] of marquee.filter(([, s]) => rolesOf(s).includes('api'))) {
      assert.ok(s.ports?.length === 1 && s.healthcheck, `${name} publishes a port and checks /readyz`);
    }
  });

  it('checks the readiness of every role process: the API on its port, the others on their ops port', () => {
    for (const [name, s] of marquee.filter(([, s]) => rolesOf(s).length > 0)) {
      const probe = (s.healthcheck?.test ?? []).join(' ');
      const port = rolesOf(s).includes('api') ? s.environment?.PORT : s.environment?.OPS_PORT;
      assert.ok(port, `${name}: ${rolesOf(s).includes('api') ? 'PORT' : 'OPS_PORT'} set`);
      assert.match(probe, new RegExp(`127\\.0\\.0\\.1:${port}/readyz`), `${name} checks /readyz on port ${port}`);
      // Every other variable as the API processes have it: the ops env only adds OPS_PORT.
      const { OPS_PORT: _ops, ...rest } = s.environment ?? {};
      assert.deepEqual(rest, compose.services.api1?.environment, `${name}: the shared environment`);
    }
  });

  it('declares every dependency and volume it uses, and documents every variable', () => {
    const table = readFileSync(`${root}docs/operations.md`, 'utf8');
    for (const [name, s] of services) {
      for (const dep of Object.keys(s.depends_on ?? {})) assert.ok(compose.services[dep]?.healthcheck, `${name} waits for ${dep}, which has a health check`);
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0] as string;
        if (!source.startsWith('.') && !source.startsWith('/')) assert.ok(source in compose.volumes, `${name}: volume ${source}`);
      }
    }
    for (const [, s] of marquee) for (const v of Object.keys(s.environment ?? {})) assert.match(table, new RegExp(`\\| \`${v}\` \\|`), v);
  });
});
