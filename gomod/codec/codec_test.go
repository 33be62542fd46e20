//go:build !nocodecs

package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goprep/goprep/gomod/engine"
)

// manifest.json (scripts/gen_codec_corpus.py): what Pillow makes of each testdata file.
type pillowView struct {
	Width, Height int
	Refused       string
	RGB, L, RGBA  string
	Orient        int
	OrientedRGB   string `json:"oriented_RGB"`
	Scale2        string `json:"scale2_RGB"`
	Scale4        string `json:"scale4_RGB"`
	Scale8        string `json:"scale8_RGB"`
}

func corpus(t testing.TB) (map[string][]byte, map[string]pillowView) {
	t.Helper()
	var m map[string]pillowView
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for name := range m {
		d, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = d
	}
	return files, m
}

func decodeAll(t testing.TB, data []byte, o Options) ([]byte, int, int, error) {
	h, err := Probe(data)
	if err != nil {
		return nil, 0, 0, err
	}
	oh, ow, ch := OutSize(h, o)
	dst := make([]byte, oh*ow*ch)
	return dst, oh, ow, Decode(data, o, dst, ow*ch)
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func wantCode(t *testing.T, err error, code engine.Code, what string) {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != code || e.Arg != "data" {
		t.Fatalf("%s: got %v, want goprep[%s] data: ...", what, err, code)
	}
}

func TestAvailable(t *testing.T) {
	a := Available()
	if !strings.HasPrefix(a["jpeg"], "libjpeg-turbo ") || !strings.HasPrefix(a["png"], "libpng 1.") {
		t.Fatal(a)
	}
}

func TestDecodeEqualsPillow(t *testing.T) {
	files, m := corpus(t)
	for name, data := range files {
		p := m[name]
		h, err := Probe(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Width != p.Width || h.Height != p.Height || h.Orientation != max(p.Orient, 1) {
			t.Errorf("%s: probe %+v, Pillow %+v", name, h, p)
		}
		if p.Refused != "" {
			_, _, _, err := decodeAll(t, data, Options{})
			wantCode(t, err, engine.CodeDecode, name)
			if !strings.Contains(err.Error(), p.Refused) {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		for _, c := range []struct {
			o    Options
			want string
		}{
			{Options{Mode: RGB}, p.RGB}, {Options{Mode: Gray}, p.L}, {Options{Mode: RGBA}, p.RGBA},
			{Options{ApplyOrientation: true}, p.OrientedRGB},
			{Options{Scale: 2}, p.Scale2}, {Options{Scale: 4}, p.Scale4}, {Options{Scale: 8}, p.Scale8},
		} {
			if c.want == "" {
				continue // PNG has no draft scales; tiny JPEGs have no Pillow draft at 1/8
			}
			got, _, _, err := decodeAll(t, data, c.o)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, c.o, err)
			}
			if sum(got) != c.want {
				t.Errorf("%s %+v: differs from Pillow", name, c.o)
			}
		}
	}
}

func TestWindowEqualsFullDecode(t *testing.T) {
	files, _ := corpus(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for name, data := range files {
		if !strings.HasPrefix(name, "j-") {
			continue
		}
		for _, scale := range []int{1, 2, 4} {
			for _, mode := range []Mode{RGB, Gray, RGBA} {
				o := Options{Mode: mode, Scale: scale}
				full, oh, ow, err := decodeAll(t, data, o)
				if err != nil {
					t.Fatal(err)
				}
				ch := mode.Channels()
				for k := 0; k < 12; k++ {
					y0, y1 := rng.IntN(oh), 0
					y1 = y0 + 1 + rng.IntN(oh-y0)
					x0 := rng.IntN(ow)
					x1 := x0 + 1 + rng.IntN(ow-x0)
					o.Window = Window{y0, y1, x0, x1}
					dst := make([]byte, oh*ow*ch)
					if err := Decode(data, o, dst, ow*ch); err != nil {
						t.Fatalf("%s %+v: %v", name, o, err)
					}
					for y := y0; y < y1; y++ {
						a, b := dst[(y*ow+x0)*ch:(y*ow+x1)*ch], full[(y*ow+x0)*ch:(y*ow+x1)*ch]
						if !bytes.Equal(a, b) {
							t.Fatalf("%s %+v: row %d differs from the full decode", name, o, y)
						}
					}
				}
			}
		}
	}
}

func TestBadData(t *testing.T) {
	files, _ := corpus(t)
	for _, c := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "empty"},
		{"garbage", []byte("GIF89a and more bytes"), "unknown image format"},
		{"soi only", []byte{0xFF, 0xD8, 0xFF}, "truncated"},
		{"soi eoi", []byte{0xFF, 0xD8, 0xFF, 0xD9}, "JPEG"},
		{"bad marker", []byte{0xFF, 0xD8, 0xFF, 0x02, 0x00, 0x04, 0, 0, 0xFF, 0xD9}, "JPEG"},
		{"png signature only", []byte("\x89PNG\r\n\x1a\n"), "truncated"},
		{"png no ihdr", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIDAT"), make([]byte, 40)...), "IHDR"},
	} {
		_, err := Probe(c.data)
		if err == nil {
			_, _, _, err = decodeAll(t, c.data, Options{})
		}
		wantCode(t, err, engine.CodeDecode, c.name)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v does not name %q", c.name, err, c.msg)
		}
	}
	// Truncated at every point: a decode error or (cut after the last row's data) a success; never a
	// crash, never another code.
	for name, data := range files {
		step := max(1, len(data)/300)
		for n := 0; n < len(data); n += step {
			_, _, _, err := decodeAll(t, data[:n], Options{})
			if err != nil {
				wantCode(t, err, engine.CodeDecode, name)
			} else if n < len(data)/2 {
				t.Errorf("%s cut at %d of %d bytes decoded", name, n, len(data))
			}
		}
	}
}

// jpegBomb is a real small JPEG whose SOF0 claims h x w.
func jpegBomb(t testing.TB, h, w int) []byte {
	data, err := os.ReadFile("testdata/j-420.jpg")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	b := bytes.Clone(data)
	binary.BigEndian.PutUint16(b[i+5:], uint16(h))
	binary.BigEndian.PutUint16(b[i+7:], uint16(w))
	return b
}

func TestBombRefusedBeforeAllocation(t *testing.T) {
	b := jpegBomb(t, 60000, 60000)
	h, err := Probe(b)
	if err != nil || h.Width != 60000 || h.Height != 60000 {
		t.Fatal(h, err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = Decode(b, Options{MaxPixels: 100 << 20}, make([]byte, 1), 3)
	runtime.ReadMemStats(&after)
	wantCode(t, err, engine.CodeTooLarge, "bomb")
	if !strings.Contains(err.Error(), "60000x60000") || !strings.Contains(err.Error(), "104857600") {
		t.Error(err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 10<<20 {
		t.Errorf("refusing the bomb allocated %d bytes", d)
	}
	// Without a limit the C side checks the destination before libjpeg allocates a thing.
	if err := Decode(b, Options{}, make([]byte, 1), 3); err == nil {
		t.Fatal("a 1-byte destination accepted")
	}
	png, _ := os.ReadFile("testdata/p-rgb.png")
	pb := bytes.Clone(png)
	binary.BigEndian.PutUint32(pb[16:], 60000)
	binary.BigEndian.PutUint32(pb[20:], 60000)
	err = Decode(pb, Options{MaxPixels: 1 << 20}, make([]byte, 1), 3)
	wantCode(t, err, engine.CodeTooLarge, "png bomb")
}

func TestOrientCopy(t *testing.T) {
	// 2x3 image, one channel: values 0..5 row-major; the eight results as Pillow's transposes give them.
	src := []byte{0, 1, 2, 3, 4, 5}
	want := map[int][]byte{
		2: {2, 1, 0, 5, 4, 3},
		3: {5, 4, 3, 2, 1, 0},
		4: {3, 4, 5, 0, 1, 2},
		5: {0, 3, 1, 4, 2, 5},
		6: {3, 0, 4, 1, 5, 2},
		7: {5, 2, 4, 1, 3, 0},
		8: {2, 5, 1, 4, 0, 3},
	}
	for o, w := range want {
		oh, ow := 2, 3
		if o >= 5 {
			oh, ow = 3, 2
		}
		dst := make([]byte, oh*ow)
		orientCopy(dst, ow, src, 2, 3, 1, o)
		if !bytes.Equal(dst, w) {
			t.Errorf("orientation %d: %v, want %v", o, dst, w)
		}
	}
}

func TestOrientationParser(t *testing.T) {
	files, m := corpus(t)
	for name, data := range files {
		h, err := Probe(data)
		if err == nil && h.Orientation != max(m[name].Orient, 1) {
			t.Errorf("%s: orientation %d, Pillow %d", name, h.Orientation, m[name].Orient)
		}
	}
	if o := tiffOrientation([]byte("MM\x00*\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00")); o != 6 {
		t.Errorf("big-endian SHORT 6: %d", o)
	}
	for _, bad := range [][]byte{nil, []byte("II*\x00\xff\xff\xff\xff"), []byte("II*\x00\x08\x00\x00\x00\xff\xff")} {
		if o := tiffOrientation(bad); o != 1 {
			t.Errorf("%q: %d", bad, o)
		}
	}
}

func seeds(f *testing.F) {
	files, _ := corpus(f)
	for _, d := range files {
		f.Add(d, uint8(0), uint16(0))
	}
}

// FuzzDecode: any bytes, any options: a decode, or a CodeDecode/CodeTooLarge error; no crash, no
// other code, nothing written outside dst (the Go slice bounds and the C-side checks).
func FuzzDecode(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte, opt uint8, win uint16) {
		o := Options{Mode: Mode(opt % 3), Scale: []int{1, 2, 4, 8}[opt>>2&3], ApplyOrientation: opt&16 != 0,
			MaxPixels: 1 << 20}
		h, err := Probe(data)
		if err != nil {
			wantFuzzErr(t, err)
			return
		}
		if int64(h.Width)*int64(h.Height) > o.MaxPixels {
			err := Decode(data, o, nil, 0)
			wantFuzzErr(t, err)
			return
		}
		oh, ow, ch := OutSize(h, o)
		if win != 0 && oh > 0 && ow > 0 {
			y0, x0 := int(win>>8)%oh, int(win&0xFF)%ow
			o.Window = Window{y0, oh, x0, ow}
		}
		dst := make([]byte, oh*ow*ch+16)
		guard := bytes.Repeat([]byte{0xA5}, 16)
		copy(dst[oh*ow*ch:], guard)
		if err := Decode(data, o, dst[:oh*ow*ch], ow*ch); err != nil {
			wantFuzzErr(t, err)
		}
		if !bytes.Equal(dst[oh*ow*ch:], guard) {
			t.Fatal("wrote past dst")
		}
	})
}

func wantFuzzErr(t *testing.T, err error) {
	var e *engine.Error
	if !errors.As(err, &e) || (e.Code != engine.CodeDecode && e.Code != engine.CodeTooLarge) {
		t.Fatalf("unexpected error %v", err)
	}
}

// FuzzOrientation: the EXIF parser on any bytes (as a JPEG's APP1 and as a TIFF block).
func FuzzOrientation(f *testing.F) {
	files, _ := corpus(f)
	for _, d := range files {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if o := jpegOrientation(data); o < 1 || o > 8 {
			t.Fatal(o)
		}
		if o := tiffOrientation(data); o < 1 || o > 8 {
			t.Fatal(o)
		}
	})
}
