package engine

import "testing"

func TestNearestExactAndPILRules(t *testing.T) {
	// 2 -> 7: output 3 sits exactly on the boundary (3.5 * 2/7 = 1). PyTorch rounds it up to 1; Pillow's
	// accumulated coordinate is just below 1, so it reads 0.
	if got := nearestExactTaps(2, 7).Idx; got[3] != 1 {
		t.Errorf("nearest-exact 2->7: %v", got)
	}
	if got := nearestPILTaps(2, 7).Idx; got[3] != 0 {
		t.Errorf("nearest-pil 2->7: %v", got)
	}
	// PyTorch's legacy nearest: 41 * (2/82) in float32 lands just below 1 (cv2's float64 rule reads 1),
	// and 49 * (2/98) lands on 1 where cv2's 49 * (1 / (98/2)) falls below it.
	if got := nearestTorchTaps(2, 82).Idx; got[41] != 0 || nearestTaps(2, 82).Idx[41] != 1 {
		t.Errorf("nearest-torch 2->82: %v", got[40:43])
	}
	if got := nearestTorchTaps(2, 98).Idx; got[49] != 1 || nearestTaps(2, 98).Idx[49] != 0 {
		t.Errorf("nearest-torch 2->98: %v", got[48:51])
	}
	for _, c := range []struct{ in, out int }{{512, 224}, {224, 512}, {3, 5}, {5, 3}, {1, 4}, {1920, 224}, {100, 100}} {
		tt := nearestTorchTaps(c.in, c.out)
		for o, i := range tt.Idx { // the top-left rule floor(o * in / out), within one pixel below
			want := min(int32(o*c.in/c.out), int32(c.in-1))
			if i < want-1 || i > want || o > 0 && i < tt.Idx[o-1] {
				t.Fatalf("torch %v: output %d reads %d, exact rule %d", c, o, i, want)
			}
		}
		for name, tp := range map[string]taps{"exact": nearestExactTaps(c.in, c.out), "pil": nearestPILTaps(c.in, c.out)} {
			prev := int32(-1)
			for o, i := range tp.Idx {
				// within one pixel of the exact rational rule floor((2o+1)*in / (2*out)), and monotonic
				want := min(int32((2*o+1)*c.in/(2*c.out)), int32(c.in-1))
				if i < want-1 || i > want || i < prev {
					t.Fatalf("%s %v: output %d reads %d, exact rule %d", name, c, o, i, want)
				}
				prev = i
			}
		}
	}
}
