/**
 * Kubernetes naming rules, and turning free-form names (Compose service and volume names) into
 * valid object names. The DNS label, the rule of most names here, is the API contract's
 * (api/dns-label.ts), which the service checks too.
 */
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN, DNS_LABEL_RULE, isDnsLabel } from '../../api/dns-label.ts';
import { UsageError } from '../base/errors.ts';

export { DNS_LABEL_MAX, DNS_LABEL_RULE, isDnsLabel };

/** One label of a subdomain: the DNS label's pattern without its anchors. */
const LABEL = DNS_LABEL_PATTERN.slice(1, -1);
/** DNS-1123 subdomain: names of most objects (Deployments, claims, Ingresses). */
export const dnsSubdomain = new RegExp(`^${LABEL}(\\.${LABEL})*$`);

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
  return s.slice(0, DNS_LABEL_MAX).replace(/-+$/, '');
}

/** A namespace name given on the command line, or a usage error saying what a valid one is. */
export function checkNamespaceName(name: string, what = 'namespace'): string {
  if (!isDnsLabel(name)) {
    throw new UsageError(`invalid ${what} "${name}": use at most ${DNS_LABEL_MAX} ${DNS_LABEL_RULE}`);
  }
  return name;
}
