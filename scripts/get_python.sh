#!/usr/bin/env bash
# Obtain a CPython interpreter built from the official source tarball, cached; print its path.
#
#   scripts/get_python.sh 3.14     # CPython 3.14 (GIL)            -> .../3.14.N/bin/python3.14
#   scripts/get_python.sh 3.14t    # free-threaded (--disable-gil) -> .../3.14.Nt/bin/python3.14t
#   (3.13 and 3.13t too: the oldest CPython with a free-threaded build)
#
# The last line on stdout is the interpreter's path; progress goes to stderr. Exit 3: no pinned
# source could be had (neither in the cache, nor from Debian's archive, nor from the Go module
# proxy), 1: any other failure.
#
# Source: the upstream tarball as Debian's archive serves it (pool/main/p/python3.X/
# python3.X_<version>.orig.tar.xz, byte for byte python.org's Python-<version>.tar.xz), pinned below
# by version, size and SHA-256 as listed in the Checksums-Sha256 of Debian's (signed) Sources index;
# every download is checked against the pin before anything is unpacked. Several versions are
# pinned per series because the archive drops old uploads: the first one that can be had is built.
# A tarball placed by hand in $CACHE/src/ under either name is used when its checksum matches.
#
# Second source, when no pinned tarball can be had (on 2026-12-03 Debian's pool answered 404 for
# every python3.14 tarball its Sources index lists; python.org and GitHub cannot be reached here):
# CPython's git tree at the release tag, as the Go module proxy serves any GitHub repository
# (module github.com/python/cpython, version v<version>+incompatible), fetched with `go mod download`,
# which checks it against the Go checksum database (sum.golang.org), and against the h1: hash pinned
# below (gopins). The git tree is the tarball's source less its generated docs; module zips keep no
# file modes, so files starting with "#!" are made executable again (configure, install-sh, ...).
# Needs Go on PATH (it is, wherever goprep's tests run). Cache: $CACHE/gomod (a module cache).
#
# Build: ./configure --prefix=$CACHE/<version>[t] [--disable-gil] --with-ensurepip=install
# --disable-test-modules (no test suite: less to build and byte-compile), then
# nice make -j${GOPREP_PYTHON_JOBS:-2} and make install (no PGO/LTO: a build takes ~6-10 min on 2
# cores instead of ~40). A finished prefix is marked with .goprep-complete, so the second run only
# prints the path. Build dependencies come from Debian's packages (apt-get, when missing and root).
# Cache: $GOPREP_PYTHON_CACHE, default ~/.cache/goprep/python.
set -euo pipefail

log() { echo "get_python: $*" >&2; }
die() { log "$*"; exit 1; }

want=${1:-}
[[ "$want" =~ ^3\.(13|14)t?$ ]] || die "usage: $0 3.14|3.14t|3.13|3.13t (got '${want}')"
series=${want%t}
ft=0; [[ "$want" == *t ]] && ft=1

# version size sha256 (Checksums-Sha256 of pool/main/p/python3.X/python3.X_<version>.orig.tar.xz)
pins() {
  case "$1" in
    3.14) cat <<'EOF'
3.14.10 24240392 de414a57119abef52784d8993e341d53aed635fc2b05c2607d9f98a2c5b72032
3.14.9 24176992 e02d9ac21cebda6e46435369744a92c65cc7cd8669697694122cf97ffacd1e53
3.14.8 24130644 c2215904f02b175596dc49351585104f4bc20341e1c47378b26a2c274360ce73
EOF
    ;;
    3.13) cat <<'EOF'
3.13.15 23160540 1e66a7945a48390ee4c2a4268a0e4185884059a13c4aab6d148aa208deea4a76
EOF
    ;;
  esac
}

CACHE=${GOPREP_PYTHON_CACHE:-$HOME/.cache/goprep/python}
ARCHIVE=${GOPREP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
exe_name="python${series}$([[ $ft == 1 ]] && echo t || true)"
mkdir -p "$CACHE/src"

# version h1 (the Go checksum database's hash of github.com/python/cpython@v<version>+incompatible's
# module zip, as `go mod download -json` prints it in "Sum")
gopins() {
  case "$1" in
    3.14) echo "3.14.7 h1:VAY+1Ox2/E68BOZZvT06dMumxgyvcJLzKZgCkEEZamY=" ;;
  esac
}

# A finished build of any pinned version of the series: done.
while read -r ver _; do
  prefix="$CACHE/$ver$([[ $ft == 1 ]] && echo t || true)"
  if [[ -f "$prefix/.goprep-complete" && -x "$prefix/bin/$exe_name" ]]; then
    log "cached: $prefix ($("$prefix/bin/$exe_name" -VV 2>&1 | head -1))"
    echo "$prefix/bin/$exe_name"; exit 0
  fi
done < <(pins "$series"; gopins "$series")

