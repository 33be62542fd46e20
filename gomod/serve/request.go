package serve

// One ModelInfer request checked the way python/goprep/_serve/oip.py's Engine._images checks it
// (the same rules, codes and messages): exactly one input, IMAGE (BYTES [N] or [N, 1]: encoded files)
// or FRAME (UINT8 [H, W, 3] or [N, H, W, 3]: raw RGB), 1..MaxBatch images, the frame's pixels within
// MaxPixels, outputs only those the model has.

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	inputImage = "IMAGE"
	inputFrame = "FRAME"
)

// request is one parsed ModelInfer call: its images (encoded files, or frames h x w x 3 in raw).
type request struct {
	id      string
	encoded bool
	files   [][]byte // encoded: one per image
	frames  []byte   // not encoded: n * h * w * 3 bytes
	n, h, w int
	want    []string
}

func badRequest(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

func overLimit(format string, a ...any) error {
	return status.Errorf(codes.ResourceExhausted, format, a...)
}

// check turns a parsed message into a request; its error is the call's status.
func (s *Server) check(r *inferReq) (*request, error) {
	c := &s.cfg
	if r.model != c.ModelName {
		return nil, status.Errorf(codes.NotFound, "this server serves model %s, not %s", pyRepr(c.ModelName), pyRepr(r.model))
	}
	if r.version != "" && r.version != "1" {
		return nil, status.Errorf(codes.NotFound, "model %s has version 1 only, not %s", pyRepr(c.ModelName), pyRepr(r.version))
	}
	if r.ninputs != 1 {
		return nil, badRequest("send exactly one input (%s or %s), got %d", inputImage, inputFrame, r.ninputs)
	}
	in := r.inputs[0]
	shape := in.shape
	for _, d := range shape {
		if d < 0 {
			return nil, badRequest("input %s has a negative dimension in shape %s", in.name, pyList(shape))
		}
	}
	var raw []byte
	if r.nraw > 0 {
		if r.nraw != 1 {
			return nil, badRequest("raw_input_contents has %d entries for 1 input", r.nraw)
		}
		raw = r.raw[0]
	}
	q := &request{id: r.id}
	switch in.name {
	case inputImage:
		if in.datatype != "BYTES" || (len(shape) != 1 && len(shape) != 2) || (len(shape) == 2 && shape[1] != 1) {
			return nil, badRequest("input %s must be BYTES of shape [N] (encoded images), got %s %s", inputImage, in.datatype, pyList(shape))
		}
		n := shape[0]
		if err := s.batchLimit(n); err != nil {
			return nil, err
		}
		switch {
		case raw != nil:
			files, err := unpackBytes(raw, int(n))
			if err != nil {
				return nil, badRequest("input %s: %v", inputImage, err)
			}
			q.files = files
		case int64(len(in.bytes)) == n:
			q.files = in.bytes
		default:
			return nil, badRequest("input %s has no data for its %d elements", inputImage, n)
		}
		q.encoded, q.n = true, int(n)
	case inputFrame:
		if in.datatype != "UINT8" || (len(shape) != 3 && len(shape) != 4) || shape[len(shape)-1] != 3 {
			return nil, badRequest("input %s must be UINT8 of shape [H, W, 3] or [N, H, W, 3] (RGB), got %s %s", inputFrame, in.datatype, pyList(shape))
		}
		n := int64(1)
		if len(shape) == 4 {
			n = shape[0]
		}
		h, w := shape[len(shape)-3], shape[len(shape)-2]
		if err := s.batchLimit(n); err != nil {
			return nil, err
		}
		if h < 1 || w < 1 {
			return nil, badRequest("input %s has no pixels: shape %s", inputFrame, pyList(shape))
		}
		if h > c.MaxPixels || w > c.MaxPixels || h*w > c.MaxPixels {
			return nil, overLimit("frame of %dx%d pixels is larger than the server's limit of %d pixels", w, h, c.MaxPixels)
		}
		if raw == nil {
			return nil, badRequest("send input %s in raw_input_contents", inputFrame)
		}
		if int64(len(raw)) != n*h*w*3 {
			return nil, badRequest("input %s of shape %s needs %d bytes, got %d", inputFrame, pyList(shape), n*h*w*3, len(raw))
		}
		q.frames, q.n, q.h, q.w = raw, int(n), int(h), int(w)
	default:
		return nil, badRequest("unknown input %s: this model takes %s (BYTES) or %s (UINT8)", pyRepr(in.name), inputImage, inputFrame)
	}
	names := make([]string, len(c.Outputs))
	for i, o := range c.Outputs {
		names[i] = o.Name
	}
	for _, o := range r.outputs {
		if !slices.Contains(names, o) {
			return nil, badRequest("unknown output %s: this model returns %s", pyRepr(o), strings.Join(names, ", "))
		}
	}
	q.want = r.outputs
	return q, nil
}

// batchLimit: a request carries 1..MaxBatch images.
func (s *Server) batchLimit(n int64) error {
	if n < 1 {
		return badRequest("a request needs at least one image, got %d", n)
	}
	if n > int64(s.cfg.MaxBatch) {
		return overLimit("a request may carry at most %d images, got %d", s.cfg.MaxBatch, n)
	}
	return nil
}

// unpackBytes splits a BYTES tensor's raw contents (each element prefixed with its uint32
// little-endian length) into count elements (protocol.unpack_bytes).
func unpackBytes(raw []byte, count int) ([][]byte, error) {
	out := make([][]byte, 0, count)
	off := 0
	for range count {
		if off+4 > len(raw) {
			return nil, fmt.Errorf("BYTES contents end inside an element's length prefix")
		}
		n := int(binary.LittleEndian.Uint32(raw[off:]))
		off += 4
		if n > len(raw)-off {
			return nil, fmt.Errorf("BYTES element runs past the end of the contents")
		}
		out = append(out, raw[off:off+n])
		off += n
	}
	if off != len(raw) {
		return nil, fmt.Errorf("BYTES contents have %d bytes after the %d elements of the shape", len(raw)-off, count)
	}
	return out, nil
}

// pyRepr quotes s as Python's repr does for plain text (the Python server's messages use !r).
func pyRepr(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// pyList writes a shape as Python prints a list: [1, 2, 3].
func pyList(shape []int64) string {
	p := make([]string, len(shape))
	for i, d := range shape {
		p[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(p, ", ") + "]"
}
