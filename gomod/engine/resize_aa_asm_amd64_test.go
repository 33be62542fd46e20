//go:build goexperiment.simd && amd64

package engine

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"unsafe"
)

// The offsets resize_aa_asm_amd64.h gives the assembly loops are the Go structs' own.
func TestAAAsmLayout(t *testing.T) {
	src, err := os.ReadFile("resize_aa_asm_amd64.h")
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define ([A-Z0-9_]+) (\d+)$`).FindAllStringSubmatch(string(src), -1) {
		defs[m[1]], _ = strconv.Atoi(m[2])
	}
	var c aaAsmCol
	var z aaZConst
	var y aaYConst
	var w aaWide
	var vk aaVConst
	want := map[string]uintptr{
		"COL_OFF": unsafe.Offsetof(c.off), "COL_STEPS": unsafe.Offsetof(c.steps), "COL_TAIL": unsafe.Offsetof(c.tail),
		"COL_W": unsafe.Offsetof(c.w), "COL_SH": unsafe.Offsetof(c.sh), "COL_BASE": unsafe.Offsetof(c.base),
		"COL_THRM1": unsafe.Offsetof(c.thrm1), "COL_SIZE": unsafe.Sizeof(c),
		"ZK_IDX0": unsafe.Offsetof(z.idx), "ZK_IDX1": unsafe.Offsetof(z.idx) + 64, "ZK_REGROUP": unsafe.Offsetof(z.regroup),
		"ZK_TAIL": unsafe.Offsetof(z.tail), "ZK_HALF": unsafe.Offsetof(z.half), "ZK_FRAC": unsafe.Offsetof(z.frac),
		"YK_SHA": unsafe.Offsetof(y.shA), "YK_SHB": unsafe.Offsetof(y.shB), "YK_TA": unsafe.Offsetof(y.tA),
		"YK_TB": unsafe.Offsetof(y.tB), "YK_REGROUP": unsafe.Offsetof(y.regroup), "YK_HALF": unsafe.Offsetof(y.half),
		"YK_FRAC": unsafe.Offsetof(y.frac), "WIDE_HIB": unsafe.Offsetof(w.hiB), "WIDE_LOA": unsafe.Offsetof(w.loA),
		"WIDE_LOB": unsafe.Offsetof(w.loB), "YFIX_CAP": aaYFixCap,
		"VPAIR_SIZE": 4 * aaVPairLen, "VPAIR_LO": 4 * aaVPairLen / 2,
		"VK_SH": unsafe.Offsetof(vk.sh), "VK_BASE": unsafe.Offsetof(vk.base), "VK_FRAC": unsafe.Offsetof(vk.frac),
		"VK_THRM1": unsafe.Offsetof(vk.thrm1), "VK_TOP": unsafe.Offsetof(vk.top), "VK_FIX": unsafe.Offsetof(vk.fix),
		"VK_SCALE": unsafe.Offsetof(vk.scale), "VK_MEAN": unsafe.Offsetof(vk.mean), "VK_STD": unsafe.Offsetof(vk.std),
	}
	if len(defs) != len(want) {
		t.Errorf("the header defines %d offsets, the test knows %d", len(defs), len(want))
	}
	for name, off := range want {
		if got, ok := defs[name]; !ok || uintptr(got) != off {
			t.Errorf("%s: header %d (defined: %v), Go %d", name, got, ok, off)
		}
	}
}
