/**
 * Trusting a devtool service behind a private CA (a local cluster's, a company's). Node's fetch
 * takes no CA per call, so a client given one makes its requests with node:https and the CA next
 * to the system's roots. When the handshake fails for an unknown authority, `untrustedLine` says
 * so in one line with the SHA-256 fingerprint of the CA the server presented, which the user
 * compares before trusting it with DEVTOOL_CA_CERT.
 */
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { DevtoolError } from '../base/errors.ts';
import { connect, rootCertificates, type PeerCertificate, type DetailedPeerCertificate } from 'node:tls';

/** Handshake failures that mean "signed by a CA this machine does not trust". */
export const UNTRUSTED_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** A fetch for `https:` URLs that trusts `caPem` too; other URLs go to `fallback`. */
export function fetchTrusting(caPem: string, fallback: typeof fetch = fetch): typeof fetch {
  const ca = [...rootCertificates, caPem];
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (url.protocol !== 'https:') return fallback(input, init);
    return new Promise<Response>((resolve, reject) => {
      const failed = (err: Error) => reject(Object.assign(new TypeError('fetch failed'), { cause: err }));
      const req = httpsRequest(
        url,
        { method: init.method ?? 'GET', headers: init.headers as Record<string, string>, ca, signal: init.signal ?? undefined },
        (res) => {
          // The body streams as it comes (a pipeline's log is read while the run goes on).
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 502;
          if (status === 204 || status === 304) {
            res.resume();
            resolve(new Response(null, { status, headers }));
            return;
          }
          resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status, headers }));
        },
      );
      req.on('error', (err) => (err.name === 'AbortError' ? reject(init.signal?.reason ?? err) : failed(err)));
      if (typeof init.body === 'string') req.write(init.body);
      req.end();
    });
  }) as typeof fetch;
}

/** The CA at the top of the chain the server presents: its SHA-256 fingerprint and name. */
export function presentedCa(url: string, timeoutMs = 5000): Promise<{ fingerprint: string; subject: string } | undefined> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname, port: Number(u.port || 443), servername: isIp(u.hostname) ? '' : u.hostname, rejectUnauthorized: false }, () => {
      let cert = socket.getPeerCertificate(true) as DetailedPeerCertificate;
      while (cert?.issuerCertificate && cert.issuerCertificate !== cert && cert.issuerCertificate.fingerprint256) cert = cert.issuerCertificate;
      socket.destroy();
      resolve(cert?.fingerprint256 ? { fingerprint: cert.fingerprint256, subject: subjectOf(cert) } : undefined);
    });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.on('error', () => resolve(undefined));
  });
}

const isIp = (host: string) => /^[\d.]+$/.test(host) || host.includes(':');
const subjectOf = (c: PeerCertificate) => (Array.isArray(c.subject?.CN) ? c.subject.CN[0] : c.subject?.CN) ?? 'no name';

/** The one line of a connection refused for an unknown CA. */
export async function untrustedLine(base: string, code: string): Promise<string> {
  const ca = await presentedCa(base);
  const which = ca ? `; its CA "${ca.subject}" has the SHA-256 fingerprint ${ca.fingerprint}` : '';
  return (
    `its TLS certificate is signed by a CA this machine does not trust (${code})${which}; ` +
    'if that is your service, save its CA certificate (PEM) to a file and set DEVTOOL_CA_CERT=<file>'
  );
}

/**
 * The CAs a client of `url` trusts besides the system's: the file DEVTOOL_CA_CERT names, and the
 * one the service announced when its context was made (stored with the token, 0600).
 */
export function trustedCas(env: Readonly<NodeJS.ProcessEnv>, stored: string | undefined, read: (file: string) => string): string | undefined {
  const file = env['DEVTOOL_CA_CERT']?.trim();
  let fromEnv: string | undefined;
  if (file) {
    try {
      fromEnv = read(file);
    } catch (err) {
      throw new DevtoolError(`DEVTOOL_CA_CERT=${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (!fromEnv.includes('-----BEGIN CERTIFICATE-----')) throw new DevtoolError(`DEVTOOL_CA_CERT=${file}: not a PEM certificate`);
  }
  const all = [fromEnv, stored].filter((p): p is string => Boolean(p));
  return all.length ? all.join('\n') : undefined;
}
