/**
 * Redaction of everything that goes into a doctor file. Two layers, because neither is enough
 * alone: values devtool knows to be secret (the agent's keys, the Syncthing API key and password,
 * context tokens, kubeconfig credentials, secret-named environment values) are replaced wherever
 * they appear, whatever surrounds them; and patterns catch secrets devtool never saw (a password
 * in a URL, a bearer token or a private key in a log line, `FOO_TOKEN=...` of some other tool).
 * Pure: unit-tested on its own.
 */

export const REDACTED = 'REDACTED';

/**
 * Words that make a name secret when they are one of its parts (`DB_PASSWORD`, `apiKey`,
 * `X-API-Key`, `githubToken`), compared part by part so that `author`, `tokenizer`, `monkey` or
 * `passthrough` stay readable.
 */
const SECRET_PARTS = new Set([
  'password', 'passwd', 'pwd', 'pass', 'passphrase', 'secret', 'secrets', 'token', 'tokens', 'apikey', 'key', 'keys',
  'privatekey', 'accesskey', 'credential', 'credentials', 'creds', 'auth', 'authorization', 'cookie', 'sessionid', 'signature',
]);

/** A last part that makes a secret-sounding name describe the secret, not hold it (`tokenFile`). */
const DESCRIBING_PARTS = new Set(['file', 'path', 'dir', 'name', 'type', 'length', 'size', 'count', 'ttl', 'expiry', 'expires', 'expiration', 'ref', 'public', 'publickey']);

/** The parts of a name: split at `_`, `-`, `.`, spaces and camelCase humps, lower-cased. */
export function nameParts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((p) => p.toLowerCase());
}

/** True for names whose values must not be shown: PASSWORD, *_TOKEN, apiKey, guiPassword... */
export function isSecretName(name: string): boolean {
  const parts = nameParts(name);
  if (parts.length === 0) return false;
  if (parts.includes('public') || DESCRIBING_PARTS.has(parts.at(-1)!)) return false;
  return parts.some((p) => SECRET_PARTS.has(p));
}

/**
 * Every string held under a secret-looking key anywhere in a JSON value (a contract, a keys file,
 * a kubeconfig user): the values to redact by value.
 */
export function secretValuesIn(value: unknown, underSecretKey = false, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (underSecretKey) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) secretValuesIn(v, underSecretKey, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) secretValuesIn(v, underSecretKey || isSecretName(k), out);
  }
  return out;
}

/** A copy of an environment map with the values of secret-named variables replaced. */
export function redactEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, isSecretName(k) && v !== '' ? REDACTED : v]));
}

// A name, optionally quoted, then `=`, `:` or `": "`, then a value: quoted, or up to a separator.
const NAME = String.raw`[A-Za-z_][A-Za-z0-9_.-]*`;
const ASSIGNMENT = new RegExp(String.raw`(?<q>["']?)(?<name>${NAME})\k<q>(?<sep>\s*[:=]\s*)(?<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s"'{[,;&)}\]<>][^\s,;&)}\]"'<>]*)`, 'g');
const XML_ELEMENT = /<(?<tag>[A-Za-z][A-Za-z0-9_.-]*)>(?<value>[^<]+)<\/\k<tag>>/g;
// Private keys: PEM blocks as written, JSON-escaped (`\n` as two characters) or cut by a line end.
const PEM_BLOCK = /-----BEGIN (?<kind>[A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \k<kind>PRIVATE KEY-----/g;
const PEM_UNTERMINATED = /-----BEGIN (?<kind>[A-Z0-9 ]*)PRIVATE KEY-----[^\n]*/g;
const AUTH_SCHEME = /\b(?<scheme>Bearer|Basic|Token)(?<space>\s+)(?<value>[A-Za-z0-9._~+/=-]{8,})/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
const URL_PASSWORD = /(?<scheme>\b[A-Za-z][A-Za-z0-9+.-]*:\/\/)(?<user>[^\s/:@]+):(?<password>[^\s/@]+)@/g;
// Kubernetes `{"name":"DB_PASSWORD","value":"..."}` and Go's `{Name:DB_PASSWORD Value:...}`.
const NAME_VALUE_PAIR = /(?<head>"?name"?\s*[:=]\s*"?(?<name>[A-Za-z_][A-Za-z0-9_.-]*)"?\s*,?\s*"?value"?\s*[:=]\s*)(?<value>"(?:[^"\\\n]|\\.)*"|[^\s,}"]+)/gi;

/** Quoted values keep their quotes: `"s3cret"` becomes `"REDACTED"`. */
function replaceValue(value: string): string {
  const q = value[0];
  if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) return value.length === 2 ? value : `${q}${REDACTED}${q}`;
  return REDACTED;
}

const MIN_KNOWN_LENGTH = 6;

export class Redactor {
  /** Longest first, so a secret that contains another is replaced whole. */
  private readonly known: string[];

  /**
   * `known`: values to redact wherever they appear. Values shorter than 6 characters are ignored:
   * replacing every "1", "none" or "true" in a log would destroy it and hide little (a short
   * value assigned to a secret-looking name is still caught by the patterns).
   */
  constructor(known: Iterable<string> = []) {
    const forms = new Set<string>();
    for (const value of known) {
      const v = value.trim();
      if (v.length < MIN_KNOWN_LENGTH || v === REDACTED) continue;
      forms.add(v);
      // As it appears inside JSON (a PEM key's newlines as `\n`), and base64-encoded (Secret data).
      forms.add(JSON.stringify(v).slice(1, -1));
      forms.add(Buffer.from(v).toString('base64'));
      // A multi-line secret's lines, in case a log prints it line by line.
      for (const line of v.split('\n')) if (line.trim().length >= 16 && !/^-----/.test(line.trim())) forms.add(line.trim());
    }
    this.known = [...forms].filter((f) => f.length >= MIN_KNOWN_LENGTH).sort((a, b) => b.length - a.length);
  }

  /** A text with every secret this redactor knows of or recognizes replaced by REDACTED. */
  text(input: string): string {
    let out = input;
    for (const k of this.known) if (out.includes(k)) out = out.split(k).join(REDACTED);
    out = out.replace(PEM_BLOCK, (_m, kind: string) => `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}-----END ${kind}PRIVATE KEY-----`);
    out = out.replace(PEM_UNTERMINATED, (m, kind: string) => (m.includes(REDACTED) ? m : `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}`));
    out = out.replace(JWT, REDACTED);
    out = out.replace(URL_PASSWORD, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`);
    out = out.replace(AUTH_SCHEME, (_m, scheme: string, space: string) => `${scheme}${space}${REDACTED}`);
    out = out.replace(NAME_VALUE_PAIR, (m, head: string, name: string, value: string) => (isSecretName(name) ? `${head}${replaceValue(value)}` : m));
    out = out.replace(XML_ELEMENT, (m, tag: string) => (isSecretName(tag) ? `<${tag}>${REDACTED}</${tag}>` : m));
    out = out.replace(ASSIGNMENT, (m, q: string, name: string, sep: string, value: string) => {
      if (!isSecretName(name) || value === REDACTED || value === `"${REDACTED}"` || /^(null|true|false)$/.test(value)) return m;
      // `Authorization: Bearer x` was handled above: keep the scheme word.
      if (/^(Bearer|Basic|Token)$/i.test(value)) return m;
      return `${q}${name}${q}${sep}${replaceValue(value)}`;
    });
    return out;
  }
}
