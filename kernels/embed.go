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

// The kernel sources are embedded too: that makes them inputs of this package's build, so Go's build
// cache recompiles kernels/cpu (which imports this package and #includes them from C++) whenever one
// changes. Without it an edited .cuh would silently keep the old CPU kernels (measured: a wrong
// constant passed the tests until go test -a).
//
//go:embed *.cu *.cuh *.h
var srcFS embed.FS

// Source returns the kernel source file name (preprocess.cu, resize.cuh, ...).
func Source(name string) (string, bool) {
	b, err := srcFS.ReadFile(name)
	return string(b), err == nil
}

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

// MinDriver returns the oldest NVIDIA driver that can JIT the embedded PTX, as scripts/build_ptx.py
// recorded it in the MANIFEST from the PTX ISA version: "R525 (CUDA 12.0)" for ISA 8.0.
func MinDriver() string {
	if d := manifestField("min_driver"); d != "" && d != "unknown" {
		return d
	}
	return "unknown (PTX ISA " + ISA() + ")"
}
