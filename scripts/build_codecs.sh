#!/usr/bin/env bash
# Build the JPEG/PNG decoders' C libraries for the manylinux wheels: static, position-independent
# libjpeg-turbo, libpng and zlib, compiled by zig for one glibc target, installed into a cached
# prefix whose pkg-config files the wheel build links against (scripts/build_wheels.sh).
#
#   scripts/build_codecs.sh ZIG TARGET     e.g. scripts/build_codecs.sh /path/to/zig x86_64-linux-gnu.2.17
#
# Prints the install prefix (PREFIX/lib/{libjpeg,libpng16,libz}.a, PREFIX/lib/pkgconfig/*.pc,
# PREFIX/include) on stdout; everything else goes to stderr. Every symbol of the archives has hidden
# visibility (-fvisibility=hidden; libjpeg-turbo's SIMD assembly marks its own hidden): they link
# into the extension, which does not export them, so its jpeg_*/png_*/zlib functions never
# interpose on (or get interposed by) another libjpeg/libpng/zlib in the process. (zig cc refuses
# the linker's --exclude-libs, which would do the same at link time.)
#
# Why not the system's: Debian's libjpeg.a/libpng16.a are not PIC (they cannot go into a shared
# object), and libpng16.so.16 needs pow@GLIBC_2.29, newer than manylinux_2_17 allows. Built here by
# zig for the wheel's own target, the archives are PIC and use nothing newer than that glibc; linked
# statically, the extension NEEDS only the C library family (scripts/check_needed.py --static-codecs).
#
# Sources: the upstream tarballs as Debian's archive serves them (its pool keeps the versions of the
# current releases; the libpng and zlib hashes also match Debian's .dsc files), each checked
# against the SHA-256 pinned below. zlib's is Debian's repack of 1.3.1 (contrib/ and the Windows
# files removed; the library sources are upstream's). Nothing from them is committed.
#
# Cache: $GOPREP_CODECS_CACHE (default ~/.cache/goprep/codecs): src/ holds the tarballs, and one
# prefix per (library versions, zig version, target, SIMD, this script's hash), complete once it
# holds .goprep-complete; a later run reuses it and builds nothing. Measured on a 2-core machine:
# first build ~1.5 min (libjpeg-turbo ~60 s of it), cached 0 s.
#
# libjpeg-turbo's x86-64 SIMD (SSE2/AVX2, chosen at run time) needs nasm (or yasm): when neither is
# on PATH, it is installed with apt-get if this runs as root on a Debian-like system; otherwise
# libjpeg-turbo is built with WITH_SIMD=0 and a loud note (same output, JPEG decode ~2-3x slower).
# GOPREP_CODECS_SIMD=0 forces that.
set -euo pipefail

ZIG=${1:?usage: $0 ZIG TARGET (e.g. x86_64-linux-gnu.2.17)}
TARGET=${2:?usage: $0 ZIG TARGET (e.g. x86_64-linux-gnu.2.17)}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

POOL=http://deb.debian.org/debian/pool/main
JPEG_VERSION=3.1.3
JPEG_URL=$POOL/libj/libjpeg-turbo/libjpeg-turbo_$JPEG_VERSION.orig.tar.gz
JPEG_SHA256=3a13a5ba767dc8264bc40b185e41368a80d5d5f945944d1dbaa4b2fb0099f4e5
PNG_VERSION=1.6.48
PNG_URL=$POOL/libp/libpng1.6/libpng1.6_$PNG_VERSION.orig.tar.gz
PNG_SHA256=b17e99026055727e8cba99160c3a9a7f9af788e9f786daeadded5a42243f1dd0
ZLIB_VERSION=1.3.1
ZLIB_URL=$POOL/z/zlib/zlib_1.3.dfsg+really$ZLIB_VERSION.orig.tar.gz
ZLIB_SHA256=60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb

log() { echo "build_codecs: $*" >&2; }
die() { log "$*"; exit 1; }

ARCH=${TARGET%%-*}
case "$ARCH" in
  x86_64|aarch64) ;;
  *) die "unsupported target $TARGET (x86_64-* or aarch64-*)" ;;
esac
command -v cmake >/dev/null || die "cmake is needed (apt-get install cmake, or pip install cmake)"
"$ZIG" version >/dev/null || die "no zig at $ZIG"

