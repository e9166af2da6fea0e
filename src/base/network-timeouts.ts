/**
 * How long the CLI waits on the network, for every request to the Kubernetes API server and to the
 * devtool service: for a connection (TCP and the TLS handshake), and then for the answer. A server
 * behind a VPN that is down, or a firewall that drops packets, accepts nothing and refuses nothing:
 * without these bounds a command would wait forever, silently.
 */
import { formatDuration, parseDuration } from './duration.ts';
import { UsageError } from './errors.ts';

export interface NetworkTimeouts {
  /** From the request to a connected socket (TLS handshake done). */
  connectMs: number;
  /** From the connected socket to the first byte of the answer (a watch or a log stream then runs on). */
  responseMs: number;
}

export const CONNECT_TIMEOUT_VARIABLE = 'DEVTOOL_CONNECT_TIMEOUT';
export const RESPONSE_TIMEOUT_VARIABLE = 'DEVTOOL_RESPONSE_TIMEOUT';

/** How long a connection or an answer may take before the command says what it waits for. */
export const SLOW_MS = 3000;

export const DEFAULT_NETWORK_TIMEOUTS: NetworkTimeouts = { connectMs: 10_000, responseMs: 30_000 };

/** The timeouts the environment sets (Go durations: 10s, 1m), else the defaults; a value that is not a duration above zero is a usage error. */
export function networkTimeouts(env: Readonly<NodeJS.ProcessEnv>): NetworkTimeouts {
  return {
    connectMs: timeoutOf(env, CONNECT_TIMEOUT_VARIABLE, DEFAULT_NETWORK_TIMEOUTS.connectMs),
    responseMs: timeoutOf(env, RESPONSE_TIMEOUT_VARIABLE, DEFAULT_NETWORK_TIMEOUTS.responseMs),
  };
}

function timeoutOf(env: Readonly<NodeJS.ProcessEnv>, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new UsageError(`invalid ${name} "${text}": expected a duration above zero, such as ${formatDuration(fallback)} or 1m`);
  return ms;
}

/** "no connection within 10s", naming the variable that sets the wait. */
export function connectTimeoutText(ms: number, stage: 'connection' | 'TLS handshake' = 'connection'): string {
  return `no ${stage} within ${formatDuration(ms)}; ${CONNECT_TIMEOUT_VARIABLE} sets the wait`;
}

/** "no answer within 30s", naming the variable that sets the wait. */
export function responseTimeoutText(ms: number): string {
  return `no answer within ${formatDuration(ms)}; ${RESPONSE_TIMEOUT_VARIABLE} sets the wait`;
}

/** The texts above, recognised in the reason of a failed request. */
export const TIMEOUT_TEXT = /\bno [\w ]+ within \S+; DEVTOOL_\w+ sets the wait\b/;
