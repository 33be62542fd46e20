package binding

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// fakeArray mimics the head of a PyArrayObject: two header words, then the data pointer.
type fakeArray struct {
	refcnt, typ uintptr
	data        unsafe.Pointer
}

func addr(p unsafe.Pointer) int64 { return int64(uintptr(p)) }

func TestRunThroughObjectAddresses(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	src := []uint8{1, 2, 3, 4, 5, 6} // 1x2 RGB
	out := make([]uint8, 6)
	so := &fakeArray{data: unsafe.Pointer(&src[0])}
	oo := &fakeArray{data: unsafe.Pointer(&out[0])}
	spec := engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: 1, W: 2, C: 3, Strides: [4]int64{0, 6, 3, 1}},
		Pre:    engine.View{SY: 1, SX: 1, H: 1, W: 2},
		Resize: engine.ResizeSpec{Kind: "none", H: 1, W: 2},
		Canvas: engine.CanvasSpec{H: 1, W: 2},
		Post:   engine.View{X0: 1, SY: 1, SX: -1, H: 1, W: 2}, // horizontal flip
		CMap:   []int{2, 1, 0},                                // rgb2bgr
	}
	js, _ := json.Marshal(spec)
	h, err := NewPlan(string(js))
	if err != nil {
		t.Fatal(err)
	}
	defer FreePlan(h)
	if _, err := Run(h, addr(unsafe.Pointer(so)), addr(unsafe.Pointer(oo))); err != nil {
		t.Fatal(err)
	}
	want := []uint8{6, 5, 4, 3, 2, 1}
	for i := range want {
		if out[i] != want[i] {
			t.Fatalf("got %v want %v", out, want)
		}
	}
	if p, _ := ArrayDataPtr(addr(unsafe.Pointer(so))); p != addr(unsafe.Pointer(&src[0])) {
		t.Fatal("ArrayDataPtr does not read the data field")
	}
}

func TestErrorsCarryCodes(t *testing.T) {
	_, err := NewPlan(`{"in":{"dtype":"i16"}}`)
	if err == nil || !strings.HasPrefix(err.Error(), "goprep[bad_dtype] src: ") {
		t.Fatalf("got %v", err)
	}
	if _, err := Run(987654, 0, 0); err == nil || !strings.HasPrefix(err.Error(), "goprep[internal] plan: ") {
		t.Fatalf("unknown handle: got %v", err)
	}
	if _, err := SetNumThreads(0); err == nil || !strings.HasPrefix(err.Error(), "goprep[invalid_argument] n: ") {
		t.Fatalf("threads: got %v", err)
	}
}

// Python threads enter Go as separate OS threads; each needs a P (see init).
func TestEnoughPsForCallerThreads(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS set by the environment: left as the user chose")
	}
	if got := runtime.GOMAXPROCS(0); got < callerProcs {
		t.Fatalf("GOMAXPROCS = %d, want at least %d", got, callerProcs)
	}
}

func TestErrorCodesListed(t *testing.T) {
	codes := strings.Split(ErrorCodes(), ",")
	seen := map[string]bool{}
	for _, c := range codes {
		if c == "" || seen[c] {
			t.Fatalf("empty or repeated code in %q", ErrorCodes())
		}
		seen[c] = true
	}
	for _, c := range []engine.Code{engine.CodeTooLarge, engine.CodeForked, engine.CodeCancelled, engine.CodeReadOnly} {
		if !seen[string(c)] {
			t.Fatalf("%s missing from %q", c, ErrorCodes())
		}
	}
}

func TestNumThreadsEnvRule(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "1": true, "4096": true, "0": false, "4097": false, "100000": false, "x": false, "-2": false} {
		_, err := CheckNumThreadsEnv(v)
		if (err == nil) != ok {
			t.Errorf("%q: err %v", v, err)
		}
	}
	if _, err := SetNumThreads(engine.MaxThreads + 1); err == nil {
		t.Fatal("SetNumThreads above MaxThreads accepted")
	}
}

// Kernels is a JSON object naming one kernel per CPU pass (goprep.info()["kernels"]).
func TestKernelsJSON(t *testing.T) {
	var m map[string]string
	if err := json.Unmarshal([]byte(Kernels()), &m); err != nil || m["aa_h"] == "" || m["bilinear_h"] == "" {
		t.Fatalf("Kernels() = %s (%v)", Kernels(), err)
	}
}
