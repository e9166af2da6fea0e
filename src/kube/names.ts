import { UsageError } from '../cli/errors.ts';

/** Kubernetes namespace names are DNS-1123 labels. */
export function checkNamespaceName(name: string, what = 'namespace'): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) {
    throw new UsageError(`invalid ${what} "${name}": use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit`);
  }
  return name;
}
