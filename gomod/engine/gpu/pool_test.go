package gpu

import "testing"

// The device pool never caches more than its limit, whatever sizes come and go (as varying input
// shapes give), and trimming it frees every allocation.
func TestDevicePoolIsBounded(t *testing.T) {
	sim := useSim(t)
	d := state.devices[0]
	d.mem.limit = 8 << 20
	t.Cleanup(func() { d.mem.limit = gpuPoolBytes })
	var live []devBuf
	for i := 1; i <= 40; i++ {
		b, err := d.mem.get(i * 700_000) // many different sizes, as varying input shapes give
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, b)
		if i%4 == 0 {
			for _, b := range live {
				d.mem.release(b)
			}
			live = live[:0]
		}
		if c, _ := d.mem.usage(); c > 8<<20 {
			t.Fatalf("pool caches %d bytes, limit %d", c, 8<<20)
		}
	}
	for _, b := range live {
		d.mem.release(b)
	}
	d.mem.trim(0)
	if c, u := d.mem.usage(); c != 0 || u != 0 || sim.allocated() != 0 {
		t.Fatalf("cached %d in use %d allocations %d", c, u, sim.allocated())
	}
}
