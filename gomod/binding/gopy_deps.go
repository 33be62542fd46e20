//go:build tools

package binding

// The extension gopy generates from this package (setup.py, in _build/, which Go tooling skips) imports
// gopy's handle package, so gopy is a direct requirement. This import, never built (tag "tools"),
// tells `go mod tidy` so: without it tidy marks gopy indirect and every build marks it direct again.
import _ "github.com/go-python/gopy/gopyh"
