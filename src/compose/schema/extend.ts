/**
 * The devtool extensions of the Compose file (docs/compose.md), patched onto a copy of the
 * upstream schema at run time rather than edited into compose-spec.json: the upstream file stays
 * byte-for-byte what scripts/update-compose-schema.sh fetched, and if a new upstream version moves
 * one of the places patched here, `extendComposeSchema` throws and the tests say so at once.
 *
 * Extensions:
 *   endpoints                 top-level, in the three notations (list, labels+rules, map)
 *   healthcheck.http          { path, port }: an HTTP probe
 *   volumes.*.driver_opts     class (storage class) and size (claim size), both strings
 *   stop_grace_period         also a bare number of seconds
 *   deploy.resources.*.cpu    devtool's spelling of Compose's `cpus`, accepted beside it
 *   build.export_cache        image tag for exported cache
 */
import upstream from './compose-spec.json' with { type: 'json' };

export type JsonSchema = Record<string, unknown>;

const endpointRule: JsonSchema = {
  type: 'object',
  description: 'A route: requests to `path` go to `port` of `service`.',
  properties: {
    path: { type: 'string' },
    service: { type: 'string' },
    port: { type: ['integer', 'string'] },
  },
  required: ['path', 'service', 'port'],
  additionalProperties: false,
};

const endpointRules: JsonSchema = { type: 'array', items: { $ref: '#/$defs/devtool_endpoint_rule' } };

const endpoints: JsonSchema = {
  description: 'Public HTTPS routes (devtool extension).',
  // anyOf, not oneOf: a map whose only key is "rules" fits two notations; the loader decides.
  anyOf: [
    endpointRules,
    {
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        rules: endpointRules,
      },
      required: ['rules'],
      additionalProperties: false,
    },
    { type: 'object', additionalProperties: endpointRules },
  ],
};

/** A deep copy of the upstream schema with the extensions added. */
export function extendComposeSchema(base: JsonSchema = upstream as JsonSchema): JsonSchema {
  const schema = structuredClone(base);
  const defs = at(schema, ['$defs']);
  defs['devtool_endpoint_rule'] = endpointRule;
  at(schema, ['properties'])['endpoints'] = endpoints;

  at(schema, ['$defs', 'healthcheck', 'properties'])['http'] = {
    type: 'object',
    description: 'An HTTP check: succeeds when `path` on `port` answers successfully (devtool extension).',
    properties: { path: { type: 'string' }, port: { type: ['integer', 'string'] } },
    required: ['path', 'port'],
    additionalProperties: false,
  };

  const driverOpts = at(schema, ['$defs', 'volume', 'properties', 'driver_opts']);
  driverOpts['properties'] = {
    class: { type: 'string', description: 'Storage class of the claim (devtool extension).' },
    size: { type: 'string', description: 'Size of the claim, e.g. 10Gi (devtool extension).' },
  };

  const grace = at(schema, ['$defs', 'container_spec', 'properties', 'stop_grace_period']);
  expectType(grace, 'string', 'stop_grace_period');
  grace['type'] = ['string', 'number'];

  const resources = at(schema, ['$defs', 'deployment', 'properties', 'resources', 'properties']);
  for (const kind of ['limits', 'reservations']) {
    at(resources, [kind, 'properties'])['cpu'] = { type: ['number', 'string'], description: 'Same as cpus (devtool extension).' };
  }

  const build = at(schema, ['$defs', 'workload_spec', 'properties', 'build']);
  const buildObject = (build['oneOf'] as JsonSchema[] | undefined)?.find((s) => s['type'] === 'object');
  if (!buildObject) throw new Error('compose schema: services.*.build has no object form any more');
  at(buildObject, ['properties'])['export_cache'] = { type: 'string', description: 'Image tag for exported cache (devtool extension).' };
  return schema;
}

function at(obj: JsonSchema, path: readonly string[]): JsonSchema {
  let cur: unknown = obj;
  for (const key of path) {
    cur = typeof cur === 'object' && cur !== null ? (cur as JsonSchema)[key] : undefined;
    if (typeof cur !== 'object' || cur === null) {
      throw new Error(`compose schema: ${path.join('.')} is missing; the upstream schema changed shape (see scripts/update-compose-schema.sh)`);
    }
  }
  return cur as JsonSchema;
}

function expectType(node: JsonSchema, type: string, what: string): void {
  if (node['type'] !== type) throw new Error(`compose schema: ${what} is no longer of type ${type}; review src/compose/schema/extend.ts`);
}
