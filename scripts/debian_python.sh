#!/usr/bin/env bash
# Run a command beside Debian's own build of CPython 3.X: a Debian root (unstable) with its
# python3.X packages, entered with chroot, this repository and the build caches mounted at the same
# paths as outside.
#
#   scripts/debian_python.sh 3.14 -- CMD [ARG...]   (run CMD in the root, in the current directory)
#   scripts/debian_python.sh 3.14 --version         (print the root's `python3.14 -VV`)
#
# Why: a distribution's build of CPython is what many users have, and it differs from a source build
# in ways that matter to goprep's build: a split multiarch pyconfig.h and its own link flags
# (-fwrapv, -Wl,-Bsymbolic-functions), each of which broke the zig-compiled wheel until setup.py and
# scripts/build_wheels.sh handled it. CI builds and tests the cp314 wheel beside Debian's CPython 3.14
# this way (the packages of the python3.14 upload in unstable: python3.14, -dev, -venv), and the
# free-threaded 3.14t from source (scripts/get_python.sh; Debian builds no free-threaded package).
#
# The root: debootstrap --variant=minbase sid with the packages below (~100 MB download, ~2 min
# once), cached in $GOPREP_DEBIAN_PY_ROOT (default ~/.cache/goprep/debian-py<series>); it is
# complete when .goprep-complete holds the package list below (another list: rebuilt). Needs root
# (debootstrap, chroot, mount --bind) and debootstrap (apt-get installs it when missing).
# Inside: PATH holds the root's python3.X, also as python3 (`scripts/build_wheels.sh --find 3.14`
# finds it there); HOME is /root, with the pip and goprep codec caches and Go's module and build
# caches mounted from outside; the environment is cleared but for the GOPREP_*, GO*, PYTHON*, PIP_*
# and CA-certificate variables; this machine's resolver, CA certificates and pip.conf are copied in.
# Everything mounted is unmounted on exit.
set -euo pipefail
log() { echo "debian_python: $*" >&2; }
die() { log "$*"; exit 1; }

series=${1:-}
[[ "$series" =~ ^3\.1[4-9]$ ]] || die "usage: $0 3.14 -- CMD... | 3.14 --version (got '${series}')"
shift
PKGS="python${series},python${series}-venv,python${series}-dev,ca-certificates,binutils,git,curl,pkg-config,cmake,nasm,make"
ROOTFS=${GOPREP_DEBIAN_PY_ROOT:-$HOME/.cache/goprep/debian-py$series}
SUITE=${GOPREP_DEBIAN_SUITE:-sid}
MIRROR=${GOPREP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot, mount --bind)"

if [[ "$(cat "$ROOTFS/.goprep-complete" 2>/dev/null)" != "$PKGS" ]]; then
  if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; }
  fi
  t0=$SECONDS
  log "building the Debian $SUITE root with python$series in $ROOTFS (debootstrap, once)"
  tmp="$ROOTFS.tmp"
  rm -rf "$tmp" "$ROOTFS"; mkdir -p "$(dirname "$ROOTFS")"
  debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$tmp" "$MIRROR" >&2 \
    || { tail -20 "$tmp/debootstrap/debootstrap.log" >&2 2>/dev/null || true; die "debootstrap failed"; }
  rm -rf "$tmp"/var/cache/apt/archives/*.deb
  # the root's only CPython is also its python3 (scripts/build_wheels.sh makes its tools venv with it)
  ln -sf "/usr/bin/python$series" "$tmp/usr/local/bin/python3"
  echo "$PKGS" > "$tmp/.goprep-complete"
  mv "$tmp" "$ROOTFS"
  log "root ready in $((SECONDS - t0)) s ($(du -sh "$ROOTFS" | cut -f1))"
fi
[[ -x "$ROOTFS/usr/bin/python$series" ]] || die "no python$series in $ROOTFS"

if [[ "${1:-}" == --version ]]; then
  chroot "$ROOTFS" "/usr/bin/python$series" -VV
  exit 0
fi
[[ "${1:-}" == -- && $# -ge 2 ]] || die "usage: $0 $series -- CMD..."
shift

# mounts: made one by one, undone in reverse on exit (also when the command fails)
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { # bind SRC: SRC (a directory outside) at the same path inside the root
  mkdir -p "$1" "$ROOTFS$1"
  mount --bind "$1" "$ROOTFS$1"
  mounted+=("$ROOTFS$1")
}
mount -t proc proc "$ROOTFS/proc"; mounted+=("$ROOTFS/proc")
mount --bind /dev "$ROOTFS/dev"; mounted+=("$ROOTFS/dev")
mkdir -p "$ROOTFS/dev/shm"
# this machine's network settings: its resolver, the CA certificates it trusts (a proxy's among
# them, where there is one), pip's configuration
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
if [[ -f /etc/pip.conf ]]; then cp /etc/pip.conf "$ROOTFS/etc/pip.conf"; else rm -f "$ROOTFS/etc/pip.conf"; fi
here=$(pwd -P)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
bind "$repo"
[[ "$here" == "$repo" || "$here" == "$repo"/* ]] || bind "$here"
# the download and build caches (Go's are keyed by toolchain version: sharing them is safe)
bind "$HOME/.cache/pip"
bind "$HOME/.cache/goprep/codecs"
bind "$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")"
bind "$(go env GOCACHE 2>/dev/null || echo "$HOME/.cache/go-build")"
[[ -d "${PIP_FIND_LINKS:-}" ]] && bind "$PIP_FIND_LINKS"
# what the command was given by the caller: the GOPREP_*, GO*, PYTHON*, PIP_* variables and those
# naming CA certificates
pass=()
while IFS='=' read -r k _; do
  [[ "$k" =~ ^(GOPREP_|GO|PYTHON|PIP_|SSL_CERT_|REQUESTS_CA_BUNDLE$|CURL_CA_BUNDLE$) ]] && pass+=("$k=${!k}")
done < <(env)
chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 TMPDIR=/tmp "${pass[@]}" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$here" "$@"
