/** What every Kubernetes call of the store shares: its status, its one-line error, a 404 as undefined. */

/** The HTTP status of a failed Kubernetes call, if it is one. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * A failed Kubernetes call as one short line: client-node's message holds the whole response body
 * (an RBAC refusal lists every rule, hundreds of lines); the Status `message`'s first line says it.
 */
export function kubeErrorLine(err: unknown): string | undefined {
  const body = (err as { body?: unknown }).body;
  const code = statusOf(err);
  if (code === undefined || typeof body !== 'string') return undefined;
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    if (typeof message === 'string' && message) return `Kubernetes API answered ${code}: ${message.split('\n')[0]!.replace(/:$/, '')}`;
  } catch {}
  return `Kubernetes API answered ${code}`;
}

/** The answer, or undefined when Kubernetes says the object does not exist (404). */
export async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}
