package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"
)

// fakeEncoded "decodes" to a pattern of its seed: the engine's side of an encoded job, without codecs.
type fakeEncoded struct {
	seed    byte
	err     error
	panics  bool
	onStart func() // runs as the decode starts (a test's cancel, say)
	decoded atomic.Int32
}

func (f *fakeEncoded) Decode(dst []byte, stride int) error {
	if f.onStart != nil {
		f.onStart()
	}
	if f.panics {
		panic("decoder bug")
	}
	if f.err != nil {
		return f.err
	}
	f.decoded.Add(1)
	for i := range dst {
		dst[i] = f.seed + byte(i*7)
	}
	return nil
}

func (f *fakeEncoded) image(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = f.seed + byte(i*7)
	}
	return b
}

// Encoded jobs give exactly what array jobs of the decoded images give, whatever the thread count and
// the mix of encoded and array jobs, and each decodes once.
func TestEncodedJobsEqualArrayJobs(t *testing.T) {
	plans := []*Plan{}
	for _, s := range []*Spec{rgbSpec(37, 53, "bilinear", false, 20, 24), rgbSpec(64, 40, "bilinear", true, 20, 24), rgbSpec(20, 24, "none", false, 20, 24)} {
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	const n = 7
	step := plans[0].OutBytes()
	for _, threads := range []int{1, 2, 3, 8} {
		want := make([]byte, n*step)
		got := bytes.Repeat([]byte{0xAB}, n*step)
		var jobs []Job
		var encs []*fakeEncoded
		for i := range n {
			p := plans[i%len(plans)]
			f := &fakeEncoded{seed: byte(i * 31)}
			h, w, c, ok := p.DecodedSource()
			if !ok {
				t.Fatal("a contiguous RGB plan has no decoded source")
			}
			img := f.image(h * w * c)
			if err := runCPU([]Job{{Plan: p, Src: unsafe.Pointer(&img[0]), Out: unsafe.Pointer(&want[i*step])}}, 1, nil); err != nil {
				t.Fatal(err)
			}
			j := Job{Plan: p, Out: unsafe.Pointer(&got[i*step]), Enc: f}
			if i == 3 { // an array job among the encoded ones
				j.Src, j.Enc, f = unsafe.Pointer(&img[0]), nil, nil
			}
			jobs = append(jobs, j)
			encs = append(encs, f)
		}
		if err := (CPU{Threads: threads}).Run(jobs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("threads=%d: encoded jobs differ from array jobs", threads)
		}
		for i, f := range encs {
			if f != nil && f.decoded.Load() != 1 {
				t.Fatalf("threads=%d: job %d decoded %d times", threads, i, f.decoded.Load())
			}
		}
	}
}

// The first failing job in job order is the call's error (the decoder's own, naming its item); a
// decoder's panic becomes CodeInternal once every worker has stopped; a plan that cannot read a
// decoded image is refused.
func TestEncodedJobErrors(t *testing.T) {
	p, _ := NewPlan(rgbSpec(16, 16, "bilinear", false, 8, 8))
	out := make([]byte, 6*p.OutBytes())
	jobs := func(mk func(i int) *fakeEncoded) []Job {
		js := make([]Job, 6)
		for i := range js {
			js[i] = Job{Plan: p, Out: unsafe.Pointer(&out[i*p.OutBytes()]), Enc: mk(i)}
		}
		return js
	}
	for _, threads := range []int{1, 4} {
		bad := jobs(func(i int) *fakeEncoded {
			f := &fakeEncoded{seed: 1}
			if i == 2 || i == 4 {
				f.err = errf(CodeDecode, fmt.Sprintf("src[%d]", i), "corrupt")
			}
			return f
		})
		err := CPU{Threads: threads}.Run(bad)
		var e *Error
		if threads == 1 && (!errors.As(err, &e) || e.Code != CodeDecode || e.Arg != "src[2]") {
			t.Fatalf("threads=1: got %v, want the decode error of src[2]", err)
		}
		if !errors.As(err, &e) || e.Code != CodeDecode {
			t.Fatalf("threads=%d: got %v, want a decode error", threads, err)
		}
		boom := jobs(func(i int) *fakeEncoded { return &fakeEncoded{panics: i == 5} })
		if err := (CPU{Threads: threads}).Run(boom); !errors.As(err, &e) || e.Code != CodeInternal || !strings.Contains(err.Error(), "decoder bug") {
			t.Fatalf("threads=%d: a decoder panic gave %v", threads, err)
		}
	}
	batch := rgbSpec(16, 16, "bilinear", false, 8, 8)
	batch.In.N, batch.In.Strides[0] = 2, 16*16*3
	bp, err := NewPlan(batch)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := bp.DecodedSource(); ok {
		t.Fatal("a batch plan claims to read one decoded image")
	}
	big := make([]byte, bp.OutBytes())
	var e *Error
	if err := (CPU{}).Run([]Job{{Plan: bp, Out: unsafe.Pointer(&big[0]), Enc: &fakeEncoded{}}}); !errors.As(err, &e) || e.Code != CodeInternal {
		t.Fatalf("an encoded source under a batch plan gave %v", err)
	}
}

// The stop flag ends an encoded call between images and between bands of rows: a call it cut short
// returns CodeCancelled, never nil, and a flag set before the call decodes and writes nothing.
func TestEncodedJobsCancel(t *testing.T) {
	p, _ := NewPlan(rgbSpec(64, 64, "bilinear", false, 32, 32))
	const n = 8
	for _, threads := range []int{1, 2} {
		out := bytes.Repeat([]byte{0xAB}, n*p.OutBytes())
		var stop int32
		fs := make([]*fakeEncoded, n)
		jobs := make([]Job, n)
		for i := range jobs {
			fs[i] = &fakeEncoded{seed: 3}
			jobs[i] = Job{Plan: p, Out: unsafe.Pointer(&out[i*p.OutBytes()]), Enc: fs[i]}
		}
		// The third image's decode sets the flag: what follows it is never written.
		fs[2].onStart = func() { atomic.StoreInt32(&stop, 1) }
		err := CPU{Threads: threads, Stop: &stop}.Run(jobs)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeCancelled {
			t.Fatalf("threads=%d: got %v, want cancelled", threads, err)
		}
		if bytes.IndexByte(out[(n-1)*p.OutBytes():], 0xAB) < 0 {
			t.Fatalf("threads=%d: the last image was written after the stop", threads)
		}
		// Set before the call: nothing decoded, nothing written.
		fresh := make([]*fakeEncoded, n)
		for i := range jobs {
			fresh[i] = &fakeEncoded{seed: 3}
			jobs[i].Enc = fresh[i]
		}
		clear(out)
		if err := (CPU{Threads: threads, Stop: &stop}).Run(jobs); !errors.As(err, &e) || e.Code != CodeCancelled {
			t.Fatalf("threads=%d: a call stopped before it started gave %v", threads, err)
		}
		for _, f := range fresh {
			if f.decoded.Load() != 0 {
				t.Fatalf("threads=%d: a call stopped before it started decoded", threads)
			}
		}
		if bytes.Count(out, []byte{0}) != len(out) {
			t.Fatalf("threads=%d: a call stopped before it started wrote output", threads)
		}
	}
	// One image whose plan runs in many bands, stopped from the decode: cancelled before any row.
	one, _ := NewPlan(rgbSpec(2048, 1024, "none", false, 2048, 1024))
	out := bytes.Repeat([]byte{0xAB}, one.OutBytes())
	var stop int32
	f := &fakeEncoded{onStart: func() { atomic.StoreInt32(&stop, 1) }}
	var e *Error
	if err := (CPU{Stop: &stop}).Run([]Job{{Plan: one, Out: unsafe.Pointer(&out[0]), Enc: f}}); !errors.As(err, &e) || e.Code != CodeCancelled {
		t.Fatalf("a stop during one image's decode gave %v", err)
	}
	if bytes.Count(out, []byte{0xAB}) != len(out) {
		t.Fatal("rows were written after the stop")
	}
}

// The decode buffers kept between calls: at most NumThreads of them, and none above bigDecodeBuf.
func TestDecodeBufferPool(t *testing.T) {
	ReleaseDecodeBuffers()
	defer ReleaseDecodeBuffers()
	old := NumThreads()
	defer SetNumThreads(old)
	if err := SetNumThreads(2); err != nil {
		t.Fatal(err)
	}
	p, _ := NewPlan(rgbSpec(64, 64, "bilinear", false, 8, 8))
	out := make([]byte, 8*p.OutBytes())
	jobs := make([]Job, 8)
	for i := range jobs {
		jobs[i] = Job{Plan: p, Out: unsafe.Pointer(&out[i*p.OutBytes()]), Enc: &fakeEncoded{}}
	}
	for _, threads := range []int{4, 2} {
		if err := (CPU{Threads: threads}).Run(jobs); err != nil {
			t.Fatal(err)
		}
		decodeBufs.Lock()
		kept := len(decodeBufs.free)
		decodeBufs.Unlock()
		if kept < 1 || kept > 2 {
			t.Fatalf("threads=%d: %d decode buffers kept, want 1..NumThreads (2)", threads, kept)
		}
	}
	putDecodeBuf(&decodeBuf{b: make([]byte, 0, bigDecodeBuf+1)})
	decodeBufs.Lock()
	for _, b := range decodeBufs.free {
		if cap(b.b) > bigDecodeBuf {
			t.Error("a big decode buffer was kept")
		}
	}
	decodeBufs.Unlock()
}
