package serve

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// message appends field num holding the bytes v.
func message(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// imageInput is an IMAGE BYTES input of the given shape whose contents hold files empty entries.
func imageInput(shape []uint64, files int) []byte {
	t := appendString(appendString(nil, 1, "IMAGE"), 2, "BYTES")
	var p []byte
	for _, d := range shape {
		p = protowire.AppendVarint(p, d)
	}
	t = message(t, 3, p)
	var c []byte
	for range files {
		c = message(c, 8, nil)
	}
	return message(t, 5, c)
}

// Adversarial messages (tens of thousands of shape values, inputs, bytes_contents, outputs or raw
// entries in a few hundred kilobytes) keep a bounded part in memory and fail INVALID_ARGUMENT as the
// Python front end's checks do, naming the field.
func TestParseCaps(t *testing.T) {
	lim := parseLimits{maxBatch: 8, outputs: 1}
	req := func(parts ...[]byte) []byte {
		b := appendString(nil, 1, "m")
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	const many = 50000
	huge := make([]uint64, many)
	for i := range huge {
		huge[i] = 1
	}
	if _, err := parseInfer(req(message(nil, 5, imageInput(huge, 0))), lim); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "inputs[0].shape") {
		t.Errorf("a %d-dimensional shape: %v", many, err)
	}
	unpacked := appendString(nil, 1, "IMAGE")
	for range 5 {
		unpacked = protowire.AppendVarint(protowire.AppendTag(unpacked, 3, protowire.VarintType), 1)
	}
	if _, err := parseInfer(req(message(nil, 5, unpacked)), lim); status.Code(err) != codes.InvalidArgument {
		t.Errorf("5 unpacked dimensions: %v", err)
	}
	var inputs []byte
	for range many {
		inputs = message(inputs, 5, imageInput([]uint64{1}, 1))
	}
	r, err := parseInfer(req(inputs), lim)
	if err != nil || len(r.inputs) != 1 || r.ninputs != many {
		t.Fatalf("%d inputs: kept %v, counted %v, %v", many, len(r.inputs), r.ninputs, err)
	}
	r, err = parseInfer(req(message(nil, 5, imageInput([]uint64{1}, many))), lim)
	if err != nil || len(r.inputs[0].bytes) != lim.maxBatch+1 {
		t.Fatalf("%d bytes_contents: kept %v, %v", many, len(r.inputs[0].bytes), err)
	}
	var raws []byte
	for range many {
		raws = message(raws, 7, nil)
	}
	r, err = parseInfer(req(message(nil, 5, imageInput([]uint64{1}, 0)), raws), lim)
	if err != nil || len(r.raw) != 1 || r.nraw != many {
		t.Fatalf("%d raw_input_contents: kept %v, counted %v, %v", many, len(r.raw), r.nraw, err)
	}
	var outs []byte
	for range many {
		outs = message(outs, 6, appendString(nil, 1, "TENSOR"))
	}
	if _, err := parseInfer(req(outs), lim); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "outputs") {
		t.Errorf("%d outputs: %v", many, err)
	}

	// Through the server: the same statuses and the Python front end's messages.
	cfg := testConfig()
	cfg.MaxRequestBytes = 4 << 20
	_, cc := start(t, cfg, &fakeHost{})
	for _, c := range []struct {
		body []byte
		msg  string
	}{
		{req(message(nil, 5, imageInput(huge, 0))), "inputs[0].shape has more than 4 dimensions"},
		{req(inputs), "send exactly one input (IMAGE or FRAME), got 50000"},
		{req(message(nil, 5, imageInput([]uint64{1}, many))), "input IMAGE has no data for its 1 elements"},
		{req(message(nil, 5, imageInput([]uint64{1}, 0)), raws), "raw_input_contents has 50000 entries for 1 input"},
		{req(message(nil, 5, imageInput([]uint64{1}, 1)), outs), "outputs has more than 1 entries"},
	} {
		_, err := call(cc, "ModelInfer", c.body)
		if code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.msg) {
			t.Errorf("got %v, want INVALID_ARGUMENT %q", err, c.msg)
		}
	}
}
