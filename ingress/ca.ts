/**
 * What the controller checks of the CA it hands Caddy: whether it carries a name constraint (the
 * X.509 extension 2.5.29.30). Without one, a certificate the CA signs is trusted for any name; the
 * host rule (hosts.ts) is then the only thing keeping it to the endpoint domain.
 */
import { X509Certificate } from 'node:crypto';

/** The extension's OID as it sits in DER: OBJECT IDENTIFIER, length 3, 2.5.29.30. */
const NAME_CONSTRAINTS_OID = Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x1e]);

/** True when the PEM certificate has a name constraints extension. */
export function hasNameConstraints(pem: string): boolean {
  return new X509Certificate(pem).raw.includes(NAME_CONSTRAINTS_OID);
}
