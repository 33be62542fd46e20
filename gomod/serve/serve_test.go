package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/goprep/goprep/gomod/engine"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// fakeHost plans a 4x4 RGB source into its CHW float32 values (no resize, scale 1, mean 0, std 1);
// block, when set, holds Plan until it is closed.
type fakeHost struct {
	block chan struct{}
	asked chan struct{}
	stats Snapshot
}

func (h *fakeHost) Plan(height, width int) (*engine.Plan, error) {
	if h.asked != nil {
		h.asked <- struct{}{}
	}
	if h.block != nil {
		<-h.block
	}
	if height != 4 || width != 4 {
		return nil, errors.New("only 4x4")
	}
	s, err := engine.ParseSpec(`{"in":{"dtype":"u8","n":0,"h":4,"w":4,"c":3,"strides":[0,12,3,1]},"pre":{"y0":0,"x0":0,"sy":1,"sx":1,"h":4,"w":4},` +
		`"resize":{"kind":"none","antialias":false,"h":4,"w":4},"canvas":{"h":4,"w":4,"top":0,"left":0,"pad":0},` +
		`"post":{"y0":0,"x0":0,"sy":1,"sx":1,"h":4,"w":4},"cmap":[0,1,2],` +
		`"norm":{"mean":[0,0,0],"std":[1,1,1],"scale":1,"dtype":"f32","layout":"CHW"}}`)
	if err != nil {
		return nil, err
	}
	return engine.NewPlan(s)
}

func (h *fakeHost) Statistics(_ context.Context, s Snapshot) ([]byte, error) {
	h.stats = s
	return []byte{}, nil
}

func (h *fakeHost) Model(batch []byte, n int) ([][]byte, error) {
	sum := make([]byte, 4*n) // per image: the sum of its tensor, FP32
	for i := range n {
		var t float32
		for k := range 48 {
			t += math.Float32frombits(binary.LittleEndian.Uint32(batch[4*(48*i+k):]))
		}
		binary.LittleEndian.PutUint32(sum[4*i:], math.Float32bits(t))
	}
	return [][]byte{sum}, nil
}

func testConfig() Config {
	c := Config{ModelName: "m", MaxBatch: 8, MaxQueue: 8, Workers: 2, DelayUS: -1, MaxPixels: 1 << 20,
		MaxRequestBytes: 1 << 20, Tensor: Output{Name: "TENSOR", Datatype: "FP32", Shape: []int64{3, 4, 4}, Itemsize: 4},
		Static: map[string][]byte{"ModelConfig": []byte("cfg")}, NotFound: "nf", Draining: "draining",
		InternalMessage: "internal", QueueMessage: "queue full", WorkersMessage: "workers full",
		HealthLive: []string{"live"}, HealthReady: []string{"ready", ""}}
	c.Outputs = []Output{c.Tensor}
	return c
}

// start runs a server on a loopback port and a client to it; the test's cleanup closes both.
func start(t *testing.T, cfg Config, h Host) (*Server, *grpc.ClientConn) {
	t.Helper()
	s, addr := serveLoopback(t, cfg, h)
	cc := dial(t, addr)
	t.Cleanup(func() { cc.Close() })
	return s, cc
}

// serveLoopback runs a server on a loopback port, drained by the test's cleanup; its address.
func serveLoopback(t *testing.T, cfg Config, h Host) (*Server, string) {
	t.Helper()
	s, err := New(cfg, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(lis)
	t.Cleanup(func() { s.Drain(time.Second) })
	return s, lis.Addr().String()
}

// dial is a raw-codec client of addr (its connection opens on the first call).
func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

func call(cc *grpc.ClientConn, method string, req []byte) ([]byte, error) {
	var rep []byte
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cc.Invoke(ctx, "/"+Service+"/"+method, req, &rep)
	return rep, err
}

// frameRequest is a ModelInferRequest of one 4x4 FRAME whose bytes are seed, seed+1, ...
func frameRequest(model string, seed byte) []byte {
	var t []byte
	t = appendString(t, 1, "FRAME")
	t = appendString(t, 2, "UINT8")
	var p []byte
	for _, d := range []uint64{4, 4, 3} {
		p = protowire.AppendVarint(p, d)
	}
	t = protowire.AppendBytes(protowire.AppendTag(t, 3, protowire.BytesType), p)
	raw := make([]byte, 48)
	for i := range raw {
		raw[i] = seed + byte(i)
	}
	var b []byte
	b = appendString(b, 1, model)
	b = protowire.AppendBytes(protowire.AppendTag(b, 5, protowire.BytesType), t)
	return protowire.AppendBytes(protowire.AppendTag(b, 7, protowire.BytesType), raw)
}

func code(err error) codes.Code { return status.Code(err) }

// checkTensor: the reply's one output is the frame's CHW float32 values.
func checkTensor(t *testing.T, rep []byte, seed byte) {
	t.Helper()
	var raw []byte
	var shape []int64
	err := fields(rep, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 5:
			return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				var err error
				if num == 3 {
					shape, err = int64s(shape, typ, v, x)
				}
				return err
			})
		case 6:
			raw = v
		}
		return nil
	})
	if err != nil || len(raw) != 192 || len(shape) != 4 || shape[0] != 1 {
		t.Fatalf("reply: err %v, %d bytes, shape %v", err, len(raw), shape)
	}
	for c := range 3 {
		for i := range 16 {
			got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(c*16+i):]))
			if want := float32(seed + byte(3*i+c)); got != want {
				t.Fatalf("element %d of channel %d: %v, want %v", i, c, got, want)
			}
		}
	}
}

