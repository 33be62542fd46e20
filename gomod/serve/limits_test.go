package serve

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// openCall starts a ModelInfer call whose message never comes (the client sends headers only).
func openCall(t *testing.T, cc *grpc.ClientConn) (grpc.ClientStream, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	st, err := cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, "/"+Service+"/ModelInfer")
	if err != nil {
		t.Fatal(err)
	}
	return st, cancel
}

// until retries f (a freed slot is released when the server's stream ends, just after the client
// has its answer) for up to 10 s; f's last error otherwise.
func until(f func() error) (err error) {
	for range 200 {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// --max-concurrent-rpcs: a call over the limit is RESOURCE_EXHAUSTED with grpcio's message before
// its message is read; the slot comes back when a call ends.
func TestConcurrentRPCLimit(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRPCs = 1
	_, cc := start(t, cfg, &fakeHost{})
	st, cancel := openCall(t, cc)
	_ = st
	_, err := call(cc, "ServerLive", nil)
	if code(err) != codes.ResourceExhausted || status.Convert(err).Message() != rpcLimitMessage {
		t.Fatalf("a call over the limit: %v", err)
	}
	cancel()
	if err := until(func() error { _, err := call(cc, "ServerLive", nil); return err }); err != nil {
		t.Errorf("after the open call ended: %v", err)
	}
}

// --body-timeout: a call whose message does not arrive in time is DEADLINE_EXCEEDED, as the Python
// front end answers it; one whose message arrives is served, its handler not cut off.
func TestBodyTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.BodyTimeout = 0.2
	_, cc := start(t, cfg, &fakeHost{})
	st, cancel := openCall(t, cc)
	defer cancel()
	var rep []byte
	err := st.RecvMsg(&rep)
	if code(err) != codes.DeadlineExceeded {
		t.Errorf("a message that never came: %v", err)
	}
	if rep, err := call(cc, "ModelInfer", frameRequest("m", 3)); err != nil { // one in time is served
		t.Error(err)
	} else {
		checkTensor(t, rep, 3)
	}
}

// --max-connections: a connection over the limit is not accepted until another closes.
func TestConnectionLimit(t *testing.T) {
	cfg := testConfig()
	cfg.MaxConnections = 1
	_, addr := serveLoopback(t, cfg, &fakeHost{})
	first, second := dial(t, addr), dial(t, addr)
	defer second.Close()
	if _, err := call(first, "ServerLive", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var rep []byte
	if err := second.Invoke(ctx, "/"+Service+"/ServerLive", []byte{}, &rep); code(err) != codes.DeadlineExceeded {
		t.Fatalf("a second connection: %v, want it held (DEADLINE_EXCEEDED)", err)
	}
	first.Close()
	if err := until(func() error { _, err := call(second, "ServerLive", nil); return err }); err != nil {
		t.Errorf("after the first connection closed: %v", err)
	}
}
