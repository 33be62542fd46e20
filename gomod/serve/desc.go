package serve

// The service's registration without generated code: a grpc.ServiceDesc naming Triton's methods,
// each handler reading the request's bytes through rawCodec (the message stays bytes: wire.go
// parses it) and answering bytes. Methods not listed answer UNIMPLEMENTED, as grpc-go does for any
// unknown method.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// Service is the gRPC service name (protocol.SERVICE).
const Service = "inference.GRPCInferenceService"

// healthService is the standard gRPC health service, which Kubernetes' gRPC probes call: Check is
// answered here (HealthCheckRequest {1 service}, HealthCheckResponse {1 status}: SERVING 1,
// NOT_SERVING 2; an unknown service NOT_FOUND, as grpcio-health-checking answers); Watch is not served.
const healthService = "grpc.health.v1.Health"

// rawCodec passes messages through as bytes: a request arrives as *[]byte, a reply is []byte. The
// request's bytes are kept as given: grpc-go's bridge for a v1 codec (codecV0Bridge.Unmarshal,
// grpc v1.85.0 codec.go) hands Unmarshal data.Materialize(), a fresh slice nothing else holds.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case *[]byte:
		return *b, nil
	}
	return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*p = data
	return nil
}

func (rawCodec) Name() string { return "proto" }

// rpcLimitMessage is the status message of a call over MaxRPCs: grpcio's, which the Python front
// end's maximum_concurrent_rpcs answers.
const rpcLimitMessage = "Concurrent RPC limit exceeded!"

// bodyCtx is a call's context that its timer cancels when the call's message has not arrived
// within BodyTimeout; its Err is then DeadlineExceeded, which grpc-go's message read turns into
// the call's DEADLINE_EXCEEDED status (the read writes that status itself).
type bodyCtx struct {
	context.Context // cancelled by the timer, and when the stream ends
	t               *time.Timer
	late            atomic.Bool
}

func (c *bodyCtx) Err() error {
	if c.late.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

func (c *bodyCtx) Value(key any) any {
	if _, ok := key.(bodyKey); ok {
		return c
	}
	return c.Context.Value(key)
}

type bodyKey struct{}

// tap admits a call before its message is read (grpc.InTapHandle): RESOURCE_EXHAUSTED when MaxRPCs
// calls are open (the slot is freed when the call's stream ends, whatever ended it), and a timer
// that cancels the call when its message takes longer than BodyTimeout (handler stops it).
func (s *Server) tap(ctx context.Context, _ *tap.Info) (context.Context, error) {
	if s.rpcs != nil {
		select {
		case s.rpcs <- struct{}{}:
			context.AfterFunc(ctx, func() { <-s.rpcs }) // the transport cancels ctx when the stream ends
		default:
			return nil, status.Error(codes.ResourceExhausted, rpcLimitMessage)
		}
	}
	if s.cfg.BodyTimeout > 0 {
		cctx, cancel := context.WithCancel(ctx)
		b := &bodyCtx{Context: cctx}
		b.t = time.AfterFunc(time.Duration(s.cfg.BodyTimeout*float64(time.Second)), func() {
			b.late.Store(true)
			cancel()
		})
		context.AfterFunc(cctx, func() { b.t.Stop() })
		return b, nil
	}
	return ctx, nil
}

// handler adapts fn(ctx, body) to a grpc method handler; a message later than BodyTimeout is
// DEADLINE_EXCEEDED (the code the Python front end answers).
func handler(fn func(s *Server, ctx context.Context, body []byte) ([]byte, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		var body []byte
		if err := dec(&body); err != nil {
			return nil, err
		}
		if b, ok := ctx.Value(bodyKey{}).(*bodyCtx); ok && !b.t.Stop() && b.late.Load() { // arrived as the timer fired
			return nil, status.Error(codes.DeadlineExceeded, "context deadline exceeded")
		}
		rep, err := fn(srv.(*Server), ctx, body)
		if err != nil {
			return nil, err
		}
		return rep, nil
	}
}

// statics are the methods static answers.
var statics = []string{"ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata",
	"ModelConfig", "ModelStatistics", "RepositoryIndex"}

func (s *Server) desc() *grpc.ServiceDesc {
	d := &grpc.ServiceDesc{ServiceName: Service, HandlerType: (*any)(nil)}
	for _, m := range statics {
		d.Methods = append(d.Methods, grpc.MethodDesc{MethodName: m, Handler: handler(
			func(s *Server, ctx context.Context, body []byte) ([]byte, error) { return s.static(ctx, m, body) })})
	}
	d.Methods = append(d.Methods, grpc.MethodDesc{MethodName: "ModelInfer", Handler: handler(
		func(s *Server, ctx context.Context, body []byte) ([]byte, error) { return s.infer(ctx, body) })})
	return d
}

func (s *Server) healthDesc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{ServiceName: healthService, HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{{
		MethodName: "Check", Handler: handler(func(s *Server, _ context.Context, body []byte) ([]byte, error) { return s.health(body) }),
	}}}
}