func TestInferAndErrors(t *testing.T) {
	_, cc := start(t, testConfig(), &fakeHost{})
	rep, err := call(cc, "ModelInfer", frameRequest("m", 7))
	if err != nil {
		t.Fatal(err)
	}
	checkTensor(t, rep, 7)
	if _, err := call(cc, "ModelInfer", frameRequest("other", 0)); code(err) != codes.NotFound {
		t.Errorf("another model: %v", err)
	}
	if _, err := call(cc, "ModelInfer", []byte{0xff}); code(err) != codes.InvalidArgument {
		t.Errorf("malformed: %v", err)
	}
	var img []byte
	img = appendString(img, 1, "IMAGE")
	img = appendString(img, 2, "BYTES")
	img = protowire.AppendBytes(protowire.AppendTag(img, 3, protowire.BytesType), []byte{1})
	bad := appendString(nil, 1, "m")
	bad = protowire.AppendBytes(protowire.AppendTag(bad, 5, protowire.BytesType), img)
	bad = protowire.AppendBytes(protowire.AppendTag(bad, 7, protowire.BytesType), []byte{3, 0, 0, 0, 1, 2, 3})
	if _, err := call(cc, "ModelInfer", bad); code(err) != codes.InvalidArgument {
		t.Errorf("a corrupt file: %v", err)
	}
	if rep, err := call(cc, "ModelConfig", appendString(nil, 1, "m")); err != nil || string(rep) != "cfg" {
		t.Errorf("ModelConfig: %q %v", rep, err)
	}
	if _, err := call(cc, "ModelConfig", appendString(nil, 1, "x")); code(err) != codes.NotFound {
		t.Errorf("ModelConfig of another model: %v", err)
	}
	if rep, err := call(cc, "ServerReady", nil); err != nil || len(rep) != 2 {
		t.Errorf("ServerReady: %v %v", rep, err)
	}
	var rep2 []byte
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cc.Invoke(ctx, "/grpc.health.v1.Health/Check", appendString(nil, 1, "ready"), &rep2); err != nil || len(rep2) != 2 || rep2[1] != 1 {
		t.Errorf("health of ready: %v %v", rep2, err)
	}
	if err := cc.Invoke(ctx, "/grpc.health.v1.Health/Check", appendString(nil, 1, "x"), &rep2); code(err) != codes.NotFound {
		t.Errorf("health of an unknown service: %v", err)
	}
	if _, err := call(cc, "ModelStreamInfer", nil); code(err) != codes.Unimplemented {
		t.Errorf("an unserved method: %v", err)
	}
}

func TestBatching(t *testing.T) {
	cfg := testConfig()
	cfg.DelayUS = 200000 // requests within 0.2 s form one batch; 8 fill the target at once
	h := &fakeHost{}
	s, cc := start(t, cfg, h)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := call(cc, "ModelInfer", frameRequest("m", byte(10*i)))
			if err != nil {
				t.Error(err)
				return
			}
			checkTensor(t, rep, byte(10*i))
		}()
	}
	wg.Wait()
	sn := s.stats.snapshot()
	big := false
	for _, b := range sn.Batches {
		big = big || b.Size > 1
	}
	if !big || sn.InferenceCount != 8 || sn.Stages["success"].Count != 8 {
		t.Errorf("statistics: %+v", sn)
	}
}

func TestQueueLimit(t *testing.T) {
	cfg := testConfig()
	cfg.Workers, cfg.MaxQueue = 1, 0
	h := &fakeHost{block: make(chan struct{}), asked: make(chan struct{}, 4)}
	_, cc := start(t, cfg, h)
	first := make(chan error, 1)
	go func() {
		_, err := call(cc, "ModelInfer", frameRequest("m", 0))
		first <- err
	}()
	<-h.asked // the first request holds the only worker
	if _, err := call(cc, "ModelInfer", frameRequest("m", 0)); code(err) != codes.ResourceExhausted {
		t.Errorf("over the limit: %v", err)
	}
	close(h.block)
	if err := <-first; err != nil {
		t.Error(err)
	}
}

func TestDrain(t *testing.T) {
	s, cc := start(t, testConfig(), &fakeHost{})
	if _, err := call(cc, "ModelInfer", frameRequest("m", 0)); err != nil {
		t.Fatal(err)
	}
	s.Drain(time.Second)
	if _, err := call(cc, "ModelInfer", frameRequest("m", 0)); err == nil {
		t.Error("a request after the drain succeeded")
	}
}

func TestModel(t *testing.T) {
	cfg := testConfig()
	cfg.Model, cfg.Outputs = true, []Output{{Name: "SUM", Datatype: "FP32", Itemsize: 4}}
	_, cc := start(t, cfg, &fakeHost{})
	rep, err := call(cc, "ModelInfer", frameRequest("m", 1))
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	fields(rep, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		if num == 6 {
			raw = v
		}
		return nil
	})
	want := float32(0)
	for i := range 48 {
		want += float32(1 + i)
	}
	if len(raw) != 4 || math.Float32frombits(binary.LittleEndian.Uint32(raw)) != want {
		t.Errorf("the model's output: %v, want %v", raw, want)
	}
}

// A snapshot taken while requests run sees each execution with its successes: executions ==
// successes at every moment without batching (perf_analyzer compares the two across its window).
func TestStatsPairExecutionsWithSuccesses(t *testing.T) {
	s, cc := start(t, testConfig(), &fakeHost{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := call(cc, "ModelInfer", frameRequest("m", byte(g))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		sn := s.stats.snapshot()
		if sn.ExecutionCount != sn.Stages["success"].Count {
			t.Errorf("a snapshot with %d executions and %d successes", sn.ExecutionCount, sn.Stages["success"].Count)
			break
		}
	}
	close(stop)
	wg.Wait()
	if s.stats.snapshot().ExecutionCount == 0 {
		t.Error("no request ran")
	}
}
