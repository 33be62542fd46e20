#!/usr/bin/env bash
# Check that gomod/cuda (built with -tags cuda) links gorgonia.org/cu and go-nvml
# without a load-time dependency on the NVIDIA driver libraries.
#
#   scripts/check_shim.sh [--sim-system-cuda]
#
# Builds a throwaway c-shared library (a probe main package in a temp module tied
# to this checkout by a replace directive; nothing is written into the repo) and asserts:
#   1. readelf -d lists neither libcuda nor libnvidia-ml as NEEDED, and no cu*/nvml*
#      symbol is left undefined (go-nvml links with
#      --unresolved-symbols=ignore-in-object-files, so the link alone won't tell);
#   2. python's ctypes.CDLL(path, mode=RTLD_NOW) loads it, also with LD_BIND_NOW=1,
#      and the process exits 0 (gorgonia.org/cu's init did not os.Exit);
#   3. without a driver, DriverStatus() is not ok with a reason naming libcuda and
#      NVMLStatus() is not ok with a reason (on a machine with the driver: ok, or
#      not ok with a reason);
#   4. linking against a directory that does hold a (fake) libcuda.so, searched
#      before gomod/cuda/lib, still records no NEEDED libcuda, with --as-needed
#      coming only from gomod/cuda (the linker is wrapped to start with
#      --no-as-needed, as on toolchains without Debian's default), and
#      `ld --trace` shows the fake libcuda.so was indeed the one opened;
#   5. at run time, with a fake libcuda.so.1 / libnvidia-ml.so.1 on LD_LIBRARY_PATH,
#      calls are forwarded (cu.Version() returns the fake's value, DriverStatus
#      reports the fake cuInit's error, NVMLStatus ok).
# --sim-system-cuda additionally (root only, if /usr/local/cuda does not exist)
# creates /usr/local/cuda/lib64/libcuda.so (a directory gorgonia.org/cu puts on
# the -L path itself) for one build, then removes it; no NEEDED must result.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
SIM_SYSTEM=0
[[ "${1:-}" == "--sim-system-cuda" ]] && SIM_SYSTEM=1

INC=$(scripts/gen_shim.sh --print-cflags)
WORK=$(mktemp -d)
SYS_CREATED=""
cleanup() {
  rm -rf "$WORK"
  if [[ -n "$SYS_CREATED" ]]; then rm -rf "$SYS_CREATED"; fi
}
trap cleanup EXIT

fail=0
pass() { echo "PASS: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# --- the probe: a main package exporting C functions, in a temp workspace -----
mkdir -p "$WORK/probe"
GOPREP_MOD=$(go list -m)
GOVER=$(go list -m -f '{{.GoVersion}}' "$GOPREP_MOD")
CU_VERSION=$(go list -m -f '{{.Version}}' gorgonia.org/cu)
printf 'module goprepshimprobe\n\ngo %s\n\nrequire (\n\t%s v0.0.0\n\tgorgonia.org/cu %s\n)\n\nreplace %s v0.0.0 => %s\n' \
  "$GOVER" "$GOPREP_MOD" "$CU_VERSION" "$GOPREP_MOD" "$ROOT" > "$WORK/probe/go.mod"
cp go.sum "$WORK/probe/go.sum"
cat > "$WORK/probe/main.go" <<'EOF'
//go:build cuda

package main

// #include <stdlib.h>
import "C"

import (
	"fmt"

	"github.com/goprep/goprep/gomod/cuda"
	cu "gorgonia.org/cu"
)

//export goprep_probe
func goprep_probe() *C.char {
	dok, dr := cuda.DriverStatus()
	nok, nr := cuda.NVMLStatus()
	_, nerr := cu.NumDevices()
	return C.CString(fmt.Sprintf("driver_ok=%v\x1fdriver_reason=%s\x1fnvml_ok=%v\x1fnvml_reason=%s\x1fcu_version=%d\x1fnum_devices_err=%v",
		dok, dr, nok, nr, cu.Version(), nerr))
}

func main() {}
EOF

build() { # out.so extra-CGO_LDFLAGS [go build flags...]
  local out=$1 extra=$2; shift 2
  if ! (cd "$WORK/probe" && GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=1 \
      CGO_CFLAGS="-O2 -g $INC" CGO_LDFLAGS="-O2 -g $extra" \
      go build -tags cuda -buildmode=c-shared "$@" -o "$out" . > "$out.log" 2>&1); then
    grep -v -e 'deprecated' -e 'note: declared here' -e '^ *[0-9]* |' -e '^ *|' -e 'cgo-gcc-prolog: In' "$out.log" >&2 || true
    echo "FAIL: go build of the probe failed (CGO_LDFLAGS extra: $extra $*)"; exit 1
  fi
}

check_linkage() { # so label
  local so=$1 label=$2 needed undef
  needed=$(readelf -d "$so" | grep NEEDED || true)
  echo "  readelf -d $label | grep NEEDED:"; echo "$needed" | sed 's/^/    /'
  if echo "$needed" | grep -Eq 'libcuda|libnvidia-ml'; then
    bad "$label: NEEDED lists an NVIDIA driver library"
  else
    pass "$label: no NEEDED libcuda/libnvidia-ml"
  fi
  undef=$(nm -D --undefined-only "$so" | awk '{print $NF}' | grep -E '^(cu|nvml)[A-Z]' || true)
  if [[ -n "$undef" ]]; then
    bad "$label: undefined driver symbols: $(echo $undef | head -c 300)"
  else
    pass "$label: no undefined cu*/nvml* symbols ($(nm -D --defined-only "$so" | grep -cE ' T (cu|nvml)[A-Z]') defined by the shims)"
  fi
}

load() { # so [env...] -> prints the probe's fields; returns python's exit code
  local so=$1; shift
  env "$@" "$PYTHON" - "$so" <<'EOF'
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)
f = lib.goprep_probe
f.restype = ctypes.c_char_p
for kv in f().decode().split("\x1f"):
    print(kv)
EOF
}

