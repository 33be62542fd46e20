#!/usr/bin/env bash
# Guest instructions each hot engine kernel executes under qemu-aarch64, NEON against pure Go.
#
#   scripts/count_arm64_insns.sh [workload ...]     (default: bilinear antialias normf32)
#
# An indication of the NEON kernels' speed where no arm64 hardware is at hand: instruction counts
# under emulation, NOT time (a NEON FDIV or TBL costs more than an integer add on a real core; cache
# and memory behaviour are not modelled at all). How:
#  1. the engine's test binary for GOARCH=arm64 (static, CGO_ENABLED=0);
#  2. per workload (TestInsnWorkload, insn_workload_test.go: one plan, one image, one thread) and mode
#     (NEON; pure Go with GOPREP_INSN_NOSIMD=1, i.e. kernelOverrides.NoSIMD), one qemu run with
#     -d in_asm,exec,nochain and -dfilter over the engine package's text (addresses from go tool nm):
#     nochain makes qemu log every executed translation block (TB), in_asm logs each TB's
#     instructions when it is translated; each executed TB adds its instruction count to the
#     function that holds its first address;
#  3. the functions are summed per pass (the kernel, its Go driver and the pure-Go tails it calls),
#     and the engine's total for the plan run, and printed with the ratio pure Go / NEON.
# Code outside the engine package (runtime: memmove, allocation, GC) is not counted in either mode.
# ~1-2 minutes on two cores (the antialias pure-Go log is ~1 GB, read as it is written).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "count_arm64_insns: $*" >&2; }
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
[[ -n "$QEMU" ]] || { log "no qemu-aarch64: apt-get install qemu-user-static (scripts/test_arm64.sh does it as root)"; exit 1; }
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(bilinear antialias normf32)

tmp=$(mktemp -d -t goprep-insns-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$tmp/e.test" ./gomod/engine
go tool nm -size -sort address "$tmp/e.test" > "$tmp/nm"
pkg=github.com/goprep/goprep/gomod/engine
# qemu's -dfilter: the engine package's text, or (argument: function names) just those functions
ranges() {
  python3 -c '
import sys
want = set(sys.argv[3:])
rs = []
for line in open(sys.argv[1]):
    f = line.split(None, 3)
    if len(f) == 4 and f[2] in "Tt" and f[3].startswith(sys.argv[2]):
        if not want or f[3].strip()[len(sys.argv[2]):] in want:
            rs.append((int(f[0], 16), int(f[0], 16) + int(f[1])))
if want:
    print(",".join("0x%x+0x%x" % (a, b - a) for a, b in sorted(rs)))
else:
    lo, hi = min(a for a, _ in rs), max(b for _, b in rs)
    print("0x%x+0x%x" % (lo, hi - lo))' "$tmp/nm" "$pkg." "$@"
}
range=$(ranges)
log "qemu: $("$QEMU" --version | head -1); engine text $range"

for w in "${workloads[@]}"; do
  filter=$range
  if [[ $w == normf32 ]]; then # the normalisation only: the float resize before it is no NEON kernel's
    filter=$(ranges '(*kernelSet).normCHW3' normCHW3NEON.abi0 normCHW3Scalar normConsts '(*normTables).apply' '(*worker).emitF32')
  fi
  for mode in neon purego; do
    nosimd=""; [[ $mode == purego ]] && nosimd=1
    t0=$SECONDS
    mkfifo "$tmp/log"
    # qemu's in_asm + exec log (nochain), read as it is written: per TB start address its size
    # (in_asm, at translation) times its executions (exec); addresses as 16 hex digits
    awk '
      /^Trace/ { i = index($0, "["); pc = substr($0, i + 18, 16); c[pc] += sz[pc]; next }
      /^IN:/ { cur = ""; n = 0; next }
      /^0x[0-9a-f]+:  / { h = substr($1, 3, length($1) - 3); k = substr("0000000000000000", 1, 16 - length(h)) h
                          if (cur == "") cur = k; sz[cur] = ++n }
      END { for (p in c) print p, c[p] }' "$tmp/log" > "$tmp/$w.$mode.pcs" &
    reader=$!
    (cd gomod/engine && GOPREP_INSN_WORKLOAD=$w GOPREP_INSN_NOSIMD=$nosimd GODEBUG=asyncpreemptoff=1 \
      "$QEMU" -d in_asm,exec,nochain -dfilter "$filter" -D "$tmp/log" "$tmp/e.test" -test.run '^TestInsnWorkload$' -test.count=1 >"$tmp/out" 2>&1) \
      || { cat "$tmp/out" >&2; log "$w $mode: the workload failed"; exit 1; }
    wait $reader
    rm -f "$tmp/log"
    log "$w $mode: $((SECONDS - t0)) s"
  done
done

python3 - "$tmp" "$pkg" "${workloads[@]}" <<'PY'
import bisect, sys
tmp, pkg, workloads = sys.argv[1], sys.argv[2] + ".", sys.argv[3:]
syms = []
for line in open(f"{tmp}/nm"):
    f = line.split(None, 3)
    if len(f) == 4 and f[2] in "Tt":
        syms.append((int(f[0], 16), int(f[1]), f[3].strip()))
syms.sort()
starts = [s[0] for s in syms]
# pass: the functions whose instructions it executes (the kernel, its driver, the pure-Go kernel
# and tails); each workload prints the passes it runs
passes = {
    "bilinear_h (hresizeRow)": ["(*kernelSet).hresizeRow", "hresizeNEON.abi0", "hresizeScalar"],
    "bilinear_v (vnormRow)": ["(*kernelSet).vnormRow", "vnormNEON.abi0", "vnormScalar"],
    "aa_h (aaHRows/aaHRows4)": ["(*kernelSet).aaHRows", "(*kernelSet).aaHRows4", "(*kernelSet).aaHRow",
                                "(*kernelSet).aaHRow.func1", "aaHNEON.abi0", "aaHScalar"],
    "aa_v (aaVRow)": ["(*kernelSet).aaVRow", "aaVNEON.abi0", "aaVScalar"],
    "normalize f32 (normCHW3)": ["(*kernelSet).normCHW3", "normCHW3NEON.abi0", "normCHW3Scalar", "normConsts",
                                 "(*normTables).apply"],
}
def load(w, mode):
    """instructions per engine function (the package prefix dropped)"""
    d = {}
    for line in open(f"{tmp}/{w}.{mode}.pcs"):
        pc, c = line.split()
        pc = int(pc, 16)
        i = bisect.bisect_right(starts, pc) - 1
        name = syms[i][2] if i >= 0 and pc < syms[i][0] + max(syms[i][1], 1) else "?"
        name = name[len(pkg):] if name.startswith(pkg) else name
        d[name] = d.get(name, 0) + int(c)
    return d
print(f"{'workload':10} {'pass':28} {'NEON':>14} {'pure Go':>14} {'pure Go / NEON':>15}")
for w in workloads:
    neon, pure = load(w, "neon"), load(w, "purego")
    rows = [(p, sum(neon.get(f, 0) for f in fs), sum(pure.get(f, 0) for f in fs)) for p, fs in passes.items()]
    rows = [r for r in rows if r[2] > 0]
    if w != "normf32":
      rows.append(("engine total (plan run)", sum(v for k, v in neon.items() if not k.startswith("Test")),
                   sum(v for k, v in pure.items() if not k.startswith("Test"))))
    else:
      rows.append(("emitF32 + normCHW3", sum(neon.values()), sum(pure.values())))
    for p, a, b in rows:
        print(f"{w:10} {p:28} {a:14,} {b:14,} {b / a if a else float('nan'):14.2f}x")
PY