check() { # file size sha256 -> 0 when both match
  [[ -f "$1" ]] && [[ $(stat -c %s "$1") == "$2" ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$3" ]]
}

tarball="" gotree="" version=""
tried=()
while read -r ver size sum; do
  deb="$CACHE/src/python${series}_${ver}.orig.tar.xz"
  for f in "$deb" "$CACHE/src/Python-${ver}.tar.xz"; do
    if check "$f" "$size" "$sum"; then tarball=$f; version=$ver; break 2; fi
  done
  url="$ARCHIVE/pool/main/p/python${series}/python${series}_${ver}.orig.tar.xz"
  log "downloading $url"
  code=$(curl -sS -L --retry 2 -m 600 -o "$deb.part" -w '%{http_code}' "$url" || true)
  if [[ "$code" == 200 ]] && check "$deb.part" "$size" "$sum"; then
    mv "$deb.part" "$deb"; tarball=$deb; version=$ver; break
  fi
  if [[ "$code" == 200 ]]; then
    tried+=("$url: checksum mismatch (want size $size, sha256 $sum)")
  else
    tried+=("$url: HTTP ${code:-error}")
  fi
  rm -f "$deb.part"
done < <(pins "$series")
# The second source: the git tree at a release tag from the Go module proxy (see the header).
if [[ -z "$tarball" ]]; then
  while read -r ver h1; do
    mod="github.com/python/cpython@v$ver+incompatible"
    if ! command -v go >/dev/null; then tried+=("$mod from the Go module proxy: no go on PATH"); break; fi
    log "go mod download $mod (the Go module proxy, checked against sum.golang.org)"
    out=$(cd "$CACHE" && GOMODCACHE="$CACHE/gomod" GOFLAGS=-modcacherw GO111MODULE=on \
          go mod download -json "$mod" 2>&1) || { tried+=("$mod: $(echo "$out" | tail -1)"); continue; }
    read -r dir sum < <(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["Dir"], d["Sum"])' <<<"$out")
    if [[ "$sum" != "$h1" ]]; then tried+=("$mod: hash $sum, want $h1"); continue; fi
    gotree=$dir; version=$ver; break
  done < <(gopins "$series")
fi
if [[ -z "$tarball" && -z "$gotree" ]]; then
  log "no source for CPython $series could be had; tried:"
  for t in "${tried[@]}"; do log "  - $t"; done
  log "(or put the official Python-<version>.tar.xz of a pinned version in $CACHE/src/)"
  exit 3
fi
if [[ -n "$tarball" ]]; then
  log "source: $tarball (CPython $version, sha256 verified)"
else
  log "source: $gotree (CPython $version's git tree, h1 verified)"
fi

# Build dependencies: the headers of the stdlib's C modules (ssl, zlib, ctypes, bz2, lzma, sqlite3,
# readline, uuid, curses). Missing ones are installed when we can; otherwise their modules are left
# out, and the import check below names the ones goprep's tests need.
deps=(build-essential pkg-config xz-utils libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev
      libsqlite3-dev libreadline-dev uuid-dev libncurses-dev)
missing=()
for p in "${deps[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) == 0 ]]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    log "missing build dependencies (not root, so not installed): ${missing[*]}"
  fi
fi

tag="$version$([[ $ft == 1 ]] && echo t || true)"
prefix="$CACHE/$tag"
build="$CACHE/build-$tag"
rm -rf "$build" "$prefix"
mkdir -p "$build"
t0=$SECONDS
if [[ -n "$tarball" ]]; then
  tar -xJf "$tarball" -C "$build" --strip-components=1
else
  cp -R "$gotree/." "$build/"
  chmod -R u+w "$build"
  # module zips keep no modes: the scripts (a "#!" first line) executable again
  # (grep finds "#!" at any line start, the test keeps only first lines; `|| true`: grep exits 1 on a
  # batch without one, which must not end the script under pipefail)
  { find "$build" -type f -size -2M -print0 | xargs -0 grep -l -m1 -e '^#!' 2>/dev/null || true; } \
    | while read -r f; do if [[ $(head -c2 "$f") == '#!' ]]; then chmod +x "$f"; fi; done
  grep -q "PY_VERSION *\"$version\"" "$build/Include/patchlevel.h" || die "$gotree is not CPython $version (Include/patchlevel.h)"
fi
cfg=(--prefix="$prefix" --with-ensurepip=install --disable-test-modules)
[[ $ft == 1 ]] && cfg+=(--disable-gil)
log "configure ${cfg[*]}"
(cd "$build" && nice ./configure -q "${cfg[@]}" > "$build/configure.log" 2>&1) \
  || { tail -30 "$build/configure.log" >&2; die "configure failed ($build/configure.log)"; }
jobs=${GOPREP_PYTHON_JOBS:-2}
log "make -j$jobs (several minutes on 2 cores)"
(cd "$build" && nice make -j"$jobs" > "$build/make.log" 2>&1) \
  || { tail -40 "$build/make.log" >&2; die "make failed ($build/make.log)"; }
(cd "$build" && nice make install > "$build/install.log" 2>&1) \
  || { tail -40 "$build/install.log" >&2; die "make install failed ($build/install.log)"; }
py="$prefix/bin/$exe_name"
[[ -x "$py" ]] || die "no $py after make install"
# The modules that pip, venv and goprep's tests need; a missing one means a missing -dev package.
"$py" - <<EOF || die "the new interpreter lacks a stdlib module (see above)"
import sys, sysconfig
import ssl, zlib, ctypes, bz2, lzma, sqlite3, uuid, hashlib, venv, ensurepip
ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
assert ft == bool($ft), ("free-threaded build" if ft else "GIL build", "expected the other")
print("  ", sys.version.replace("\n", " "), "| free-threaded:", ft, file=sys.stderr)
EOF
touch "$prefix/.goprep-complete"
rm -rf "$build"
log "built $py in $((SECONDS - t0)) s"
echo "$py"
