package engine

import "fmt"

// Code is a stable error code. The Python package maps each code to an exception class, so codes are
// part of the public contract: add new ones, never rename.
//
// This list is the one source of every code goprep raises, whichever layer raises it: the binding
// exports it (ErrorCodes) and a test checks that Python's exception map covers exactly these codes
// and that every code the Python sources raise is one of them.
type Code string

const (
	CodeInvalidArgument   Code = "invalid_argument"
	CodeBadShape          Code = "bad_shape"
	CodeTooLarge          Code = "too_large"
	CodeBadDType          Code = "bad_dtype"
	CodeReadOnly          Code = "read_only" // raised by Python: a read-only out= array
	CodeOverlap           Code = "overlap"   // raised by Python: out= shares memory with an input
	CodePipeline          Code = "pipeline"  // raised by Python's tracer: a function that cannot be fused
	CodeInternal          Code = "internal"
	CodeDeviceUnavailable Code = "device_unavailable"
	CodeForked            Code = "forked"    // raised by Python: the Go runtime started before a fork
	CodeCancelled         Code = "cancelled" // a call stopped through its cancel flag (Ctrl-C)
	CodeDecode            Code = "decode"    // encoded image data that cannot be decoded (empty, corrupt, truncated, unsupported)
)

// Codes is every Code, in declaration order.
var Codes = []Code{
	CodeInvalidArgument, CodeBadShape, CodeTooLarge, CodeBadDType, CodeReadOnly, CodeOverlap, CodePipeline,
	CodeInternal, CodeDeviceUnavailable, CodeForked, CodeCancelled, CodeDecode,
}

// Error is every error the engine returns. Its text has a fixed shape, "goprep[code] arg: message",
// because it crosses the gopy boundary as a string and is parsed back into a typed exception there.
type Error struct {
	Code Code
	Arg  string // the argument at fault, empty when none is
	Msg  string
}

func (e *Error) Error() string {
	if e.Arg == "" {
		return fmt.Sprintf("goprep[%s] %s", e.Code, e.Msg)
	}
	return fmt.Sprintf("goprep[%s] %s: %s", e.Code, e.Arg, e.Msg)
}

// errf builds an *Error.
func errf(code Code, arg, format string, a ...any) *Error {
	return &Error{Code: code, Arg: arg, Msg: fmt.Sprintf(format, a...)}
}

// Errorf builds an *Error; for backends outside this package.
func Errorf(code Code, arg, format string, a ...any) *Error { return errf(code, arg, format, a...) }
