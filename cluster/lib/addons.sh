# shellcheck shell=bash
# In-cluster add-ons applied by `up`: CoreDNS (Deployment + the kube-dns
# Service on DNS_SVC_IP, with its RBAC) and storage: the default StorageClass
# `local-path` (Rancher's local-path-provisioner, as kind and k3s ship it) and
# `standard` (the controller-manager's host-path provisioner, not default).

# Upstream resolvers for CoreDNS: the host's, minus loopback ones (a pod
# cannot reach the host's 127.0.0.x).
upstream_dns() {
  local ns
  ns=$(awk '$1 == "nameserver" && $2 !~ /^(127\.|::1$)/ {print $2}' /etc/resolv.conf | head -n 3 | xargs)
  [[ -n $ns ]] || die "no usable nameserver in /etc/resolv.conf for CoreDNS to forward to"
  echo "$ns"
}

addons_manifest() {
  cat <<EOF
# The controller-manager's host-path provisioner (--enable-hostpath-provisioner)
# creates a directory per claim under /tmp/hostpath_pv (-> \$STATE/hostpath-pv),
# root's, mode 0750, and fsGroup is never applied to it: storage that a non-root
# pod cannot write, kept for the tests of that case. Not the default (first in
# this file, so that the cluster never has two defaults while it changes).
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "false"
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
$(local_path_manifest)
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
  - apiGroups: [""]
    resources: [endpoints, services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
  - kind: ServiceAccount
    name: coredns
    namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
    .:53 {
        errors
        health {
            lameduck 5s
        }
        ready
        kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 30
        }
        prometheus :9153
        forward . $(upstream_dns) {
            max_concurrent 1000
        }
        cache 30
        loop
        reload
        loadbalance
    }
    # Public endpoints (https://<name>-<namespace>.$ENDPOINT_DOMAIN and its subdomains) are served
    # by the front door on the node's ports 80/443: every name under the domain is the node.
    $ENDPOINT_DOMAIN:53 {
        errors
        template IN A $ENDPOINT_DOMAIN {
            answer "{{ .Name }} 60 IN A $(node_ip)"
        }
        template IN AAAA $ENDPOINT_DOMAIN {
            rcode NOERROR
        }
        cache 30
        reload
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector:
    matchLabels: {k8s-app: kube-dns}
  strategy:
    rollingUpdate: {maxUnavailable: 1}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      tolerations:
        - {key: CriticalAddonsOnly, operator: Exists}
        - {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
      containers:
        - name: coredns
          image: $COREDNS_IMAGE
          args: [-conf, /etc/coredns/Corefile]
          ports:
            - {name: dns, containerPort: 53, protocol: UDP}
            - {name: dns-tcp, containerPort: 53, protocol: TCP}
            - {name: metrics, containerPort: 9153, protocol: TCP}
          resources:
            requests: {cpu: 50m, memory: 70Mi}
            limits: {memory: 170Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              add: [NET_BIND_SERVICE]
              drop: [ALL]
          livenessProbe:
            httpGet: {path: /health, port: 8080}
            initialDelaySeconds: 10
            periodSeconds: 10
            failureThreshold: 5
          readinessProbe:
            httpGet: {path: /ready, port: 8181}
            periodSeconds: 2
          volumeMounts:
            - {name: config, mountPath: /etc/coredns, readOnly: true}
      volumes:
        - name: config
          configMap:
            name: coredns
            items: [{key: Corefile, path: Corefile}]
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: $DNS_SVC_IP
  ports:
    - {name: dns, port: 53, protocol: UDP}
    - {name: dns-tcp, port: 53, protocol: TCP}
    - {name: metrics, port: 9153, protocol: TCP}
EOF
}

# Rancher's local-path-provisioner, set up as kind and k3s set it up: a
# directory per claim under $LOCAL_PATH_DIR on the node the claim's first pod
# is scheduled to (WaitForFirstConsumer; an extra node's own folder on an
# extra node, lib/nodes.sh), made mode 0777 by a helper pod; the
# PersistentVolume is a hostPath one with node affinity to that node, so every
# later pod of the claim is scheduled there. fsGroup is not applied (hostPath):
# the 0777 mode is what lets a non-root pod write.
local_path_manifest() {
  cat <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: local-path-storage
  # The helper pods mount the node's folder (hostPath).
  labels: {pod-security.kubernetes.io/enforce: privileged}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: local-path-provisioner
  namespace: local-path-storage
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: local-path-provisioner
rules:
  - apiGroups: [""]
    resources: [nodes, persistentvolumeclaims, configmaps, pods, pods/log]
    verbs: [get, list, watch]
  - apiGroups: [""]
    resources: [persistentvolumes]
    verbs: [get, list, watch, create, patch, update, delete]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch]
  - apiGroups: [storage.k8s.io]
    resources: [storageclasses]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: local-path-provisioner
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: local-path-provisioner
subjects:
  - kind: ServiceAccount
    name: local-path-provisioner
    namespace: local-path-storage
---
# The helper pods, in its own namespace only.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: local-path-provisioner
  namespace: local-path-storage
rules:
  - apiGroups: [""]
    resources: [pods]
    verbs: [get, list, watch, create, patch, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: local-path-provisioner
  namespace: local-path-storage
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: local-path-provisioner
subjects:
  - kind: ServiceAccount
    name: local-path-provisioner
    namespace: local-path-storage
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-path-config
  namespace: local-path-storage
data:
  config.json: |-
    {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$LOCAL_PATH_DIR"]}$(local_path_extra_nodes_json)]}
  # VOL_DIR: the claim's folder, as the helper pod mounts it.
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
  # The provisioner adds the volumes, the command and a toleration of every taint.
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata:
      name: helper-pod
    spec:
      priorityClassName: system-node-critical
      containers:
        - name: helper-pod
          image: $LOCAL_PATH_HELPER_IMAGE
          imagePullPolicy: IfNotPresent
          resources:
            requests: {cpu: 10m, memory: 16Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: local-path-provisioner
  namespace: local-path-storage
  labels: {app: local-path-provisioner}
spec:
  replicas: 1
  selector:
    matchLabels: {app: local-path-provisioner}
  strategy: {type: Recreate}
  template:
    metadata:
      labels: {app: local-path-provisioner}
    spec:
      serviceAccountName: local-path-provisioner
      priorityClassName: system-cluster-critical
      tolerations:
        - {key: CriticalAddonsOnly, operator: Exists}
        - {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
      containers:
        - name: local-path-provisioner
          image: $LOCAL_PATH_IMAGE
          args: [start, --config, /etc/config/config.json, --service-account-name, local-path-provisioner]
          env:
            - name: POD_NAMESPACE
              valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
          resources:
            requests: {cpu: 10m, memory: 32Mi}
            limits: {memory: 128Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            runAsUser: 65532
            capabilities: {drop: [ALL]}
          volumeMounts:
            - {name: config, mountPath: /etc/config, readOnly: true}
      volumes:
        - name: config
          configMap: {name: local-path-config}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: rancher.io/local-path
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
EOF
}

apply_addons() {
  mkdir -p "$STATE/manifests"
  addons_manifest >"$STATE/manifests/addons.yaml"
  kc apply --server-side --force-conflicts -f "$STATE/manifests/addons.yaml" \
    >>"$LOGS/addons.log" 2>&1 || fail_component addons "applying $STATE/manifests/addons.yaml failed"
}

node_ready() {
  kc get node "$(node_name)" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True
}

coredns_ready() {
  local n
  n=$(kc -n kube-system get deploy coredns -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)
  [[ ${n:-0} -ge 1 ]]
}

local_path_ready() {
  local n
  n=$(kc -n local-path-storage get deploy local-path-provisioner -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)
  [[ ${n:-0} -ge 1 ]]
}

wait_cluster_ready() {
  wait_for kubelet 120 node_ready
  local deadline=$((SECONDS + 180))
  until coredns_ready && local_path_ready; do
    if ((SECONDS > deadline)); then
      log "ERROR: CoreDNS or the local-path provisioner is not ready after 180s"
      kc get pods -A -o wide >&2
      kc -n kube-system describe pods -l k8s-app=kube-dns 2>&1 | tail -n 25 >&2
      kc -n kube-system logs -l k8s-app=kube-dns --tail=20 >&2 2>&1
      kc -n local-path-storage logs deploy/local-path-provisioner --tail=20 >&2 2>&1
      exit 1
    fi
    sleep 0.5
  done
}
