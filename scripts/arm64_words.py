#!/usr/bin/env python3
"""The NEON instructions Go's arm64 assembler lacks, as WORD directives checked against an assembler.

The *_arm64.s kernels (gomod/engine) write such an instruction as

    WORD $0x0e61c004 // smull v4.4s, v0.4h, v1.4h

with the exact GNU/LLVM mnemonic after the comment marker. This script

    scripts/arm64_words.py enc 'smull v4.4s, v0.4h, v1.4h' ...   prints the WORD line of each
    scripts/arm64_words.py check [FILE.s ...]                      re-assembles every WORD comment
                                                                   (default gomod/engine/*_arm64.s)

and `check` fails (exit 1) on a WORD whose comment does not encode to it, on a WORD without a
mnemonic, and on any fused floating-point multiply-add (fmla/fmls/fmadd/fmsub/fnmadd/fnmsub): the
kernels round each step as the pure-Go code does (scripts/check_fma.sh scans the compiled Go code;
it does not see assembly). Assembler: llvm-mc (-triple=aarch64) when on PATH, else zig cc
(PyPI's ziglang, as scripts/test_arm64.sh installs it) with the object's .text read here.
"""
import glob, os, re, shutil, struct, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUSED = re.compile(r'\b(v?fml[as]|fn?m(add|sub)|vfml[as])\b', re.I)


def _zig():
    z = os.environ.get("ZIG")
    if z:
        return [z]
    tools = os.environ.get("GOPREP_ARM64_TOOLS", os.path.expanduser("~/.cache/goprep/arm64-tools"))
    py = os.path.join(tools, "venv", "bin", "python")
    if os.path.exists(py):
        d = subprocess.check_output([py, "-c", "import ziglang,os;print(os.path.dirname(ziglang.__file__))"], text=True).strip()
        return [os.path.join(d, "zig")]
    sys.exit("arm64_words: neither llvm-mc nor zig (scripts/test_arm64.sh installs zig)")


def _text(obj):
    """The .text bytes of a little-endian ELF64 object."""
    b = open(obj, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    stroff = secs[shstrndx][4]
    for name, _, _, _, off, size in secs:
        n = b[stroff + name:b.index(b"\0", stroff + name)]
        if n == b".text":
            return b[off:off + size]
    raise RuntimeError("no .text")


def encode(mnems):
    """The 32-bit encodings of the mnemonics, in order."""
    src = "".join(m + "\n" for m in mnems)
    if shutil.which("llvm-mc") and os.environ.get("ARM64_WORDS_ASM") != "zig":
        out = subprocess.run(["llvm-mc", "-triple=aarch64", "-mattr=+neon", "-show-encoding"], input=src,
                             capture_output=True, text=True)
        if out.returncode:
            sys.exit("arm64_words: llvm-mc: " + out.stderr)
        words = []
        for line in out.stdout.splitlines():
            m = re.search(r"encoding: \[(0x..),(0x..),(0x..),(0x..)\]", line)
            if m:
                words.append(int.from_bytes(bytes(int(x, 16) for x in m.groups()), "little"))
        return words
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "x.s"), "w").write(src)
        subprocess.run(_zig() + ["cc", "-target", "aarch64-linux-musl", "-c", "x.s", "-o", "x.o"], cwd=d, check=True)
        t = _text(os.path.join(d, "x.o"))
        return [int.from_bytes(t[i:i + 4], "little") for i in range(0, len(t), 4)]


def check(files):
    bad, items = 0, []
    for f in files:
        for i, line in enumerate(open(f), 1):
            code = line.split("//")[0]
            if FUSED.search(line) and not line.lstrip().startswith("//"):
                print(f"{f}:{i}: fused multiply-add: {line.strip()}"); bad += 1
            m = re.match(r"\s*WORD\s+\$(0x[0-9a-fA-F]+)\s*//\s*(.+?)\s*$", line)
            if "WORD" in code and not m:
                print(f"{f}:{i}: WORD without its mnemonic: {line.strip()}"); bad += 1
            elif m:
                items.append((f, i, int(m.group(1), 16), m.group(2)))
    words = encode([m for *_, m in items]) if items else []
    if len(words) != len(items):
        print(f"arm64_words: {len(items)} mnemonics gave {len(words)} words"); return 1
    for (f, i, w, m), e in zip(items, words):
        if w != e:
            print(f"{f}:{i}: WORD $0x{w:08x} but '{m}' is 0x{e:08x}"); bad += 1
    print(f"arm64_words: {len(items)} WORDs in {len(files)} files checked, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "enc":
        for m, w in zip(sys.argv[2:], encode(sys.argv[2:])):
            print(f"WORD $0x{w:08x} // {m}")
    elif len(sys.argv) >= 2 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2:] or sorted(glob.glob(os.path.join(ROOT, "gomod/engine/*_arm64.s")))))
    else:
        sys.exit(__doc__)
