// Package kernels embeds the PTX compiled from the CUDA C kernels in this directory.
//
// The PTX in ptx/ is generated and committed: `python scripts/build_ptx.py` compiles every
// kernels/*.cu with NVRTC 12.0 (pip wheel nvidia-cuda-nvrtc-cu12==12.0.140) to ptx/<stem>.ptx and
// writes ptx/MANIFEST. `go test ./kernels/` fails when the sources no longer match the MANIFEST, so
// CI, which has no CUDA compiler, catches stale PTX.
package kernels

import (
	"embed"
	"strings"
)

// The whole directory, not ptx/*.ptx: a pattern that matches nothing (no kernels yet) is a build error.
//
//go:embed ptx
var ptxFS embed.FS

// PTX returns the PTX compiled from kernels/<stem>.cu.
func PTX(stem string) (string, bool) {
	if stem == "" || strings.ContainsAny(stem, "/\\") {
		return "", false
	}
	b, err := ptxFS.ReadFile("ptx/" + stem + ".ptx")
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Stems lists the kernel files that have PTX, sorted (preprocess for ptx/preprocess.ptx).
func Stems() []string {
	ents, err := ptxFS.ReadDir("ptx")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".ptx"); ok && !e.IsDir() {
			out = append(out, name)
		}
	}
	return out
}

// Manifest returns ptx/MANIFEST: compiler, flags, target, PTX ISA, minimum driver and hashes.
func Manifest() string {
	b, err := ptxFS.ReadFile("ptx/MANIFEST")
	if err != nil {
		return ""
	}
	return string(b)
}

// manifestField returns the value of a "key: value" line of the MANIFEST ("" if absent).
func manifestField(key string) string {
	for _, line := range strings.Split(Manifest(), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// manifestPTX returns the MANIFEST's "ptx: <file> <sha256>" lines as file -> sha256.
func manifestPTX() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(Manifest(), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "ptx" {
			if name, digest, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				out[name] = strings.TrimSpace(digest)
			}
		}
	}
	return out
}

// SourceHash returns the sha256 of the kernel sources the PTX was built from, as recorded in the
// MANIFEST (see sourceHash in embed_test.go and source_hash in scripts/build_ptx.py).
func SourceHash() string { return manifestField("source_sha256") }

// ISA returns the PTX ISA version of the embedded PTX ("8.0"), as recorded in the MANIFEST.
func ISA() string { return manifestField("ptx_isa") }

// minDriver maps a PTX ISA version to the first driver series (and CUDA release) that can JIT it.
// scripts/build_ptx.py has the same table.
var minDriver = map[string]string{
	"7.0": "R450 (CUDA 11.0)",
	"7.1": "R455 (CUDA 11.1)",
	"7.2": "R460 (CUDA 11.2)",
	"7.3": "R465 (CUDA 11.3)",
	"7.4": "R470 (CUDA 11.4)",
	"7.5": "R495 (CUDA 11.5)",
	"7.6": "R510 (CUDA 11.6)",
	"7.7": "R515 (CUDA 11.7)",
	"7.8": "R520 (CUDA 11.8)",
	"8.0": "R525 (CUDA 12.0)",
	"8.1": "R530 (CUDA 12.1)",
	"8.2": "R535 (CUDA 12.2)",
	"8.3": "R545 (CUDA 12.3)",
	"8.4": "R550 (CUDA 12.4)",
	"8.5": "R555 (CUDA 12.5)",
	"8.7": "R570 (CUDA 12.8)",
	"8.8": "R575 (CUDA 12.9)",
	"9.0": "R580 (CUDA 13.0)",
}

// MinDriver returns the oldest NVIDIA driver that can JIT the embedded PTX, derived from its PTX ISA
// version: "R525 (CUDA 12.0)" for ISA 8.0.
func MinDriver() string {
	isa := ISA()
	if d, ok := minDriver[isa]; ok {
		return d
	}
	return "unknown (PTX ISA " + isa + ")"
}
