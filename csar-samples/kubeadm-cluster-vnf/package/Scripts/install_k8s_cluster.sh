#!/bin/bash
# Installs one node of a Kubernetes cluster with kubeadm on Ubuntu (20.04 or
# later). vnfm's kubernetes-mgmt driver uploads it to every VM and runs it as
# root:
#
#   install_k8s_cluster.sh MODE PARAMS_FILE
#
# PARAMS_FILE holds KEY='value' lines (mode 0600; it carries the join token):
#   NODE_NAME, ADVERTISE_ADDRESS          this node's Kubernetes name and address
#   CONTROL_PLANE_ENDPOINT                host:6443 of the cluster's API server
#   POD_CIDR, SERVICE_CIDR                (init) the pod and service networks
#   JOIN_TOKEN, CA_CERT_HASH              (join) from the first master
#   CONTROL_PLANE=true, CERTIFICATE_KEY   (join) join as another master
#   HTTP_PROXY, HTTPS_PROXY, NO_PROXY, K8S_NODE_CIDR   optional proxy settings
#   ADMIN_TOKEN_MANIFEST                  (admin-token) the service account manifest
#
# MODE:
#   init         install the packages, prepare the host, kubeadm init (first master)
#   join         install the packages, prepare the host, kubeadm join
#   join-facts   (first master) write TOKEN, CA_CERT_HASH and CERTIFICATE_KEY
#                to join-facts.env beside PARAMS_FILE, mode 0600
#   admin-token  (first master) apply the admin service account manifest and
#                write its token to admin-token beside PARAMS_FILE, mode 0600
#   reset        kubeadm reset -f
#
# Every mode can run again: a node already initialised or joined is left as
# it is. Nothing secret is printed.
set -euo pipefail

MODE=${1:?usage: install_k8s_cluster.sh init|join|join-facts|admin-token|reset PARAMS_FILE}
PARAMS=${2:?usage: install_k8s_cluster.sh MODE PARAMS_FILE}
# shellcheck source=/dev/null
. "$PARAMS"
OUT_DIR=$(dirname "$PARAMS")
# Site overrides (KUBE_VERSION, ...), when the image carries some.
# shellcheck source=/dev/null
[ -r /etc/default/vnfm-k8s ] && . /etc/default/vnfm-k8s
KUBE_VERSION=${KUBE_VERSION:-1.32}
KUBECONFIG=/etc/kubernetes/admin.conf
export KUBECONFIG DEBIAN_FRONTEND=noninteractive
umask 077

log() { echo "[install_k8s_cluster ${MODE}] $*"; }
die() { echo "[install_k8s_cluster ${MODE}] error: $*" >&2; exit 1; }

# Writes stdin to $1 when the content differs; returns 0 when it changed the file.
write_if_changed() {
  local file=$1 tmp
  tmp=$(mktemp)
  cat >"$tmp"
  if [ -f "$file" ] && cmp -s "$tmp" "$file"; then
    rm -f "$tmp"
    return 1
  fi
  mkdir -p "$(dirname "$file")"
  install -m 0644 "$tmp" "$file"
  rm -f "$tmp"
  return 0
}

setup_proxy() {
  [ -n "${HTTP_PROXY:-}${HTTPS_PROXY:-}" ] || return 0
  local no_proxy_all="localhost,127.0.0.1"
  for n in ${NO_PROXY:-} ${K8S_NODE_CIDR:-} ${POD_CIDR:-} ${SERVICE_CIDR:-} ${ADVERTISE_ADDRESS:-}; do
    no_proxy_all="${no_proxy_all},${n}"
  done
  export http_proxy=${HTTP_PROXY:-} https_proxy=${HTTPS_PROXY:-} no_proxy=$no_proxy_all
  export HTTP_PROXY=${HTTP_PROXY:-} HTTPS_PROXY=${HTTPS_PROXY:-} NO_PROXY=$no_proxy_all
  write_if_changed /etc/apt/apt.conf.d/95kubernetes-proxy <<EOF || true
Acquire::http::Proxy "${HTTP_PROXY:-}";
Acquire::https::Proxy "${HTTPS_PROXY:-}";
EOF
  chmod 0600 /etc/apt/apt.conf.d/95kubernetes-proxy
  if write_if_changed /etc/systemd/system/containerd.service.d/http-proxy.conf <<EOF; then
[Service]
Environment="HTTP_PROXY=${HTTP_PROXY:-}" "HTTPS_PROXY=${HTTPS_PROXY:-}" "NO_PROXY=${no_proxy_all}"
EOF
    chmod 0600 /etc/systemd/system/containerd.service.d/http-proxy.conf
    RESTART_CONTAINERD=1
  fi
}

