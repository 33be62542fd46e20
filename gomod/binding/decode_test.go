//go:build cgo && !nocodecs

package binding

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/codec"
	"github.com/goprep/goprep/gomod/engine"
)

// copyPlan is the handle of a plan that copies an h x w x c uint8 image as it is (the caller frees it).
func copyPlan(t *testing.T, h, w, c int) int64 {
	t.Helper()
	cmap := []int{0, 1, 2, 3}[:c]
	spec := engine.Spec{
		In:     engine.InputSpec{DType: engine.U8, H: h, W: w, C: c, Strides: [4]int64{0, int64(w * c), int64(c), 1}},
		Pre:    engine.View{SY: 1, SX: 1, H: h, W: w},
		Resize: engine.ResizeSpec{Kind: "none", H: h, W: w},
		Canvas: engine.CanvasSpec{H: h, W: w},
		Post:   engine.View{SY: 1, SX: 1, H: h, W: w},
		CMap:   cmap,
	}
	js, _ := json.Marshal(spec)
	p, err := NewPlan(string(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openBatch opens a decode batch of in-memory items named "src" as a list; the caller closes it.
func openBatch(t testing.TB, items [][]byte) (int64, []codec.Header) {
	t.Helper()
	n := len(items)
	desc := make([]int64, 2*n)
	for i, it := range items {
		desc[2*i], desc[2*i+1] = addr(unsafe.Pointer(&it[0])), int64(len(it))
	}
	hdr := make([]int64, HeaderCols*n)
	dobj := &fakeArray{data: unsafe.Pointer(&desc[0])}
	hobj := &fakeArray{data: unsafe.Pointer(&hdr[0])}
	h, err := DecodeOpen(addr(unsafe.Pointer(dobj)), int64(n), "", addr(unsafe.Pointer(hobj)), 0, "src", true)
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Split(Formats(), ",")
	hs := make([]codec.Header, n)
	for i := range hs {
		row := hdr[HeaderCols*i:]
		hs[i] = codec.Header{Format: codec.Format(names[row[hdrFormat]]), Height: int(row[hdrHeight]), Width: int(row[hdrWidth])}
	}
	return h, hs
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../codec/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// execRows runs Execute on the job rows (JobCols each) into out on the CPU, with cancel flag stop
// (nil: none).
func execRows(rows []int64, out []byte, device string, stop *int32) error {
	dobj := &fakeArray{data: unsafe.Pointer(&rows[0])}
	oobj := &fakeArray{data: unsafe.Pointer(&out[0])}
	var so int64
	if stop != nil {
		so = addr(unsafe.Pointer(&fakeArray{data: unsafe.Pointer(stop)}))
	}
	_, err := Execute(addr(unsafe.Pointer(dobj)), int64(len(rows)/JobCols), addr(unsafe.Pointer(oobj)), device, false, -1, -1, so, 0, 0)
	return err
}

// Execute runs rows naming encoded items: each decoded with its options and run through its plan,
// equal to codec.Decode's image; the header table names formats by Formats; errors name the item.
func TestExecuteDecodesEncodedRows(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	items := [][]byte{readTestdata(t, "j-444.jpg"), readTestdata(t, "p-rgb.png"), readTestdata(t, "j-420.jpg")}
	bh, hs := openBatch(t, items)
	defer DecodeClose(bh)
	if hs[0].Format != codec.JPEG || hs[1].Format != codec.PNG {
		t.Fatalf("formats %v %v", hs[0].Format, hs[1].Format)
	}
	scales := []int{1, 1, 2}
	var rows []int64
	var want []byte
	off := 0
	for i, it := range items {
		o := codec.Options{Scale: scales[i]}
		oh, ow, oc := codec.OutSize(hs[i], o)
		img := make([]byte, oh*ow*oc)
		if err := codec.Decode(it, o, img, ow*oc); err != nil {
			t.Fatal(err)
		}
		want = append(want, img...)
		p := copyPlan(t, oh, ow, oc)
		defer FreePlan(p)
		row := make([]int64, JobCols)
		row[jobPlan], row[jobOut], row[jobBatch], row[jobItem], row[jobScale] = p, int64(off), bh, int64(i), int64(scales[i])
		rows = append(rows, row...)
		off += len(img)
	}
	for _, threads := range []int64{1, 3} {
		old := NumThreads()
		SetNumThreads(threads)
		out := make([]byte, len(want))
		err := execRows(rows, out, "cpu", nil)
		SetNumThreads(old)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("threads=%d: the decoded images differ from codec.Decode's", threads)
		}
	}
	out := make([]byte, len(want))
	// encoded sources never go to a GPU
	if err := execRows(rows, out, "auto", nil); err == nil || !strings.Contains(err.Error(), "decoded on the CPU") {
		t.Fatalf("device=auto with encoded sources: %v", err)
	}
	// a plan of another size than the decoded image: today's message, naming the item
	small := copyPlan(t, 1, 2, 3)
	defer FreePlan(small)
	bad := append([]int64(nil), rows...)
	bad[JobCols+jobPlan] = small
	if err := execRows(bad, out, "cpu", nil); err == nil || !strings.Contains(err.Error(), "src[1]: the plan reads a") {
		t.Fatalf("a plan of the wrong size: %v", err)
	}
	// an item index beyond the batch, an unknown batch
	bad = append([]int64(nil), rows...)
	bad[jobItem] = 3
	if err := execRows(bad, out, "cpu", nil); err == nil {
		t.Fatal("an item beyond the batch was accepted")
	}
	bad[jobItem], bad[jobBatch] = 0, bh+1000
	if err := execRows(bad, out, "cpu", nil); err == nil || !strings.Contains(err.Error(), "unknown decode batch") {
		t.Fatalf("an unknown batch: %v", err)
	}
	// a set cancel flag: cancelled, nothing written
	stop := int32(1)
	clear(out)
	if err := execRows(rows, out, "cpu", &stop); err == nil || !strings.HasPrefix(err.Error(), "goprep[cancelled]") {
		t.Fatalf("a stopped decode call: %v", err)
	}
	if bytes.Count(out, []byte{0}) != len(out) {
		t.Fatal("a call stopped before it started wrote output")
	}
}

// Data whose header is sound but whose body is cut fails in Execute with a decode error naming the
// item; a held decode call waits for its cancel flag and then stops with "cancelled".
func TestExecuteDecodeErrorsAndHold(t *testing.T) {
	if _, err := SetArrayDataOffset(16); err != nil {
		t.Fatal(err)
	}
	good := readTestdata(t, "j-444.jpg")
	items := [][]byte{good, good[:len(good)*2/5]}
	bh, hs := openBatch(t, items)
	defer DecodeClose(bh)
	p := copyPlan(t, hs[0].Height, hs[0].Width, 3)
	defer FreePlan(p)
	rows := make([]int64, 2*JobCols)
	for i := range 2 {
		r := rows[i*JobCols:]
		r[jobPlan], r[jobOut], r[jobBatch], r[jobItem], r[jobScale] = p, int64(i*hs[0].Height*hs[0].Width*3), bh, int64(i), 1
	}
	out := make([]byte, 2*hs[0].Height*hs[0].Width*3)
	err := execRows(rows, out, "cpu", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "goprep[decode] src[1]: ") {
		t.Fatalf("a truncated item: %v", err)
	}
	TestingHoldCalls(1, false)
	var stop int32
	done := make(chan error, 1)
	go func() { done <- execRows(rows[:JobCols], out, "cpu", &stop) }()
	if !TestingWaitHeld(5000) {
		t.Fatal("the cancellable decode call was not held")
	}
	atomic.StoreInt32(&stop, 1)
	if err := <-done; err == nil || !strings.HasPrefix(err.Error(), "goprep[cancelled]") {
		t.Fatalf("a held decode call: want cancelled, got %v", err)
	}
}
