/** What the translation steps share: options, the Kubernetes name of each service and volume, warnings. */
import type { Problem } from '../../yaml/errors.ts';
import type { HostVolumePlan } from '../host-volumes.ts';
import type { ComposeProject } from '../model.ts';

export interface TranslateOptions {
  /** The environment name: a DNS label; labels every object and names list/object endpoints. */
  readonly name: string;
  /** The namespace the objects go to (part of endpoint hosts). */
  readonly namespace: string;
  /** The domain endpoints are served under; needed only when the file has public endpoints. */
  readonly endpointDomain?: string;
  /**
   * The IngressClass endpoints' Ingresses name (spec.ingressClassName): the ingress controller that
   * serves them. Absent: none is named, and the cluster's default class takes them.
   */
  readonly ingressClass?: string;
  /** Images built for services with a `build` (service name to image reference); they win over `image`. */
  readonly images?: Readonly<Record<string, string>>;
  /**
   * What deploy does with each host volume (host-volumes.ts: baked into the image given in `images`,
   * a claim of runtime data, or skipped). Absent: host volumes are not deployed, one warning says so.
   */
  readonly hostVolumes?: HostVolumePlan;
}

export interface TranslateState {
  readonly project: ComposeProject;
  readonly options: TranslateOptions;
  /** Compose service name to Kubernetes name. */
  readonly serviceNames: ReadonlyMap<string, string>;
  /** Top-level volume key to claim name. */
  readonly claimNames: ReadonlyMap<string, string>;
  readonly warnings: string[];
  readonly problems: Problem[];
}
