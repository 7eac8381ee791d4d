#!/usr/bin/env bash
# Make sure the sandbox base image exists; bootstrap it offline with debootstrap when missing.
# Reused by tag, so this costs ~50 s once per machine. Usage: ensure-base-image.sh [TAG]
set -euo pipefail
# shellcheck source=lib/install-missing.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-missing.sh"
# shellcheck source=lib/workdirs.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/workdirs.sh"

TAG="${1:-${JAZZMINE_BASE_IMAGE:-jazzmine/base:bookworm}}"
SUITE="${JAZZMINE_BASE_SUITE:-bookworm}"
MIRROR="${JAZZMINE_DEBIAN_MIRROR:-}"

# What a bootstrapped image holds: Python for the harness and Python tools, Node.js for script
# tools written as script.js. Bumped when the package list changes, so an older image is rebuilt.
CONTENTS="python3,nodejs"
have=$(docker image inspect -f '{{ index .Config.Labels "jazzmine.base.contents" }}' "$TAG" 2>/dev/null || true)
if [ "$have" = "$CONTENTS" ]; then
  echo "ensure-base-image: $TAG present"
  exit 0
elif docker image inspect "$TAG" >/dev/null 2>&1 && [ "$TAG" != "jazzmine/base:bookworm" ]; then
  echo "ensure-base-image: $TAG present (provided by the operator)"
  exit 0
elif [ -n "$have" ] || docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "ensure-base-image: $TAG holds ${have:-an older package set}; bootstrapping it again"
  # Sandbox and bash images are named by their own inputs, not the base's: drop the ones built
  # on the old base so that each is rebuilt on the new one when next used.
  docker images --format '{{.Repository}}:{{.Tag}}' \
    | grep -E '^jazzmine/(sandbox-[^:]+|sandbox/[^:]+|bash):' | xargs -r docker rmi -f >/dev/null 2>&1 || true
fi

# A deployment with a registry may pull its base image first, but only when the operator says so
# (JAZZMINE_BASE_IMAGE_PULL=1): a name is never pulled on a sandbox author's word.
if [ "${JAZZMINE_BASE_IMAGE_PULL:-0}" = "1" ] && docker pull "$TAG" >/dev/null 2>&1; then
  echo "ensure-base-image: pulled $TAG"
  exit 0
fi

if [ "$(id -u)" != "0" ]; then
  echo "ensure-base-image: $TAG is missing and bootstrapping it needs root" >&2
  exit 1
fi

install_missing ensure-base-image debootstrap debootstrap

# A bootstrap killed outright (its worker SIGKILLed: the tether then kills this script and
# debootstrap, and no trap runs) leaves its rootfs; the next one removes it.
ROOTFS_PREFIX="${TMPDIR:-/tmp}/jazzmine-rootfs."
workdirs_abandoned_remove "$ROOTFS_PREFIX" 60 \
  | sed 's/^/ensure-base-image: removed an abandoned bootstrap: /'
ROOTFS="$(mktemp -d "${ROOTFS_PREFIX}XXXXXX")"
exec 9<"$ROOTFS"
flock 9  # held by this script and debootstrap, which inherits it, for as long as either lives
trap 'rm -rf --one-file-system "$ROOTFS"' EXIT

echo "ensure-base-image: debootstrapping $SUITE into $ROOTFS (about a minute)"
# shellcheck disable=SC2086
debootstrap --variant=minbase --include=python3,nodejs,ca-certificates "$SUITE" "$ROOTFS" $MIRROR \
  >/tmp/jazzmine-debootstrap.log 2>&1 || {
  echo "ensure-base-image: debootstrap failed; last log lines:" >&2
  tail -n 20 /tmp/jazzmine-debootstrap.log >&2
  exit 1
}

# Trim what a sandbox never needs: package caches and docs make the image smaller.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
  "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*

echo "ensure-base-image: importing as $TAG"
tar -C "$ROOTFS" -c . | docker import -c 'ENV LANG=C.UTF-8' \
  -c "LABEL jazzmine.base.contents=$CONTENTS" - "$TAG" >/dev/null
echo "ensure-base-image: $TAG ready"
