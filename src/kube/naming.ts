import { UsageError } from '../base/errors.ts';

/**
 * Kubernetes naming rules, and turning free-form names (Compose service and volume names) into
 * valid object names.
 */

/** DNS-1123 label: names of Services (also DNS-1035: must start with a letter), containers, ports. */
export const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** DNS-1123 subdomain: names of most objects (Deployments, claims, Ingresses). */
export const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && dnsLabel.test(name);
}

/** A label value: at most 63 of letters, digits, "-", "_", ".", starting and ending alphanumeric (or empty). */
export function isLabelValue(value: string): boolean {
  return value.length <= 63 && /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(value);
}

/** A label or annotation key: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
export function isQualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !dnsSubdomain.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(name);
}

/**
 * A DNS-1035 label from any name: lower case, runs of other characters ("_", ".", spaces) become
 * "-", a leading digit gets an "s-" prefix (Service names must start with a letter), at most 63
 * characters. Returns "" when nothing usable is left.
 */
export function toDnsLabel(name: string): string {
  let s = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (/^[0-9]/.test(s)) s = `s-${s}`;
  return s.slice(0, 63).replace(/-+$/, '');
}

/** A namespace name given on the command line, or a usage error saying what a valid one is. */
export function checkNamespaceName(name: string, what = 'namespace'): string {
  if (!isDnsLabel(name)) {
    throw new UsageError(`invalid ${what} "${name}": use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit`);
  }
  return name;
}