# --- SIMD: nasm for x86-64 (aarch64's NEON needs no assembler beyond the C compiler) -------------
SIMD=1
[[ "${GOPREP_CODECS_SIMD:-1}" == 0 ]] && SIMD=0
if [[ $SIMD == 1 && $ARCH == x86_64 ]] && ! command -v nasm >/dev/null && ! command -v yasm >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "libjpeg-turbo's SIMD needs nasm: apt-get install -y nasm"
    apt-get install -y -qq nasm >&2 || { apt-get update -qq >&2 && apt-get install -y -qq nasm >&2; } || true
  fi
  if ! command -v nasm >/dev/null; then
    SIMD=0
    log "############################################################################################"
    log "# NOTE: no nasm/yasm: libjpeg-turbo is built WITHOUT SIMD (WITH_SIMD=0). Same output, but    #"
    log "# JPEG decode is ~2-3x slower. Install nasm (apt-get install nasm) and rerun for a release. #"
    log "############################################################################################"
  fi
fi

CACHE=${GOPREP_CODECS_CACHE:-$HOME/.cache/goprep/codecs}
recipe=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
zigv=$("$ZIG" version)
PREFIX="$CACHE/jpeg$JPEG_VERSION-png$PNG_VERSION-z$ZLIB_VERSION-zig$zigv-$TARGET-simd$SIMD-$recipe"
if [[ -f "$PREFIX/.goprep-complete" ]]; then
  log "cached: $PREFIX"
  echo "$PREFIX"; exit 0
fi

t0=$SECONDS
mkdir -p "$CACHE/src"
fetch() { # URL SHA256 -> path of the checked tarball in the cache
  local url=$1 sum=$2 f="$CACHE/src/${1##*/}"
  if [[ ! -f "$f" ]] || ! echo "$sum  $f" | sha256sum -c --quiet - >/dev/null 2>&1; then
    log "downloading $url"
    curl -fsSL --retry 3 -o "$f.part" "$url" || die "download failed: $url"
    echo "$sum  $f.part" | sha256sum -c --quiet - >/dev/null 2>&1 \
      || die "SHA-256 mismatch for $url: got $(sha256sum "$f.part" | cut -d' ' -f1), pinned $sum"
    mv "$f.part" "$f"
  fi
  echo "$f"
}
jpeg_tgz=$(fetch "$JPEG_URL" "$JPEG_SHA256")
png_tgz=$(fetch "$PNG_URL" "$PNG_SHA256")
zlib_tgz=$(fetch "$ZLIB_URL" "$ZLIB_SHA256")

