/**
 * Per-environment SSH keys, made with node:crypto: the agent's host key (the CLI pins its public
 * half, so there is no trust-on-first-use) and the CLI's client key (its public half is the only
 * authorized key). ed25519 keys are written in OpenSSH formats because that is what both the
 * agent (x/crypto) and the ssh2 client parse; node:crypto only exports PKCS#8.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';

export interface SshKeyPair {
  /** "-----BEGIN OPENSSH PRIVATE KEY-----..." */
  privateKey: string;
  /** authorized_keys / known_hosts form: "ssh-ed25519 AAAA... comment" */
  publicKey: string;
}

/** What devtool keeps per dev environment, locally and (the remote half) in the agent Secret. */
export interface DevKeys {
  host: SshKeyPair;
  client: SshKeyPair;
}

export function generateDevKeys(): DevKeys {
  return { host: ed25519KeyPair('devtool-agent'), client: ed25519KeyPair('devtool') };
}

export function ed25519KeyPair(comment: string): SshKeyPair {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d!, 'base64url');
  const pub = Buffer.from(jwk.x!, 'base64url');
  return { privateKey: openSshPrivateKey(seed, pub, comment), publicKey: `ssh-ed25519 ${publicBlob(pub).toString('base64')} ${comment}` };
}

/** The SSH wire form of an ed25519 public key (RFC 8709): string "ssh-ed25519", string key. */
export function publicBlob(pub: Buffer): Buffer {
  return Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
}

/** The key blob of an authorized_keys line, to compare with what a server presents. */
export function blobOfPublicKey(line: string): Buffer {
  const b64 = line.trim().split(/\s+/)[1];
  if (!b64) throw new Error(`not an SSH public key: ${line}`);
  return Buffer.from(b64, 'base64');
}

/** OpenSSH's "openssh-key-v1" container, unencrypted (PROTOCOL.key in OpenSSH's source). */
function openSshPrivateKey(seed: Buffer, pub: Buffer, comment: string): string {
  const check = randomBytes(4);
  let priv = Buffer.concat([check, check, sshString('ssh-ed25519'), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString(comment)]);
  // Padded with 1, 2, 3... to the cipher block size (8 for "none").
  const pad = (8 - (priv.length % 8)) % 8;
  priv = Buffer.concat([priv, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(Buffer.alloc(0)),
    uint32(1),
    sshString(publicBlob(pub)),
    sshString(priv),
  ]);
  const lines = body.toString('base64').match(/.{1,70}/g)!;
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

function sshString(v: string | Buffer): Buffer {
  const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
  return Buffer.concat([uint32(b.length), b]);
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
