/**
 * Redaction of secrets in text: of everything that goes into a doctor file, and of devtool.log as
 * it is written (the logger hides known values). Two layers, because neither is enough alone:
 * values devtool knows to be secret (the agent's keys, the Syncthing API key and password, context
 * tokens, kubeconfig credentials, secret-named environment values) are replaced wherever they
 * appear, whatever surrounds them; and patterns catch secrets devtool never saw (a password in a
 * URL, a bearer token or a private key in a log line, `FOO_TOKEN=...` of some other tool, a GitHub
 * token). The patterns are precise rather than eager about prose: "first pass: local files",
 * "token expired" or "Bearer authentication required" stay readable.
 * Pure: unit-tested on its own.
 */

export const REDACTED = 'REDACTED';
/** What devtool.log holds instead of a value it was not to record (`--var DB_PASSWORD=***`). */
export const NOT_LOGGED = '***';

/**
 * Words that make a name secret when they are one of its parts (`DB_PASSWORD`, `apiKey`,
 * `X-API-Key`, `githubToken`), compared part by part so that `author`, `tokenizer`, `monkey` or
 * `passthrough` stay readable.
 */
const SECRET_PARTS = new Set([
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'secret',
  'secrets',
  'token',
  'tokens',
  'apikey',
  'key',
  'keys',
  'privatekey',
  'accesskey',
  'credential',
  'credentials',
  'creds',
  'auth',
  'authorization',
  'cookie',
  'sessionid',
  'signature',
  'pat',
]);

/** A last part that makes a secret-sounding name describe the secret, not hold it (`tokenFile`). */
const DESCRIBING_PARTS = new Set([
  'file',
  'path',
  'dir',
  'name',
  'type',
  'length',
  'size',
  'count',
  'ttl',
  'expiry',
  'expires',
  'expiration',
  'ref',
  'sock',
  'socket',
  'public',
  'publickey',
]);

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
  // `PWD` alone is the shell's working directory, a path: hidden, it hid the project's folder in
  // every line that named it. `MYSQL_PWD` and `DB_PWD` are passwords.
  if (parts.length === 1 && parts[0] === 'pwd') return false;
  if (parts.includes('public') || DESCRIBING_PARTS.has(parts.at(-1)!)) return false;
  return parts.some((p) => SECRET_PARTS.has(p));
}

/**
 * Every string held under a secret-looking key anywhere in a JSON value (an agent configuration, a keys file,
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

/** The values of the secret-named variables of an environment (DEVTOOL_TOKEN, GITHUB_TOKEN...). */
export function secretEnvironmentValues(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env).flatMap(([k, v]) => (v && isSecretName(k) ? [v] : []));
}

/** A copy of an environment map with the values of secret-named variables replaced. */
export function redactEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, isSecretName(k) && v !== '' ? REDACTED : v]));
}

