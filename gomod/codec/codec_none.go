//go:build nocodecs

package codec

import "github.com/goprep/goprep/gomod/engine"

// noCodecs says why this build has no decoders: setup.py builds with -tags nocodecs when pkg-config
// cannot find libjpeg or libpng, or with GOPREP_CODECS=0 (the manylinux wheels, scripts/build_wheels.sh).
const noCodecs = "goprep was built without libjpeg/libpng (-tags nocodecs: the manylinux wheel, or a source build " +
	"where pkg-config found no libjpeg or libpng); install libjpeg-turbo's and libpng's dev packages and " +
	"pip install goprep from source (--no-binary goprep) to get JPEG/PNG decode"

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
