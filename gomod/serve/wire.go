package serve

// The Open Inference Protocol messages this front end reads and writes, parsed and encoded with
// protowire (no generated code). Field numbers are those of Triton's grpc_service.proto (checked
// against tritonclient.grpc.service_pb2 by tests/test_serve_gofront.py's requests and replies;
// serve_test.go's TestInferAndErrors reads inferReply's bytes back): ModelInferRequest {1 model_name, 2 model_version, 3 id, 4 parameters,
// 5 inputs, 6 outputs, 7 raw_input_contents}; its InferInputTensor {1 name, 2 datatype, 3 shape,
// 4 parameters, 5 contents}; InferTensorContents {8 bytes_contents}; InferRequestedOutputTensor
// {1 name}; ModelInferResponse {1 model_name, 2 model_version, 3 id, 5 outputs,
// 6 raw_output_contents}; InferOutputTensor {1 name, 2 datatype, 3 shape}; the model requests
// (ModelReady, ModelMetadata, ModelConfig, ModelStatistics) {1 name, 2 version};
// RepositoryIndexRequest {1 repository_name, 2 ready}; ServerLive/ServerReady/ModelReady responses
// {1 live/ready}.

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// inTensor is one InferInputTensor: its name, datatype, shape and bytes_contents (contents).
type inTensor struct {
	name, datatype string
	shape          []int64
	bytes          [][]byte
}

// inferReq is a ModelInferRequest: what this server reads of it (parameters are ignored). An
// untrusted message must not multiply its size in memory, so parseInfer keeps only what check can
// use: the first input (ninputs counts them), the first raw_input_contents entry (nraw counts
// them), at most maxDims shape dimensions, maxBatch+1 bytes_contents entries (more than maxBatch
// never match a valid shape) and as many requested outputs as the model has.
type inferReq struct {
	model, version, id string
	inputs             []inTensor
	ninputs            int
	outputs            []string
	raw                [][]byte
	nraw               int
}

// maxDims is the most dimensions a served input has (FRAME [N, H, W, 3]).
const maxDims = 4

// parseLimits are parseInfer's caps: the server's MaxBatch and its outputs' count.
type parseLimits struct{ maxBatch, outputs int }

var errMalformed = errors.New("malformed message")

// fields calls f for each field of message b; an error for bytes that do not parse.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// errShape: an input's shape has more than maxDims dimensions.
var errShape = status.Errorf(codes.InvalidArgument, "inputs[0].shape has more than %d dimensions", maxDims)

// int64s appends a repeated int64 field's values, packed (BytesType) or not (VarintType); errShape
// past maxDims values.
func int64s(dst []int64, typ protowire.Type, v []byte, x uint64) ([]int64, error) {
	if typ == protowire.VarintType {
		v = protowire.AppendVarint(nil, x)
	} else if typ != protowire.BytesType {
		return dst, errMalformed
	}
	for len(v) > 0 {
		y, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return dst, errMalformed
		}
		if len(dst) == maxDims {
			return dst, errShape
		}
		dst = append(dst, int64(y))
		v = v[n:]
	}
	return dst, nil
}

// parseInfer reads a ModelInferRequest within lim's caps (inferReq); the slices alias b. Its error
// is the call's status: INVALID_ARGUMENT naming the field over a cap, or the message malformed.
func parseInfer(b []byte, lim parseLimits) (*inferReq, error) {
	r := &inferReq{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			r.model = string(v)
		case 2:
			r.version = string(v)
		case 3:
			r.id = string(v)
		case 5:
			r.ninputs++
			if r.ninputs > 1 { // counted, not read: check refuses more than one
				return nil
			}
			t, err := parseInput(v, lim.maxBatch+1)
			if err != nil {
				return err
			}
			r.inputs = append(r.inputs, t)
		case 6:
			if len(r.outputs) == lim.outputs {
				return status.Errorf(codes.InvalidArgument, "outputs has more than %d entries: this model returns %d outputs", lim.outputs, lim.outputs)
			}
			var name string
			err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				if num == 1 {
					name = string(v)
				}
				return nil
			})
			r.outputs = append(r.outputs, name)
			return err
		case 7:
			r.nraw++
			if r.nraw == 1 {
				r.raw = append(r.raw, v)
			}
		}
		return nil
	})
	if _, ok := status.FromError(err); ok && err != nil {
		return nil, err
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "the request is not a valid ModelInferRequest message: %v", err)
	}
	return r, nil
}

// parseInput reads an InferInputTensor, keeping at most maxBytes bytes_contents entries.
func parseInput(b []byte, maxBytes int) (inTensor, error) {
	var t inTensor
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		switch num {
		case 1:
			t.name = string(v)
		case 2:
			t.datatype = string(v)
		case 3:
			t.shape, err = int64s(t.shape, typ, v, x)
		case 5:
			err = fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				if num == 8 && len(t.bytes) < maxBytes {
					t.bytes = append(t.bytes, v)
				}
				return nil
			})
		}
		return err
	})
	return t, err
}

// nameVersion reads a model request's name (1) and version (2).
func nameVersion(b []byte) (name, version string, err error) {
	err = fields(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			name = string(v)
		case 2:
			version = string(v)
		}
		return nil
	})
	return
}

// repoRequest reads a RepositoryIndexRequest: repository_name (1), ready (2).
func repoRequest(b []byte) (repo string, ready bool, err error) {
	err = fields(b, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			repo = string(v)
		case 2:
			ready = x != 0
		}
		return nil
	})
	return
}

// boolReply is a message whose field 1 is bool b (ServerLive/ServerReady/ModelReady responses);
// false is the empty message, as proto3 writes it.
func boolReply(b bool) []byte {
	if !b {
		return []byte{}
	}
	return protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
}

// outTensor is one output of a reply: name, datatype, shape (batch dimension first), raw bytes.
type outTensor struct {
	name, datatype string
	shape          []int64
	raw            []byte
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

// inferReply encodes a ModelInferResponse in field order, as protobuf's serializer writes it.
func inferReply(model, id string, outs []outTensor) []byte {
	size := 64 + len(model) + len(id)
	for _, o := range outs {
		size += len(o.raw) + 64
	}
	b := make([]byte, 0, size)
	b = appendString(b, 1, model)
	b = appendString(b, 2, "1")
	b = appendString(b, 3, id)
	for _, o := range outs {
		var t []byte
		t = appendString(t, 1, o.name)
		t = appendString(t, 2, o.datatype)
		if len(o.shape) > 0 {
			var p []byte
			for _, d := range o.shape {
				p = protowire.AppendVarint(p, uint64(d))
			}
			t = protowire.AppendBytes(protowire.AppendTag(t, 3, protowire.BytesType), p)
		}
		b = protowire.AppendBytes(protowire.AppendTag(b, 5, protowire.BytesType), t)
	}
	for _, o := range outs {
		b = protowire.AppendBytes(protowire.AppendTag(b, 6, protowire.BytesType), o.raw)
	}
	return b
}
