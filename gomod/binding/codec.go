package binding

import (
	"encoding/json"

	"github.com/goprep/goprep/gomod/codec"
)

// Codecs is the JSON object of the codecs built in (name -> library version): goprep.info()["codecs"].
func Codecs() string {
	b, _ := json.Marshal(codec.Available())
	return string(b)
}