field() { sed -n "s/^$1=//p" <<<"$2"; }

# --- 1-3: plain build ---------------------------------------------------------
echo "== build (CGO_CFLAGS=-O2 -g $INC, go build -tags cuda -buildmode=c-shared)"
build "$WORK/plain.so" ""
check_linkage "$WORK/plain.so" plain.so

driver_present=0
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then driver_present=1; fi
for bindnow in 0 1; do
  envs=(); label="RTLD_NOW"
  if [[ $bindnow == 1 ]]; then envs=(LD_BIND_NOW=1); label="RTLD_NOW + LD_BIND_NOW=1"; fi
  set +e; out=$(load "$WORK/plain.so" "${envs[@]}" 2>&1); rc=$?; set -e
  echo "  python ctypes.CDLL ($label): exit $rc"; echo "$out" | sed 's/^/    /'
  if [[ $rc != 0 ]]; then bad "load ($label) exited $rc"; continue; fi
  pass "load ($label) exited 0"
  dok=$(field driver_ok "$out"); dr=$(field driver_reason "$out")
  nok=$(field nvml_ok "$out"); nr=$(field nvml_reason "$out")
  if [[ $driver_present == 0 ]]; then
    [[ $dok == false && $dr == *libcuda* ]] && pass "DriverStatus not ok, reason names libcuda" || bad "DriverStatus: ok=$dok reason=$dr"
    [[ $nok == false && -n $nr ]] && pass "NVMLStatus not ok with a reason" || bad "NVMLStatus: ok=$nok reason=$nr"
  else
    [[ ($dok == true && -z $dr) || ($dok == false && -n $dr) ]] && pass "DriverStatus consistent (driver present)" || bad "DriverStatus: ok=$dok reason=$dr"
    [[ ($nok == true && -z $nr) || ($nok == false && -n $nr) ]] && pass "NVMLStatus consistent (driver present)" || bad "NVMLStatus: ok=$nok reason=$nr"
  fi
done

# --- fake driver libraries ----------------------------------------------------
mkdir -p "$WORK/fake"
cat > "$WORK/fake/cuda.c" <<'EOF'
#include <stdlib.h>
typedef int CUresult;
static int result(void) { const char *s = getenv("FAKE_CUINIT_RESULT"); return s ? atoi(s) : 0; }
CUresult cuInit(unsigned int flags) { (void)flags; return result(); }
CUresult cuDriverGetVersion(int *v) { *v = 12345; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 0; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { *s = r == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN"; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake driver: no CUDA-capable device is detected"; return 0; }
EOF
cat > "$WORK/fake/nvml.c" <<'EOF'
typedef int nvmlReturn_t;
nvmlReturn_t nvmlInit_v2(void) { return 0; }
nvmlReturn_t nvmlInitWithFlags(unsigned int f) { (void)f; return 0; }
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t r) { (void)r; return "fake"; }
EOF
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$WORK/fake/libcuda.so.1" "$WORK/fake/cuda.c"
ln -s libcuda.so.1 "$WORK/fake/libcuda.so"
cc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$WORK/fake/libnvidia-ml.so.1" "$WORK/fake/nvml.c"

