//go:build nocodecs

package codec

import "github.com/goprep/goprep/gomod/engine"

// NoCodecsReason says why this build has no decoders; setup.py builds with -tags nocodecs when
// pkg-config cannot find libjpeg or libpng.
const noCodecs = "goprep was built without libjpeg/libpng (-tags nocodecs: pkg-config found no libjpeg or libpng " +
	"when it was built; install libjpeg-turbo's and libpng's dev packages and rebuild)"

// Available: the codecs built in: none in this build.
func Available() map[string]string { return map[string]string{} }

func probeJPEG([]byte) (Header, error) {
	return Header{}, engine.Errorf(engine.CodeInternal, "", "%s", noCodecs)
}

func decodeJPEG([]byte, Options, Window, []byte, int) error {
	return engine.Errorf(engine.CodeInternal, "", "%s", noCodecs)
}

func decodePNG([]byte, Header, Options, []byte, int) error {
	return engine.Errorf(engine.CodeInternal, "", "%s", noCodecs)
}
