package gpu

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/goprep/goprep/gomod/engine"
)

// yuvSpec makes s read a batch of n YUV frames of its input size in format f, planes with padded
// rows (a decoder's line size) and images a padded batch stride apart.
func yuvSpec(s *engine.Spec, f string, n int, y engine.YUVSpec) *engine.Spec {
	h, w := s.In.H, s.In.W
	var pl []engine.YUVPlane
	at := int64(0)
	add := func(rows, bytes, pad int) {
		pl = append(pl, engine.YUVPlane{Off: at, Stride: int64(bytes + pad)})
		at += int64(rows*(bytes+pad) + 3)
	}
	switch f {
	case "nv12", "nv21":
		add(h, w, 6)
		add(h/2, w, 4)
	case "i420":
		add(h, w, 2)
		add(h/2, w/2, 3)
		add(h/2, w/2, 1)
	default:
		add(h, 2*w, 4)
	}
	y.Format, y.Planes = f, pl
	s.In.N, s.In.C, s.In.DType, s.In.YUV = n, 3, engine.U8, &y
	s.In.Strides = [4]int64{at + 5, 0, 0, 0}
	return s
}

// YUV sources run on the (simulated) GPU's yuv kernels and give the CPU engine's bytes: every format,
// OpenCV's and the exact coefficient tables, every resize rule of the uint8 kernels, flips,
// a letterbox canvas, BGR order and normalisation, batches; host sources (staged rows and whole
// spans) and device sources, host and device outputs.
func TestYUVOnGPU(t *testing.T) {
	useSim(t)
	cases := []struct {
		kind   string
		aa     bool
		oh, ow int
	}{
		{"bilinear", false, 20, 14}, {"bilinear", false, 90, 70}, {"bilinear", true, 30, 20},
		{"bicubic", false, 20, 31}, {"bicubic", true, 30, 20}, {"bicubic", true, 90, 70},
		{"area", false, 20, 15}, {"area", false, 30, 24}, {"area", false, 20, 16}, {"area", false, 90, 70},
		{"nearest", false, 20, 70}, {"nearest-exact", false, 17, 9}, {"nearest-pil", false, 70, 15},
		{"bilinear", false, 60, 48}, // the same size: the conversion alone (a gather)
	}
	colours := []engine.YUVSpec{
		{Matrix: "bt601", Range: "limited", OpenCV: true},
		{Matrix: "bt709", Range: "full"},
		{Matrix: "bt2020", Range: "limited"},
	}
	staged := 0
	for _, f := range []string{"nv12", "nv21", "i420", "yuyv", "uyvy"} {
		for ci, c := range cases {
			for _, variant := range []string{"plain", "flips-letterbox-bgr-norm"} {
				name := fmt.Sprintf("%s %s aa=%v %dx%d %s", f, c.kind, c.aa, c.oh, c.ow, variant)
				s := rgbSpec(60, 48, c.kind, c.aa, c.oh, c.ow)
				if variant != "plain" {
					letterboxFlipsNorm(s, c.oh, c.ow)
				}
				yuvSpec(s, f, 1+ci%3, colours[ci%len(colours)])
				p, err := engine.NewPlan(s)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if ok, why := p.GPUSupported(); !ok {
					if c.aa && c.oh*48 < c.ow*60/2 { // Pillow's vertical-first order stays on the CPU
						continue
					}
					t.Fatalf("%s: GPUSupported declined: %s", name, why)
				}
				if p.GPUStage() != nil {
					staged++
				}
				got, want := onSimGPU(t, p, 2)
				if string(got) != string(want) {
					t.Fatalf("%s: the GPU differs from the CPU engine", name)
				}
				buf, src := gpuSource(p)
				in, err := Upload(buf, 0, 0, false)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Run(Call{Jobs: []engine.Job{{Plan: p, Src: devicePtr(buf, src, in)}}, Placement: Placement{Device: "cuda", Index: 0}, ToDevice: true, DeviceSources: true})
				if err != nil || r.Ran != "cuda" || string(unsafe.Slice((*byte)(ptr(r.Array.Ptr)), r.Array.Bytes)) != string(want) {
					t.Fatalf("%s: device source to device: ran %q (%v) or differs", name, r.Ran, err)
				}
				r.Array.Free()
				in.Free()
			}
		}
	}
	if staged == 0 {
		t.Fatal("no YUV plan staged only the rows it reads")
	}
	if s := ReadStats(); s.Fallbacks != 0 || s.Failures != 0 {
		t.Fatalf("GPU trouble: %+v", s)
	}
}

// A 1080p NV12 frame going to 224x224 stages only the Y and chroma rows its taps read.
func TestYUVStagesReadRows(t *testing.T) {
	useSim(t)
	s := yuvSpec(imagenetSpec(1, 1080, 1920), "nv12", 1, engine.YUVSpec{Matrix: "bt601", Range: "limited", OpenCV: true})
	p, err := engine.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	st := p.GPUStage()
	_, span := p.ImageSpan()
	if st == nil || st.Elems()*2 > span {
		t.Fatalf("staging: %v (span %d)", st, span)
	}
	got, want := onSimGPU(t, p, 2)
	if string(got) != string(want) {
		t.Fatal("1080p NV12: the GPU differs from the CPU engine")
	}
}
