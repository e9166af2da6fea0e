/**
 * Objects as a multi-document YAML stream (`deploy --dry-run`, golden fixtures). Written with YAML
 * 1.1 quoting so that kubectl and other Go tools, which read YAML 1.1, read back the same values:
 * a string like "yes", "on" or "0755" is quoted instead of becoming a boolean or an octal number.
 */
import { stringify } from 'yaml';
import type { KubeObject } from './objects.ts';

export function objectsToYaml(objects: readonly KubeObject[]): string {
  return objects.map((o) => stringify(o, { version: '1.1', lineWidth: 0 })).join('---\n');
}
