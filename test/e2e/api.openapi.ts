/**
 * Validates response bodies against the served OpenAPI document. OpenAPI 3.0 schemas are not
 * JSON Schema: `nullable: true` becomes a `'null'` member of `type` (or an anyOf with null for
 * a `$ref`), and OpenAPI-only keywords are dropped, so ajv checks exactly what the document says.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

type Json = Record<string, unknown>;

export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'nullable' || key === 'example' || key === 'xml' || key === 'externalDocs' || key === 'discriminator') continue;
    if (key === 'format' && value === 'binary') continue;
    out[key] = key === 'properties'
      ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, toJsonSchema(v)]))
      : toJsonSchema(value);
  }
  if (source.nullable === true) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    } else if (out.$ref !== undefined) {
      const { $ref, ...rest } = out;
      return { ...rest, anyOf: [{ $ref }, { type: 'null' }] };
    }
  }
  return out;
}

export interface ResponseValidator {
  /** Throws when the status is not documented for the path or the body does not match. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): void;
}

/** ajv with the formats the document uses (`date`, `date-time`, `uri`). */
export function createAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

export function responseValidator(doc: Json): ResponseValidator {
  const ajv = createAjv();
  const components = doc.components as Json;
  ajv.addSchema({ $id: 'openapi', components: { schemas: toJsonSchema(components.schemas) } });
  const paths = doc.paths as Record<string, Json>;
  const templates = Object.keys(paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/\{path\}$/, '(.+)').replace(/\{[^}]+\}/g, '([^/]+)')}$`),
  }));
  const compiled = new Map<string, ValidateFunction>();

  return {
    check(method, path, status, contentType, body) {
      const bare = path.split('?')[0] ?? path;
      // Exact paths win over templates (/v1/snapshots/download is not /v1/snapshots/{x}).
      const match = paths[bare] ? bare : templates.find((t) => t.regex.test(bare))?.template;
      if (!match) throw new Error(`${bare} is not a documented path`);
      const operation = (paths[match] as Json)[method.toLowerCase()] as Json | undefined;
      if (!operation) throw new Error(`${method} ${match} is not documented`);
      const responses = operation.responses as Record<string, Json>;
      const response = responses[String(status)];
      if (!response) throw new Error(`status ${status} is not documented for ${method} ${match}`);
      const content = response.content as Record<string, Json> | undefined;
      if (!content || status === 304) return;
      if (!content['application/json']) return;
      if (!contentType?.startsWith('application/json')) throw new Error(`${match} ${status} should be JSON, got ${contentType}`);
      const schema = content['application/json'].schema as Json;
      const key = `${match} ${status}`;
      let validate = compiled.get(key);
      if (!validate) {
        const ref = String(schema.$ref).replace(/^#/, 'openapi#');
        validate = ajv.compile({ $ref: ref });
        compiled.set(key, validate);
      }
      if (!validate(body)) {
        throw new Error(`${method} ${path} ${status} does not match ${String(schema.$ref)}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
      }
    },
  };
}
