#!/usr/bin/env bash
# No fused multiply-add in goprep's Go code: the compiler's own assembly listing, per target.
#
#   scripts/check_fma.sh            (exit 1 and the source lines when a fused instruction is found)
#
# The Go spec lets a compiler fuse x*y + z (or z - x*y) into one FMA instruction, rounding once,
# unless the product is explicitly rounded (float32(x*y) + z), even across statements (t := x*y;
# r := t + z may fuse). Go does it on arm64, ppc64le, s390x, riscv64, and on amd64 built with
# GOAMD64=v3 or higher; the default amd64 build never does, so x86-64 tests cannot notice. The
# engine's results must be bit-identical on every CPU, to the GPU kernels (compiled with
# --fmad=false and __f*_rn) and to the references, so no fused instruction may appear in the
# goprep packages. This compiles them (tests included, CGO_ENABLED=0: no C compiler or emulator
# needed) with -gcflags=-S for arm64 and for amd64 v3 (with GOEXPERIMENT=simd, the SIMD kernels),
# and greps the listing for FMADD/FMSUB/FNMADD/FNMSUB (arm64) and VFMADD/VFMSUB/VFNM* (amd64).
#
# Allowed (ALLOW below), because no result depends on them: EstimatePlan and tapsPerOutput (a byte
# estimate) and the GPU placement cost model (gpu/cost.go), which only choose, never compute pixels;
# and fma_test.go's fused models (fma32, lerpFused), which fuse on purpose (math.FMA).
# ~20 s with a warm build cache.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(./gomod/engine ./gomod/engine/gpu ./gomod/binding ./kernels)
ALLOW='engine\.(EstimatePlan|tapsPerOutput|fma32|lerpFused|TestNoFMA[A-Za-z0-9]+)|gpu\.\(\*gpuDev\)\.(gpuFaster|gpuFasterToDevice|kernelNs|h2dBandwidth)|gpu\.cpuNsPerByte'
fail=0
check() { # name, env... : compile PKGS' tests with -S under env, report fused instructions
  local name=$1; shift
  local listing
  listing=$(mktemp)
  for p in "${PKGS[@]}"; do
    env "$@" CGO_ENABLED=0 go test -c -o /dev/null -gcflags='github.com/goprep/goprep/...=-S' "$p" >>"$listing" 2>&1 \
      || { grep -v "^\s\|STEXT\|SRODATA\|SDWARF\|SNOPTR\|SBSS\|SDATA" "$listing" | tail -40 >&2; echo "check_fma: $name: $p did not compile" >&2; rm -f "$listing"; exit 1; }
  done
  # A function's listing starts with a line "<pkg>.<func> STEXT ..."; instructions carry (file:line).
  local hits
  hits=$(awk -v allow="$ALLOW" '
    / STEXT /{fn=$1; next}
    /\t(FMADD|FMSUB|FNMADD|FNMSUB)[SD]\t|\tVF(N)?M(ADD|SUB)[0-9]+[PS][SD]\t|\tVFML[AS]\t/ {
      if (fn ~ allow) next
      match($0, /\([^)]*\.go:[0-9]+\)/); print substr($0, RSTART+1, RLENGTH-2) "  " fn
    }' "$listing" | sed "s|$PWD/||" | sort -u)
  rm -f "$listing"
  if [[ -n "$hits" ]]; then
    echo "check_fma: $name: fused multiply-add (round the product explicitly: float32(x*y) + z):" >&2
    echo "$hits" >&2
    fail=1
  else
    echo "check_fma: $name: no fused multiply-add in ${PKGS[*]}"
  fi
}
check arm64 GOARCH=arm64
check amd64-v3 GOARCH=amd64 GOAMD64=v3 GOEXPERIMENT=simd
# The arm64 assembly kernels (gomod/engine/*_arm64.s) are not in the compiler's listing: their Go
# mnemonics (VFMLA, VFMLS, FMADD*...) and the mnemonics in their WORD comments (scripts/arm64_words.py
# checks those encode to the WORDs) must name no fused instruction either.
asm=$(grep -niE '^[^/]*\b(V?FML[AS]|FN?M(ADD|SUB)[SD]?)\b|//.*\b(fml[as]|fn?m(add|sub))\b' gomod/engine/*_arm64.s 2>/dev/null || true)
if [[ -n "$asm" ]]; then
  echo "check_fma: fused multiply-add in the arm64 assembly:" >&2
  echo "$asm" >&2
  fail=1
else
  echo "check_fma: arm64 assembly: no fused multiply-add in gomod/engine/*_arm64.s"
fi
exit $fail
