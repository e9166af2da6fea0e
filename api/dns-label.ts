/**
 * The DNS label (RFC 1123) as Kubernetes checks it: the name of a namespace, a Service, a container
 * or a port, and so of what devtool names after them (a user, whose personal namespace is
 * `<user>-devtool`; an environment; an endpoint; a preview). The API contract, the service and the
 * CLI check names against this one definition. It lives in api/, which imports nothing, because
 * api/ is the one place all three may import (the CLI through src/kube/naming.ts); it imports
 * nothing itself, so the CLI's bundles take it without the contract's schemas.
 */

/** At most 63 characters. */
export const DNS_LABEL_MAX = 63;
/** As a JSON schema `pattern` (the length is DNS_LABEL_MAX). */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** The pattern in words, for messages and schema descriptions. */
export const DNS_LABEL_RULE = "lowercase letters, digits and '-', starting and ending with a letter or digit";

const DNS_LABEL = new RegExp(DNS_LABEL_PATTERN);

export function isDnsLabel(name: string): boolean {
  return name.length <= DNS_LABEL_MAX && DNS_LABEL.test(name);
}
