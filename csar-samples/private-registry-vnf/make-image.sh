#!/bin/sh
# Writes package/Files/images/private_registry.tar: a tiny image in the
# `docker save` format (manifest.json, the image config, one layer tar) tagged
# registry:latest. It stands in for the real registry image, so that the
# sample stays small: it loads with `docker load`, but holds no registry
# program. For a real deployment replace it with the real image:
#   docker pull registry:latest && docker save registry:latest -o package/Files/images/private_registry.tar
# (then run vnfm vnfpkg-build, which fills the hash in TOSCA.meta), or drop
# image_path from the request to have the server pull registry:latest.
# Reproducible: the same bytes on every run (GNU tar, fixed times and owners).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/package/Files/images/private_registry.tar"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarit() { # tarit DIR OUT
  (cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
     tar --format=ustar --no-recursion --mtime=@0 --owner=0 --group=0 --numeric-owner \
       --mode=u+rw,go+r-w --blocking-factor=1 -T - -cf "$2")
}
mkdir -p "$work/layer/etc/docker/registry" "$work/image"
cat > "$work/layer/etc/docker/registry/config.yml" <<'YML'
version: 0.1
storage:
  filesystem:
    rootdirectory: /var/lib/registry
http:
  addr: :5000
YML
tarit "$work/layer" "$work/layer.tar"
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
mkdir -p "$work/image/$diff_id"
mv "$work/layer.tar" "$work/image/$diff_id/layer.tar"
printf '1.0' > "$work/image/$diff_id/VERSION"
printf '{"id":"%s","created":"1970-01-01T00:00:00Z","os":"linux"}' "$diff_id" > "$work/image/$diff_id/json"
printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"ExposedPorts":{"5000/tcp":{}},"Volumes":{"/var/lib/registry":{}},"Entrypoint":["/entrypoint.sh"],"Cmd":["/etc/docker/registry/config.yml"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"vnfm sample: registry configuration only"}]}' "$diff_id" > "$work/config.json"
config=$(sha256sum "$work/config.json" | cut -d' ' -f1)
mv "$work/config.json" "$work/image/$config.json"
printf '[{"Config":"%s.json","RepoTags":["registry:latest"],"Layers":["%s/layer.tar"]}]' "$config" "$diff_id" > "$work/image/manifest.json"
printf '{"registry":{"latest":"%s"}}' "$diff_id" > "$work/image/repositories"
mkdir -p "$(dirname "$out")"
tarit "$work/image" "$out"
echo "$out: $(wc -c < "$out") bytes, sha256 $(sha256sum "$out" | cut -d' ' -f1)"
