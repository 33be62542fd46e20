//go:build goexperiment.simd && amd64

package engine

import (
	"os"
	"regexp"
	"testing"
)

// cpuVendor gives the vendor string Linux reports (vendor_id in /proc/cpuinfo), and detectCPU's Intel follows it.
func TestCPUVendor(t *testing.T) {
	b, d, c := cpuVendor()
	var v []byte
	for _, w := range []uint32{b, d, c} {
		v = append(v, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo to compare with:", err)
	}
	m := regexp.MustCompile(`(?m)^vendor_id\s*:\s*(\S+)$`).FindSubmatch(info)
	if m == nil {
		t.Skip("no vendor_id in /proc/cpuinfo")
	}
	if string(v) != string(m[1]) {
		t.Fatalf("cpuVendor %q, /proc/cpuinfo %q", v, m[1])
	}
	if cpu.Intel != (string(v) == "GenuineIntel") {
		t.Fatalf("cpu.Intel %v for %q", cpu.Intel, v)
	}
}
