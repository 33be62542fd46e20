// Package engine is goprep's validated preprocessing plan and its CPU backend, the golden reference
// every other backend is tested against.
package engine

import "fmt"

// Code is a stable error code. The Python package maps each code to an exception class, so codes are
// part of the public contract: add new ones, never rename.
type Code string

const (
	CodeInvalidArgument   Code = "invalid_argument"
	CodeBadShape          Code = "bad_shape"
	CodeTooLarge          Code = "too_large"
	CodeBadDType          Code = "bad_dtype"
	CodeReadOnly          Code = "read_only"
	CodeOverlap           Code = "overlap"
	CodePipeline          Code = "pipeline"
	CodeInternal          Code = "internal"
	CodeDeviceUnavailable Code = "device_unavailable"
)

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
