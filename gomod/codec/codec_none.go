//go:build nocodecs || !cgo

package codec

import "github.com/goprep/goprep/gomod/engine"

// noCodecs says why this build has no decoders: setup.py builds with -tags nocodecs when pkg-config
// cannot find libjpeg or libpng, or with GOPREP_CODECS=0; a CGO_ENABLED=0 build (the FMA check, the
// arm64 engine tests) cannot link them either.
const noCodecs = "goprep was built without libjpeg/libpng (-tags nocodecs or without cgo: a source build where " +
	"pkg-config found no libjpeg or libpng, or GOPREP_CODECS=0); install libjpeg-turbo's and libpng's dev " +
	"packages (Debian: libjpeg-dev libpng-dev) and reinstall goprep from source to get JPEG/PNG decode"

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
