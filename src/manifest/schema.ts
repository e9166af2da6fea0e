/**
 * The published JSON Schema of devtool.yml (draft-07, what editors' YAML plugins read), generated
 * from the loader's decoders. schema/devtool-manifest.schema.json is this output; the unit test
 * in schema.test.ts fails when the file is stale (UPDATE_SCHEMA=1 rewrites it).
 */
import { manifestDecoder } from './sections.ts';

export const SCHEMA_ID = 'https://devtool.dev/schema/devtool-manifest.schema.json';

export function manifestJsonSchema(): Record<string, unknown> {
  return { $schema: 'http://json-schema.org/draft-07/schema#', $id: SCHEMA_ID, ...manifestDecoder.schema };
}

export function manifestJsonSchemaText(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}