WORK=$(mktemp -d -t goprep-codecs-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
rm -rf "$PREFIX"
mkdir -p "$PREFIX"
# One program per tool for cmake and configure: zig cc / ar / ranlib for the target.
for tool in cc ar ranlib; do
  sub=$tool; [[ $tool == cc ]] && sub="cc -target $TARGET"
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$ZIG" "$sub" > "$WORK/z$tool"
  chmod +x "$WORK/z$tool"
done
export ZIG_GLOBAL_CACHE_DIR=${ZIG_GLOBAL_CACHE_DIR:-$CACHE/zig-cache} ZIG_LOCAL_CACHE_DIR=${ZIG_LOCAL_CACHE_DIR:-$CACHE/zig-cache}
JOBS=$(nproc 2>/dev/null || echo 2)
CMAKE_COMMON=(
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib
  -DCMAKE_C_COMPILER="$WORK/zcc" -DCMAKE_AR="$WORK/zar" -DCMAKE_RANLIB="$WORK/zranlib"
  -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$ARCH" -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DCMAKE_C_FLAGS=-fvisibility=hidden
  -DCMAKE_FIND_ROOT_PATH="$PREFIX" -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY
  -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY
  -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER
)
quiet() { # run a build step, its output into a log shown only on failure
  local name=$1; shift
  if ! "$@" > "$WORK/$name.log" 2>&1; then tail -40 "$WORK/$name.log" >&2; die "$name failed (the last lines of its log are above)"; fi
}

log "building zlib $ZLIB_VERSION, libpng $PNG_VERSION, libjpeg-turbo $JPEG_VERSION (SIMD: $([[ $SIMD == 1 ]] && echo on || echo off)) for $TARGET with zig $zigv, static + PIC, into $PREFIX"
tar -xzf "$zlib_tgz" -C "$WORK" && tar -xzf "$png_tgz" -C "$WORK" && tar -xzf "$jpeg_tgz" -C "$WORK"

# zlib: its own configure, static only (its cmake would also build and install a shared libz).
(cd "$WORK/zlib-$ZLIB_VERSION" && quiet zlib-configure env CC="$WORK/zcc" AR="$WORK/zar" RANLIB="$WORK/zranlib" \
   CFLAGS="-O2 -fPIC -fvisibility=hidden" CHOST="$ARCH-linux-gnu" ./configure --static --prefix="$PREFIX" --libdir="$PREFIX/lib" \
 && quiet zlib-make make -j"$JOBS" libz.a && quiet zlib-install make install)

# libpng: static only, no tests or tools; zlib from the prefix above (CMAKE_FIND_ROOT_PATH).
quiet png-cmake cmake -S "$WORK/libpng-$PNG_VERSION" -B "$WORK/png-build" "${CMAKE_COMMON[@]}" \
  -DPNG_SHARED=OFF -DPNG_STATIC=ON -DPNG_TESTS=OFF -DPNG_TOOLS=OFF -DPNG_EXECUTABLES=OFF -DPNG_FRAMEWORK=OFF \
  -DZLIB_ROOT="$PREFIX" -DZLIB_INCLUDE_DIR="$PREFIX/include" -DZLIB_LIBRARY="$PREFIX/lib/libz.a"
quiet png-build cmake --build "$WORK/png-build" -j"$JOBS"
quiet png-install cmake --install "$WORK/png-build"

# libjpeg-turbo: static only, the libjpeg (jpeg62) API only (no TurboJPEG, tools or tests); SIMD
# required when enabled, so a missing assembler fails here instead of building a slow library.
quiet jpeg-cmake cmake -S "$WORK/libjpeg-turbo-$JPEG_VERSION" -B "$WORK/jpeg-build" "${CMAKE_COMMON[@]}" \
  -DENABLE_SHARED=OFF -DENABLE_STATIC=ON -DWITH_TURBOJPEG=OFF -DWITH_TOOLS=OFF -DWITH_TESTS=OFF \
  -DWITH_SIMD=$SIMD -DREQUIRE_SIMD=$SIMD
quiet jpeg-build cmake --build "$WORK/jpeg-build" -j"$JOBS"
quiet jpeg-install cmake --install "$WORK/jpeg-build"

# Check what was installed: the three archives and their pkg-config files, no shared library, and
# that they link into a shared object for the target with no text relocations (i.e. PIC), NEEDING
# only the C library family and exporting none of their symbols (hidden visibility).
for f in lib/libjpeg.a lib/libpng16.a lib/libz.a lib/pkgconfig/libjpeg.pc lib/pkgconfig/libpng.pc lib/pkgconfig/zlib.pc; do
  [[ -e "$PREFIX/$f" ]] || die "not installed: $PREFIX/$f"
done
if ls "$PREFIX"/lib/*.so* >/dev/null 2>&1; then die "a shared library was installed: $(ls "$PREFIX"/lib/*.so*)"; fi
quiet check-link "$WORK/zcc" -shared -o "$WORK/check.so" -Wl,--whole-archive "$PREFIX/lib/libjpeg.a" \
  "$PREFIX/lib/libpng16.a" "$PREFIX/lib/libz.a" -Wl,--no-whole-archive -lm
if readelf -d "$WORK/check.so" | grep -q TEXTREL; then die "the archives are not position-independent (TEXTREL)"; fi
needed=$(readelf -d "$WORK/check.so" | grep -o 'Shared library: \[[^]]*\]' | tr '\n' ' ')
python3 -c 'import re, sys; bad = [n for n in sys.argv[1:] if not re.match(r"^\[(libc|libm|libdl|libpthread|ld-linux[-\w]*)\.so", n)]; sys.exit(bool(bad))' \
  ${needed//Shared library: /} || die "the archives need more than the C library: $needed"
exported=$(readelf -W --dyn-syms "$WORK/check.so" | awk '$5 != "LOCAL" && $6 == "DEFAULT" && $7 != "UND" && $8 != "" {print $8}' | grep -v '^_\(init\|fini\)$' | head -5 || true)
[[ -z "$exported" ]] || die "the archives export symbols (not hidden): $exported ..."
sed -n 's/^#define LIBJPEG_TURBO_VERSION .*/&/p' "$PREFIX/include/jconfig.h" | grep -q "$JPEG_VERSION" \
  || die "jconfig.h does not say libjpeg-turbo $JPEG_VERSION"

touch "$PREFIX/.goprep-complete"
log "built in $((SECONDS - t0)) s: $(du -sh "$PREFIX" | cut -f1) in $PREFIX"
echo "$PREFIX"
