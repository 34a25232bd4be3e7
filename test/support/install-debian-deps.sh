#!/usr/bin/env bash
# Installs the Debian packages the end-to-end tests start themselves
# (Keystone under uwsgi, keystoneclient for seeding it, Heat's API and engine
# run as heat-all, sshd, openssl; for the simulated nodes of test/support/nodes.ts
# sudo, the CNCF registry that their docker stand-in runs, skopeo and htpasswd)
# and the `openstack` CLI with its Heat plugin that the OpenStack benchmark
# compares with; etcd for the real Kubernetes API server tier
# (test/support/real-apiserver.ts); PostgreSQL for the shared store's tests
# (test/support/postgres.ts: initdb and the server in a temp directory);
# zsh and fish, whose completion the completion scripts are tested in
# (test/e2e/completion.test.ts); for the real OpenStack tier
# (test/support/real-openstack.ts) Nova, Placement, Neutron and Glance as
# Python libraries with their -common packages (tools, paste and policy
# files; the daemon packages are not needed, and nova-compute's would bring
# a hypervisor) and RabbitMQ, the bus between Nova's services.
#
# Run as root on Debian bookworm. Idempotent: when every package is already
# installed it changes nothing and returns at once. It never leaves a daemon
# running: the tests start their own servers on 127.0.0.1 with their own
# configuration, and a packaged service listening on 0.0.0.0 would only get in
# their way.
set -euo pipefail

packages=(
  keystone
  uwsgi
  uwsgi-plugin-python3
  python3-keystoneclient
  python3-cryptography
  heat-api
  heat-engine
  python3-heatclient
  python3-openstackclient
  openssh-server
  openssl
  sudo
  docker-registry
  skopeo
  apache2-utils
  curl
  iproute2
  etcd-server
  postgresql
  zsh
  fish
  python3-nova
  nova-common
  python3-placement
  placement-common
  python3-neutron
  neutron-common
  python3-glance
  glance-common
  rabbitmq-server
)

# Services these packages ship: any of them that the install started is
# stopped again. Not open-iscsi: its status always succeeds and its stop
# unmounts every _netdev filesystem of the machine (its daemon is iscsid).
services=(keystone uwsgi apache2 ssh heat-api heat-engine docker-registry etcd postgresql rabbitmq-server iscsid)

log() { printf 'install-debian-deps: %s\n' "$*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
  log "must run as root (it calls apt-get)"
  exit 1
fi

service_running() {
  case $1 in
    # Its status runs rabbitmqctl, an Erlang node that starts epmd (listening
    # on every address) and leaves it running: read the pid file instead.
    rabbitmq-server) [[ -s /var/run/rabbitmq/pid ]] && kill -0 "$(cat /var/run/rabbitmq/pid)" 2>/dev/null ;;
    *) [[ -x /etc/init.d/$1 ]] && service "$1" status >/dev/null 2>&1 ;;
  esac
}

is_installed() {
  [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true) == installed ]]
}

missing=()
for p in "${packages[@]}"; do
  is_installed "$p" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  log "all packages already installed"
  exit 0
fi
log "installing: ${missing[*]}"

# Services already running belong to whoever runs this machine: leave them be.
running_before=()
for s in "${services[@]}"; do
  service_running "$s" && running_before+=("$s")
done

# Maintainer scripts start daemons through invoke-rc.d, which asks
# policy-rc.d first; 101 means "action forbidden".
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\n# Installed by vnfm test/support/install-debian-deps.sh: no daemon starts on install.\nexit 101\n' \
    >/usr/sbin/policy-rc.d
  chmod 0755 /usr/sbin/policy-rc.d
fi

# The OpenStack maintainer scripts would otherwise create databases,
# bootstrap an admin, register endpoints and write credentials into
# /etc/keystone, /etc/heat, /etc/nova, ...; the tests configure everything
# themselves in temp dirs.
debconf-set-selections <<'EOF'
keystone keystone/configure_db boolean false
keystone keystone/create-admin-tenant boolean false
keystone keystone/register-endpoint boolean false
heat-common heat/configure_with_debconf boolean false
heat-common heat/configure_db boolean false
heat-common heat/configure_rabbit boolean false
heat-common heat/configure_ksat boolean false
heat-api heat/configure_api-endpoint boolean false
nova-common nova/configure_db boolean false
nova-common nova/configure_rabbit boolean false
nova-common nova/configure_ksat boolean false
placement-common placement/configure_db boolean false
placement-common placement/configure_ksat boolean false
neutron-common neutron/configure_db boolean false
neutron-common neutron/configure_rabbit boolean false
neutron-common neutron/configure_ksat boolean false
glance-common glance/configure_db boolean false
glance-common glance/configure_rabbit boolean false
glance-common glance/configure_ksat boolean false
EOF

export DEBIAN_FRONTEND=noninteractive
apt-get update
# python3-nova pulls os-brick -> open-iscsi -> udev and systemd (upgrading
# libsystemd0 and libudev1 with them); policy-rc.d keeps all of them from
# starting. Configuration files already there stay (no question is asked).
apt-get install -y --no-install-recommends --no-upgrade \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${packages[@]}"

# In case an existing policy-rc.d allowed starting: stop what the maintainer
# scripts started. `service` does not ask policy-rc.d.
for s in "${services[@]}"; do
  [[ " ${running_before[*]} " == *" $s "* ]] && continue
  if service_running "$s"; then
    log "stopping $s, started by its package"
    service "$s" stop || true
  fi
done

for p in "${packages[@]}"; do
  if ! is_installed "$p"; then
    log "$p is still not installed"
    exit 1
  fi
done
log "done"