// A name, optionally quoted, then `=`, `:` or `": "`, then a value.
const NAME = '[A-Za-z_][A-Za-z0-9_.-]*';
const QUOTED = String.raw`"(?:[^"\\\n]|\\.)*"|'[^'\n]*'`;
// After `=` (env, logfmt, query strings) a value runs to a space, a quote or `&`: `a,b`, `{x}` and
// `x;y` are all of it. After `:` (YAML, headers, Go structs) it stops at separators and brackets,
// and does not start with one (`"auth": {` opens an object, whose own keys are looked at).
const EQUALS_ASSIGNMENT = new RegExp(String.raw`(?<q>["']?)(?<name>${NAME})\k<q>(?<sep>\s*=\s*)(?<value>${QUOTED}|[^\s"'&]+)`, 'g');
const COLON_ASSIGNMENT = new RegExp(String.raw`(?<q>["']?)(?<name>${NAME})\k<q>(?<sep>\s*:\s*)(?<value>${QUOTED}|[^\s"'{[,;&)}\]<>][^\s,;&)}\]"'<>]*)`, 'g');
const XML_ELEMENT = /<(?<tag>[A-Za-z][A-Za-z0-9_.-]*)>(?<value>[^<]+)<\/\k<tag>>/g;
// Private keys: PEM blocks as written, JSON-escaped (`\n` as two characters) or cut by a line end.
const PEM_BLOCK = /-----BEGIN (?<kind>[A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \k<kind>PRIVATE KEY-----/g;
const PEM_UNTERMINATED = /-----BEGIN (?<kind>[A-Z0-9 ]*)PRIVATE KEY-----[^\n]*/g;
// After an Authorization header, whatever the credential looks like; elsewhere ("Bearer x" in a
// message) only a credential-shaped one, so that "Bearer authentication required" stays.
const AUTH_HEADER = /\b(?<head>(?:Proxy-)?Authorization"?\s*[:=]\s*"?(?:[A-Za-z-]+\s+)?)(?<value>[A-Za-z0-9._~+/=:-]+)/gi;
const AUTH_SCHEME = /\b(?<scheme>Bearer|Basic|Token)(?<space>\s+)(?<value>[A-Za-z0-9._~+/=-]{8,})/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
const URL_PASSWORD = /(?<scheme>\b[A-Za-z][A-Za-z0-9+.-]*:\/\/)(?<user>[^\s/:@]+):(?<password>[^\s/@]+)@/g;
// Kubernetes `{"name":"DB_PASSWORD","value":"..."}` and Go's `{Name:DB_PASSWORD Value:...}`.
const NAME_VALUE_PAIR = /(?<head>"?name"?\s*[:=]\s*"?(?<name>[A-Za-z_][A-Za-z0-9_.-]*)"?\s*,?\s*"?value"?\s*[:=]\s*)(?<value>"(?:[^"\\\n]|\\.)*"|[^\s,}"]+)/gi;
/** Tokens recognizable by their shape alone, whatever name they are given. */
const TOKEN_SHAPES = new RegExp(
  [
    String.raw`\bgh[pousr]_[A-Za-z0-9]{30,}`, // GitHub
    String.raw`\bgithub_pat_[A-Za-z0-9_]{40,}`,
    String.raw`\bglpat-[A-Za-z0-9_-]{20,}`, // GitLab
    String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`, // AWS access key ID
    String.raw`\bxox[abposr]-[A-Za-z0-9-]{10,}`, // Slack
    String.raw`\bAIza[0-9A-Za-z_-]{35}`, // Google API key
    String.raw`\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`, // Stripe secret and restricted keys
    String.raw`\bnpm_[A-Za-z0-9]{36}\b`, // npm
    String.raw`\bdckr_pat_[A-Za-z0-9_-]{20,}`, // Docker Hub
    String.raw`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}`, // OpenAI, Anthropic
  ].join('|'),
  'g',
);

/**
 * Names that are also everyday words of log messages: after `word: ` (colon and space, unquoted)
 * they are read as prose when the value is a plain word ("first pass: local files", "key: none",
 * "token: expired"), and as a secret otherwise ("key: 9f8e7d6c", Go's `{Key:abc}`).
 */
const PROSE_NAMES = new Set([
  'pass',
  'key',
  'keys',
  'token',
  'tokens',
  'secret',
  'secrets',
  'auth',
  'signature',
  'cookie',
  'credential',
  'credentials',
  'creds',
]);

/**
 * `first pass: local files`: an everyday word with a colon in the middle of a sentence, followed
 * by a plain word. At the start of a line (YAML `token: x`, a header) it is a key, whatever follows.
 */
function isProse(text: string, offset: number, q: string, name: string, sep: string, value: string): boolean {
  if (q !== '' || !/\s$/.test(sep) || !PROSE_NAMES.has(name.toLowerCase()) || !isPlainWord(value)) return false;
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return !/^\s*(-\s*)?$/.test(text.slice(lineStart, offset));
}

/** A word of prose, not a credential: letters only, lower-case or capitalized, not too long. */
function isPlainWord(value: string): boolean {
  return /^[A-Za-z][a-z]{0,19}$/.test(value);
}

/** Quoted values keep their quotes: `"s3cret"` becomes `"REDACTED"`. */
function replaceValue(value: string): string {
  const q = value[0];
  if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) return value.length === 2 ? value : `${q}${REDACTED}${q}`;
  return REDACTED;
}

/** Already hidden (`"Basic REDACTED"`, `***`), or nothing to hide: `null`, `true`, `false`, an empty string. */
function isNoValue(value: string): boolean {
  return value.includes(REDACTED) || /^(["']?)(\*\*\*|null|true|false|)\1$/.test(value);
}

const MIN_KNOWN_LENGTH = 6;

/**
 * Values to hide wherever they appear, in the forms they take in logs: as written, JSON-escaped
 * (a PEM key's newlines as `\n`), base64-encoded (Secret data), and line by line for multi-line
 * ones. Values shorter than 6 characters are ignored: replacing every "1", "none" or "true" in a
 * log would destroy it and hide little (a short value assigned to a secret-looking name is still
 * caught by the patterns).
 */
export class KnownValues {
  /** Longest first, so a secret that contains another is replaced whole. */
  private forms: string[] = [];

  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  add(values: Iterable<string>): void {
    const forms = new Set(this.forms);
    for (const value of values) {
      const v = value.trim();
      if (v.length < MIN_KNOWN_LENGTH || v === REDACTED) continue;
      forms.add(v);
      forms.add(JSON.stringify(v).slice(1, -1));
      forms.add(Buffer.from(v).toString('base64'));
      for (const line of v.split('\n')) if (line.trim().length >= 16 && !/^-----/.test(line.trim())) forms.add(line.trim());
    }
    this.forms = [...forms].filter((f) => f.length >= MIN_KNOWN_LENGTH).sort((a, b) => b.length - a.length);
  }

  replace(text: string, marker: string): string {
    let out = text;
    for (const f of this.forms) if (out.includes(f)) out = out.split(f).join(marker);
    return out;
  }
}

/** Secrets recognized by their shape or by the name they are assigned to, replaced by REDACTED. */
export function redactPatterns(input: string): string {
  let out = input;
  out = out.replace(PEM_BLOCK, (_m, kind: string) => `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}-----END ${kind}PRIVATE KEY-----`);
  out = out.replace(PEM_UNTERMINATED, (m, kind: string) => (m.includes(REDACTED) ? m : `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}`));
  out = out.replace(JWT, REDACTED);
  out = out.replace(TOKEN_SHAPES, REDACTED);
  out = out.replace(URL_PASSWORD, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`);
  out = out.replace(AUTH_HEADER, (m, head: string, value: string) => (isNoValue(value) ? m : `${head}${REDACTED}`));
  out = out.replace(AUTH_SCHEME, (m, scheme: string, space: string, value: string) =>
    isPlainWord(value) || isNoValue(value) ? m : `${scheme}${space}${REDACTED}`,
  );
  out = out.replace(NAME_VALUE_PAIR, (m, head: string, name: string, value: string) =>
    isSecretName(name) && !isNoValue(value) ? `${head}${replaceValue(value)}` : m,
  );
  out = out.replace(XML_ELEMENT, (m, tag: string) => (isSecretName(tag) ? `<${tag}>${REDACTED}</${tag}>` : m));
  out = out.replace(EQUALS_ASSIGNMENT, (m, q: string, name: string, sep: string, value: string) => {
    if (!isSecretName(name) || isNoValue(value)) return m;
    // Closing brackets and separators after an unquoted value are the text's, not the secret's.
    const trail = /^["']/.test(value) ? '' : (/[)}\],;.]+$/.exec(value)?.[0] ?? '');
    return trail.length === value.length ? m : `${q}${name}${q}${sep}${replaceValue(value.slice(0, value.length - trail.length))}${trail}`;
  });
  out = out.replace(COLON_ASSIGNMENT, (m, q: string, name: string, sep: string, value: string, offset: number, text: string) => {
    if (!isSecretName(name) || isNoValue(value)) return m;
    // `Authorization: Bearer x` was handled above: keep the scheme word.
    if (/^(Bearer|Basic|Token)$/i.test(value)) return m;
    if (isProse(text, offset, q, name, sep, value)) return m;
    return `${q}${name}${q}${sep}${replaceValue(value)}`;
  });
  return out;
}

export class Redactor {
  private readonly known: KnownValues;

  /** `known`: values to redact wherever they appear (see KnownValues). */
  constructor(known: Iterable<string> = []) {
    this.known = new KnownValues(known);
  }

  /** A text with every secret this redactor knows of or recognizes replaced by REDACTED. */
  text(input: string): string {
    return redactPatterns(this.known.replace(input, REDACTED));
  }
}
