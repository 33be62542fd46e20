package engine

import (
	"math"
	"unsafe"
)

// Staged jobs: a training chain whose colour steps (ColorJitter, RandomGrayscale) sit between fused
// segments, run as one job per item (python/goprep/transforms/_converted.py's Staged). The job's plan
// (segment 1: decode's crop, resize, flip) writes into a scratch image kept per worker; each stage
// then applies its colour steps to that image in place (the same ColorPIL / ColorTensor /
// ColorTensorF32 a batch's ColorBatch runs, so the results are equal bit for bit) and runs its plan
// from the scratch into the next scratch, the last one into the job's output. A call with staged jobs
// runs as an encoded call does (decode_job.go: whole items per worker, cancellable between images and
// bands), so a batch is one call, its intermediate images never leave the worker.

// Colour numerics of a stage (the binding's ColorNumerics codes).
const (
	NumericsPIL      = iota // Pillow's (ColorPIL), uint8 only
	NumericsTensorV1        // torchvision v1's tensor code (ColorTensor, ColorTensorF32)
	NumericsTensorV2        // torchvision v2's
	NumNumerics
)

// Stage is one step after a plan: Steps applied to the previous plan's output image, then Plan run
// on it.
type Stage struct {
	Numerics int
	Steps    []ColorStep
	Plan     *Plan
}

// scratchImage describes a plan's output as a stage's scratch image: one contiguous HWC image of
// uint8 or float32 with 1 or 3 channels; ok false for any other output (CHW, a batch, patches).
func scratchImage(p *Plan) (h, w, c int, dt DType, ok bool) {
	if p.N != 1 || p.CHW || p.patch != nil || (p.OutDType != U8 && p.OutDType != F32) || (p.OutC != 1 && p.OutC != 3) {
		return 0, 0, 0, "", false
	}
	return p.OutH, p.OutW, p.OutC, p.OutDType, true
}

// readsImage reports whether p reads exactly one contiguous h x w x c image of dt (strides in bytes;
// the plan zeroes those of size-1 axes, which never address).
func readsImage(p *Plan, h, w, c int, dt DType) bool {
	in, e := p.Spec.In, int64(dt.Size())
	return in.DType == dt && in.N == 0 && in.YUV == nil && in.H == h && in.W == w && in.C == c &&
		(h == 1 || in.Strides[1] == int64(w*c)*e) && (w == 1 || in.Strides[2] == int64(c)*e) && (c == 1 || in.Strides[3] == e)
}

// CheckStages validates stages after plan first: each stage's colour steps take the previous plan's
// output (a scratchImage; Pillow's numerics uint8 only; known ops with finite factors) and its plan
// reads exactly that image.
func CheckStages(first *Plan, stages []Stage) error {
	prev := first
	for k, s := range stages {
		if s.Plan == nil {
			return errf(CodeInvalidArgument, "stages", "stage %d has no plan", k)
		}
		h, w, c, dt, ok := scratchImage(prev)
		if !ok {
			return errf(CodeInvalidArgument, "stages", "stage %d follows a plan whose output is not one HWC uint8/float32 image of 1 or 3 channels", k)
		}
		if s.Numerics < 0 || s.Numerics >= NumNumerics || (dt == F32 && s.Numerics == NumericsPIL) {
			return errf(CodeInvalidArgument, "stages", "stage %d: numerics %d cannot take a %s image", k, s.Numerics, dt)
		}
		for _, st := range s.Steps {
			if st.Op < ColorNone || st.Op >= NumColorOps || math.IsNaN(st.Factor) || math.IsInf(st.Factor, 0) {
				return errf(CodeInvalidArgument, "stages", "stage %d: bad colour step %v", k, st)
			}
		}
		if !readsImage(s.Plan, h, w, c, dt) {
			return errf(CodeInvalidArgument, "stages", "stage %d's plan does not read the %dx%dx%d %s image before it", k, h, w, c, dt)
		}
		prev = s.Plan
	}
	return nil
}

// stagedImages is what a staged job's worker holds besides its plans' scratch rows: its two scratch
// images (runStages), each as big as the largest image a plan before the last outputs; 0 for a job
// without stages.
func stagedImages(j *Job) int64 {
	if len(j.Stages) == 0 {
		return 0
	}
	var m int64
	p := j.Plan
	for _, s := range j.Stages {
		m = max(m, int64(p.OutImageElems())*int64(p.OutDType.Size()))
		p = s.Plan
	}
	return 2 * m
}

// stagesScratch is the largest row scratch the stages' plans need (runCPU sizes its workers by it).
func stagesScratch(stages []Stage) int64 {
	var m int64
	for _, s := range stages {
		m = max(m, s.Plan.est.Scratch)
	}
	return m
}

// colourStage applies stage s's steps to img, the previous plan p's output in scratch.
func colourStage(s *Stage, p *Plan, img []byte) error {
	h, w, c := p.OutH, p.OutW, p.OutC
	if len(s.Steps) == 0 {
		return nil
	}
	if p.OutDType == F32 {
		f := unsafe.Slice((*float32)(unsafe.Pointer(&img[0])), h*w*c)
		return ColorTensorF32(f, h, w, c, s.Numerics == NumericsTensorV2, s.Steps)
	}
	if s.Numerics == NumericsPIL {
		return ColorPIL(img, h, w, c, s.Steps)
	}
	return ColorTensor(img, h, w, c, s.Numerics == NumericsTensorV2, s.Steps)
}

// runStages runs job j (its Src set: an array, or the decoded image) as a staged job on w: its plan
// into scratch, then each stage (CheckStages passed), the last plan into j.Out. The scratch images
// alternate between the two buffers of buf. False when stop cut it short.
func (w *worker) runStages(j Job, i int, buf *decodeBuf, stop *int32) (bool, error) {
	out := j.Out
	for k := 0; ; k++ {
		last := k == len(j.Stages)
		var img []byte
		if !last {
			size := j.Plan.OutImageElems() * j.Plan.OutDType.Size()
			sb := &buf.stage[k%2]
			if cap(*sb) < size {
				*sb = nil
				*sb = make([]byte, size)
			}
			img = (*sb)[:size]
			j.Out = unsafe.Pointer(&img[0])
		} else {
			j.Out = out
		}
		w.reset() // scratch addresses repeat with other contents: no cached row carries over
		b := newJobBufs(&j)
		if !w.runJob(&j, i, &b, stop) {
			return false, nil
		}
		if last {
			return true, nil
		}
		s := &j.Stages[k]
		if err := colourStage(s, j.Plan, img); err != nil {
			return false, errf(CodeInternal, "src", "item %d: %v", i, err)
		}
		j.Plan, j.Src = s.Plan, j.Out
	}
}