install_packages() {
  local missing=()
  for p in kubelet kubeadm kubectl; do command -v "$p" >/dev/null 2>&1 || missing+=("$p"); done
  command -v containerd >/dev/null 2>&1 || missing+=(containerd)
  [ ${#missing[@]} -eq 0 ] && { log "kubeadm, kubelet, kubectl and containerd are installed"; return 0; }
  log "installing ${missing[*]}"
  apt-get update -q
  apt-get install -y -q apt-transport-https ca-certificates curl gpg
  if [[ " ${missing[*]} " == *" kube"* ]]; then
    mkdir -p -m 0755 /etc/apt/keyrings
    curl -fsSL "https://pkgs.k8s.io/core:/stable:/v${KUBE_VERSION}/deb/Release.key" | gpg --batch --yes --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg
    chmod 0644 /etc/apt/keyrings/kubernetes-apt-keyring.gpg
    echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v${KUBE_VERSION}/deb/ /" >/etc/apt/sources.list.d/kubernetes.list
    chmod 0644 /etc/apt/sources.list.d/kubernetes.list
    apt-get update -q
  fi
  apt-get install -y -q "${missing[@]}"
  apt-mark hold kubelet kubeadm kubectl >/dev/null 2>&1 || true
}

prepare_host() {
  # Kernel modules and sysctls kubeadm's preflight checks ask for; each only when missing.
  write_if_changed /etc/modules-load.d/kubernetes.conf <<EOF || true
overlay
br_netfilter
EOF
  grep -qw overlay /proc/filesystems || modprobe overlay
  [ -d /proc/sys/net/bridge ] || modprobe br_netfilter
  write_if_changed /etc/sysctl.d/99-kubernetes.conf <<EOF || true
net.bridge.bridge-nf-call-iptables = 1
net.bridge.bridge-nf-call-ip6tables = 1
net.ipv4.ip_forward = 1
EOF
  sysctl -q -p /etc/sysctl.d/99-kubernetes.conf >/dev/null
  # kubelet does not run with swap on.
  if [ -n "$(swapon --noheadings --show 2>/dev/null || true)" ]; then
    log "turning swap off"
    swapoff -a
    sed -i.bak '/\sswap\s/ s/^[^#]/#&/' /etc/fstab
  fi
  # containerd with the systemd cgroup driver kubelet expects.
  if [ ! -s /etc/containerd/config.toml ]; then
    mkdir -p /etc/containerd
    local conf
    conf=$(containerd config default) || die "containerd config default failed"
    printf '%s\n' "$conf" | sed 's/SystemdCgroup = false/SystemdCgroup = true/' | write_if_changed /etc/containerd/config.toml && RESTART_CONTAINERD=1
  fi
  if [ "${RESTART_CONTAINERD:-0}" = 1 ]; then
    systemctl daemon-reload
    systemctl restart containerd
  fi
  systemctl enable --now containerd >/dev/null 2>&1 || true
  systemctl enable kubelet >/dev/null 2>&1 || true
}

# host:port of the endpoint → host
endpoint_host() { local e=${CONTROL_PLANE_ENDPOINT}; e=${e%:*}; e=${e#[}; echo "${e%]}"; }

do_init() {
  : "${NODE_NAME:?}" "${ADVERTISE_ADDRESS:?}" "${CONTROL_PLANE_ENDPOINT:?}"
  setup_proxy
  install_packages
  prepare_host
  if [ -f /etc/kubernetes/admin.conf ] && kubectl get --raw /readyz >/dev/null 2>&1; then
    log "the control plane is already initialised on ${NODE_NAME}"
    return 0
  fi
  local args=(init --node-name "$NODE_NAME" --apiserver-advertise-address "$ADVERTISE_ADDRESS"
    --control-plane-endpoint "$CONTROL_PLANE_ENDPOINT" --apiserver-cert-extra-sans "$(endpoint_host)" --upload-certs)
  [ -n "${POD_CIDR:-}" ] && args+=(--pod-network-cidr "$POD_CIDR")
  [ -n "${SERVICE_CIDR:-}" ] && args+=(--service-cidr "$SERVICE_CIDR")
  log "kubeadm init --node-name $NODE_NAME --control-plane-endpoint $CONTROL_PLANE_ENDPOINT"
  # kubeadm init prints a join command with a token and certificate key: keep it off the output.
  kubeadm "${args[@]}" >"$OUT_DIR/kubeadm-init.log" 2>&1 || { tail -n 30 "$OUT_DIR/kubeadm-init.log" | grep -v -e '--token' -e '--certificate-key' >&2; die "kubeadm init failed (log: $OUT_DIR/kubeadm-init.log)"; }
  mkdir -p /root/.kube
  install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config
  log "control plane initialised on ${NODE_NAME}"
}

do_join() {
  : "${NODE_NAME:?}" "${ADVERTISE_ADDRESS:?}" "${CONTROL_PLANE_ENDPOINT:?}" "${JOIN_TOKEN:?}" "${CA_CERT_HASH:?}"
  setup_proxy
  install_packages
  prepare_host
  if [ -f /etc/kubernetes/kubelet.conf ]; then
    log "${NODE_NAME} is already in a cluster (/etc/kubernetes/kubelet.conf exists)"
    return 0
  fi
  local args=(join "$CONTROL_PLANE_ENDPOINT" --node-name "$NODE_NAME" --token "$JOIN_TOKEN" --discovery-token-ca-cert-hash "$CA_CERT_HASH")
  if [ "${CONTROL_PLANE:-}" = true ]; then
    args+=(--control-plane --apiserver-advertise-address "$ADVERTISE_ADDRESS" --certificate-key "${CERTIFICATE_KEY:?}")
  fi
  log "kubeadm join ${CONTROL_PLANE_ENDPOINT} --node-name ${NODE_NAME}${CONTROL_PLANE:+ --control-plane}"
  kubeadm "${args[@]}" >"$OUT_DIR/kubeadm-join.log" 2>&1 || { tail -n 30 "$OUT_DIR/kubeadm-join.log" >&2; die "kubeadm join failed (log: $OUT_DIR/kubeadm-join.log)"; }
  if [ "${CONTROL_PLANE:-}" = true ]; then
    mkdir -p /root/.kube
    install -m 0600 /etc/kubernetes/admin.conf /root/.kube/config
  fi
  log "${NODE_NAME} joined"
}

do_join_facts() {
  local cmd token hash key
  cmd=$(kubeadm token create --print-join-command 2>/dev/null) || die "kubeadm token create failed"
  token=$(printf '%s\n' "$cmd" | sed -n 's/.*--token \([^ ]*\).*/\1/p')
  hash=$(printf '%s\n' "$cmd" | sed -n 's/.*--discovery-token-ca-cert-hash \([^ ]*\).*/\1/p')
  # The last line of upload-certs' output is the key that decrypts the uploaded certificates.
  key=$(kubeadm init phase upload-certs --upload-certs 2>/dev/null | tail -n 1) || die "kubeadm init phase upload-certs failed"
  [ -n "$token" ] && [ -n "$hash" ] && [ -n "$key" ] || die "kubeadm did not give a token, CA hash and certificate key"
  printf "TOKEN='%s'\nCA_CERT_HASH='%s'\nCERTIFICATE_KEY='%s'\n" "$token" "$hash" "$key" >"$OUT_DIR/join-facts.env"
  chmod 0600 "$OUT_DIR/join-facts.env"
  log "join token, CA hash and certificate key written to $OUT_DIR/join-facts.env"
}

do_admin_token() {
  : "${ADMIN_TOKEN_MANIFEST:?}"
  kubectl apply -f "$ADMIN_TOKEN_MANIFEST"
  local ns name token i
  ns=$(sed -n '/^kind: Secret/,/^---/ s/^  namespace: *//p' "$ADMIN_TOKEN_MANIFEST" | head -n 1)
  name=$(sed -n '/^kind: Secret/,/^---/ s/^  name: *//p' "$ADMIN_TOKEN_MANIFEST" | head -n 1)
  [ -n "$name" ] || die "$ADMIN_TOKEN_MANIFEST has no Secret of type kubernetes.io/service-account-token"
  # The token controller fills the Secret shortly after it is created.
  for i in $(seq 1 60); do
    token=$(kubectl -n "${ns:-kube-system}" get secret "$name" -o jsonpath='{.data.token}' 2>/dev/null || true)
    [ -n "$token" ] && break
    sleep 1
  done
  [ -n "${token:-}" ] || die "secret ${ns:-kube-system}/$name has no token after 60 s"
  printf '%s' "$token" | base64 -d >"$OUT_DIR/admin-token"
  chmod 0600 "$OUT_DIR/admin-token"
  log "token of secret ${ns:-kube-system}/$name written to $OUT_DIR/admin-token"
}

case "$MODE" in
  init) do_init ;;
  join) do_join ;;
  join-facts) do_join_facts ;;
  admin-token) do_admin_token ;;
  reset) kubeadm reset -f ;;
  *) die "unknown mode $MODE (init, join, join-facts, admin-token, reset)" ;;
esac
