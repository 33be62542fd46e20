//go:build !nocodecs

package codec

// Available: the codecs built in, name -> library version; empty when built with -tags nocodecs.
func Available() map[string]string {
	return map[string]string{"jpeg": jpegVersion(), "png": pngVersion()}
}