# --- 4: a libcuda.so searched before gomod/cuda/lib ---------------------------
# The external linker is wrapped to start with --no-as-needed, like toolchains
# without Debian/Ubuntu's --as-needed default, so only gomod/cuda's own
# -Wl,--as-needed stands between -lcuda and a NEEDED entry. (Do not put
# --no-as-needed in CGO_LDFLAGS for this: the go command prepends CGO_LDFLAGS to
# every cgo package's flags, i.e. right before gorgonia's -lcuda too.)
# -L$WORK/fake in CGO_LDFLAGS precedes gomod/cuda's -L, so ld opens the fake .so.
printf '#!/bin/sh\nexec %s -Wl,--no-as-needed "$@"\n' "$(go env CC)" > "$WORK/cc-no-as-needed"
chmod +x "$WORK/cc-no-as-needed"
echo "== build with a fake libcuda.so first on the -L path, linker defaulting to --no-as-needed"
build "$WORK/simlink.so" "-L$WORK/fake -Wl,--trace" -ldflags="-extld=$WORK/cc-no-as-needed"
echo "  ld --trace: $(grep -E -- '-lcuda|libcuda' "$WORK/simlink.so.log" | sort -u | tr '\n' ' ')"
if grep -q "$WORK/fake/libcuda.so" "$WORK/simlink.so.log"; then
  pass "ld opened the fake $WORK/fake/libcuda.so for -lcuda"
else
  bad "ld did not pick the fake libcuda.so (simulation ineffective)"
fi
check_linkage "$WORK/simlink.so" simlink.so

if [[ $SIM_SYSTEM == 1 ]]; then
  if [[ $(id -u) == 0 && ! -e /usr/local/cuda ]]; then
    echo "== build with /usr/local/cuda/lib64/libcuda.so present (temporary)"
    SYS_CREATED=/usr/local/cuda
    mkdir -p /usr/local/cuda/lib64
    cp "$WORK/fake/libcuda.so.1" /usr/local/cuda/lib64/libcuda.so
    build "$WORK/simsys.so" "-Wl,--trace" -ldflags="-extld=$WORK/cc-no-as-needed"
    echo "  ld --trace: $(grep -E -- '-lcuda|libcuda' "$WORK/simsys.so.log" | sort -u | tr '\n' ' ')"
    # gomod/cuda's -L precedes gorgonia's -L/usr/local/cuda/lib64 on the link
    # line, so ld normally takes the empty lib/libcuda.a; either way no NEEDED.
    if grep -q "$ROOT/gomod/cuda/lib/libcuda.a" "$WORK/simsys.so.log"; then
      pass "-lcuda resolved to gomod/cuda/lib/libcuda.a ahead of /usr/local/cuda/lib64/libcuda.so"
    else
      echo "  note: -lcuda resolved to /usr/local/cuda/lib64/libcuda.so; --as-needed must drop it"
    fi
    check_linkage "$WORK/simsys.so" simsys.so
    rm -rf /usr/local/cuda; SYS_CREATED=""
  else
    echo "SKIP: --sim-system-cuda needs root and no existing /usr/local/cuda"
  fi
fi

# --- 5: forwarding to a (fake) driver at run time -----------------------------
if [[ $driver_present == 0 ]]; then
  echo "== run time with fake libcuda.so.1 (cuInit -> 100) and libnvidia-ml.so.1 on LD_LIBRARY_PATH"
  set +e; out=$(load "$WORK/plain.so" LD_BIND_NOW=1 LD_LIBRARY_PATH="$WORK/fake" FAKE_CUINIT_RESULT=100 2>&1); rc=$?; set -e
  echo "$out" | sed 's/^/    /'
  [[ $rc == 0 ]] && pass "exit 0 although the real cuInit failed" || bad "exited $rc"
  [[ $(field driver_ok "$out") == false && $(field driver_reason "$out") == *CUDA_ERROR_NO_DEVICE* ]] \
    && pass "DriverStatus reports the driver's cuInit error" || bad "DriverStatus with failing fake cuInit"
  [[ $(field cu_version "$out") == 12345 ]] && pass "cu.Version() forwarded to the fake driver" || bad "cu.Version() not forwarded"
  [[ $(field nvml_ok "$out") == true ]] && pass "NVMLStatus ok with fake libnvidia-ml" || bad "NVMLStatus with fake libnvidia-ml"
  set +e; out=$(load "$WORK/plain.so" LD_LIBRARY_PATH="$WORK/fake" FAKE_CUINIT_RESULT=0 2>&1); rc=$?; set -e
  [[ $rc == 0 && $(field driver_ok "$out") == true && -z $(field driver_reason "$out") ]] \
    && pass "DriverStatus ok when cuInit succeeds" || bad "DriverStatus with succeeding fake cuInit: $out"
fi

if [[ $fail == 0 ]]; then echo "check_shim: all checks passed"; else echo "check_shim: FAILED"; fi
exit $fail
