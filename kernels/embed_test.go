package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const staleMsg = "kernels/ptx is stale: run python scripts/build_ptx.py"

// sourceFiles lists *.cu, *.cuh, *.h in dir (not recursive), sorted by name, as build_ptx.py does.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".cu", ".cuh", ".h":
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names
}

// sourceHash is scripts/build_ptx.py's source_hash: sha256 over, for each file in name order,
// name, NUL, decimal byte length, NUL, contents.
func sourceHash(t *testing.T, dir string, names []string) string {
	t.Helper()
	h := sha256.New()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(n + "\x00" + strconv.Itoa(len(data)) + "\x00"))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestPTXFresh(t *testing.T) {
	if Manifest() == "" {
		t.Fatalf("ptx/MANIFEST is not embedded; %s", staleMsg)
	}
	names := sourceFiles(t, ".")
	if got, want := sourceHash(t, ".", names), SourceHash(); got != want {
		t.Fatalf("%s\n(kernel sources hash to %s, MANIFEST records %s for %q; sources now: %s)",
			staleMsg, got, want, manifestField("sources"), strings.Join(names, " "))
	}
	// Every .cu has PTX and the MANIFEST lists exactly those files.
	listed := manifestPTX()
	want := map[string]bool{}
	for _, n := range names {
		if stem, ok := strings.CutSuffix(n, ".cu"); ok {
			want[stem+".ptx"] = true
			if _, ok := PTX(stem); !ok {
				t.Errorf("%s has no embedded ptx/%s.ptx; %s", n, stem, staleMsg)
			}
		}
	}
	for name := range listed {
		if !want[name] {
			t.Errorf("MANIFEST lists %s, which no kernels/*.cu produces; %s", name, staleMsg)
		}
	}
	for name := range want {
		if _, ok := listed[name]; !ok {
			t.Errorf("MANIFEST does not list %s; %s", name, staleMsg)
		}
	}
	for _, stem := range Stems() {
		if !want[stem+".ptx"] {
			t.Errorf("ptx/%s.ptx has no kernels/%s.cu; %s", stem, stem, staleMsg)
		}
	}
}

var (
	versionRE = regexp.MustCompile(`(?m)^\s*\.version\s+(\d+)\.(\d+)\s*$`)
	entryRE   = regexp.MustCompile(`(?m)^\s*(\.visible\s+)?\.entry\s+\w+`)
)

func TestPTXContents(t *testing.T) {
	isa := ISA()
	if isa == "" {
		t.Fatalf("MANIFEST has no ptx_isa; %s", staleMsg)
	}
	if !isaAtMost(t, isa, 8, 0) {
		t.Errorf("MANIFEST PTX ISA %s > 8.0: R525 (CUDA 12.0) drivers can't JIT it", isa)
	}
	for name, digest := range manifestPTX() {
		stem := strings.TrimSuffix(name, ".ptx")
		src, ok := PTX(stem)
		if !ok {
			t.Errorf("ptx/%s is listed in MANIFEST but not embedded; %s", name, staleMsg)
			continue
		}
		sum := sha256.Sum256([]byte(src))
		if got := hex.EncodeToString(sum[:]); got != digest {
			t.Errorf("ptx/%s has sha256 %s, MANIFEST records %s; %s", name, got, digest, staleMsg)
		}
		m := versionRE.FindStringSubmatch(src)
		if m == nil {
			t.Errorf("ptx/%s has no .version line", name)
			continue
		}
		v := m[1] + "." + m[2]
		if !isaAtMost(t, v, 8, 0) {
			t.Errorf("ptx/%s is PTX ISA %s > 8.0: R525 (CUDA 12.0) drivers can't JIT it", name, v)
		}
		if v != isa {
			t.Errorf("ptx/%s is PTX ISA %s, MANIFEST says %s", name, v, isa)
		}
		if !entryRE.MatchString(src) {
			t.Errorf("ptx/%s has no .entry (no extern \"C\" __global__ kernel)", name)
		}
	}
}

func isaAtMost(t *testing.T, v string, major, minor int) bool {
	t.Helper()
	a, b, ok := strings.Cut(v, ".")
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		t.Errorf("bad PTX ISA version %q", v)
		return false
	}
	return ma < major || (ma == major && mi <= minor)
}

func TestMinDriver(t *testing.T) {
	if ISA() == "8.0" && MinDriver() != "R525 (CUDA 12.0)" {
		t.Fatalf("MinDriver() = %q for ISA 8.0", MinDriver())
	}
	if _, ok := PTX("../MANIFEST"); ok {
		t.Fatal("PTX accepted a path")
	}
}
