# shellcheck shell=bash
# Certificates and kubeconfigs, made with openssl into $PKI on the first `up`
# of a state dir. One CA signs everything (the cluster is single-node and
# throwaway); every component talks TLS with its own client certificate, and
# RBAC sees the usual identities (system:kube-scheduler, system:node:<node>…).

# new_key FILE: ECDSA P-256 key (fast to make, accepted by every component).
new_key() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
  chmod 600 "$1"
}

# issue NAME SUBJECT USAGE [SAN]: $PKI/NAME.{key,crt} signed by the CA.
# USAGE is serverAuth, clientAuth or both; SAN like "DNS:x,IP:1.2.3.4".
issue() {
  local name=$1 subj=$2 usage=$3 san=${4:-}
  local ext="$PKI/$name.ext"
  new_key "$PKI/$name.key"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [[ -n $san ]] && echo "subjectAltName=$san"
  } >"$ext"
  openssl req -new -key "$PKI/$name.key" -subj "$subj" 2>/dev/null |
    openssl x509 -req -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
      -days 3650 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null ||
    die "openssl could not issue the $name certificate"
  rm -f "$ext"
}

# write_kubeconfig FILE USER SERVER: kubeconfig with embedded certificates, so
# it works from anywhere (tests copy it around).
write_kubeconfig() {
  local file=$1 user=$2 server=$3
  local ca crt key
  ca=$(base64 -w0 <"$PKI/ca.crt")
  crt=$(base64 -w0 <"$PKI/$user.crt")
  key=$(base64 -w0 <"$PKI/$user.key")
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $CLUSTER_NAME
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: $CLUSTER_NAME-$user
  user:
    client-certificate-data: $crt
    client-key-data: $key
contexts:
- name: $CLUSTER_NAME
  context:
    cluster: $CLUSTER_NAME
    user: $CLUSTER_NAME-$user
    namespace: default
current-context: $CLUSTER_NAME
EOF
  chmod 600 "$file"
}

ensure_pki() {
  local node ip
  node=$(node_name)
  ip=$(node_ip)
  if [[ -f $PKI/done ]]; then
    # Serving certificates name the node's address; a changed address (a VM
    # that moved) would break TLS, so it is detected by `up` (see cluster.sh).
    return 0
  fi
  log "creating certificates in $PKI"
  rm -rf "$PKI" && mkdir -p "$PKI" && chmod 700 "$PKI"

  new_key "$PKI/ca.key"
  openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=$CLUSTER_NAME-ca" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign" \
    -out "$PKI/ca.crt" 2>/dev/null || die "openssl could not create the CA"

  local svc_names="DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  svc_names+=",DNS:kubernetes.default.svc.$CLUSTER_DOMAIN"
  issue apiserver "/CN=kube-apiserver" serverAuth \
    "$svc_names,DNS:localhost,DNS:$node,IP:127.0.0.1,IP:$ip,IP:$KUBERNETES_SVC_IP"
  issue etcd-server "/CN=etcd" serverAuth,clientAuth "DNS:localhost,IP:127.0.0.1"
  issue apiserver-etcd-client "/CN=kube-apiserver-etcd-client" clientAuth
  # The apiserver's identity towards kubelets (exec, logs, port-forward).
  issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  issue admin "/O=system:masters/CN=devtool-admin" clientAuth
  issue controller-manager "/CN=system:kube-controller-manager" clientAuth
  issue scheduler "/CN=system:kube-scheduler" clientAuth
  issue kube-proxy "/CN=system:kube-proxy" clientAuth
  # The Node authorizer and NodeRestriction admission key on this identity.
  issue kubelet "/O=system:nodes/CN=system:node:$node" clientAuth
  issue kubelet-server "/CN=$node" serverAuth "DNS:$node,DNS:localhost,IP:$ip,IP:127.0.0.1"

  # Service-account token signing pair (RSA: what every client expects).
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  chmod 600 "$PKI/sa.key"

  local local_api="https://127.0.0.1:$API_PORT"
  write_kubeconfig "$PKI/controller-manager.kubeconfig" controller-manager "$local_api"
  write_kubeconfig "$PKI/scheduler.kubeconfig" scheduler "$local_api"
  write_kubeconfig "$PKI/kubelet.kubeconfig" kubelet "$local_api"
  write_kubeconfig "$PKI/kube-proxy.kubeconfig" kube-proxy "$local_api"
  write_kubeconfig "$KUBECONFIG_OUT" admin "$local_api"
  echo "$ip" >"$PKI/node-ip"
  touch "$PKI/done"
}
