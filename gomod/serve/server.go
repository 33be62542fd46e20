// Package serve is goprep serve's Go front end (--frontend go): a grpc-go server for Triton's
// inference.GRPCInferenceService, registered with a hand-written ServiceDesc and a raw-bytes codec
// (no generated code; wire.go reads and writes the messages), whose ModelInfer requests are
// decoded and preprocessed here (exec.go), batched dynamically (batch.go), with no Python on the
// request path. Python (python/goprep/_serve/gofront.py) supplies what it alone defines: the bytes
// of the static replies (ServerMetadata, ModelMetadata, ModelConfig, RepositoryIndex), serialized
// once at start-up by the builders the Python server uses; the preprocessing plan of each image
// size (Host.Plan: its tracer); and the ModelStatistics message built from Go's counters.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/goprep/goprep/gomod/engine"
	"golang.org/x/net/netutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// Output is one tensor per image: the preprocessed image, or one of the model's outputs.
type Output struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"` // FP32
	Shape    []int64 `json:"shape"`    // without the batch dimension
	Itemsize int     `json:"itemsize"` // bytes per element
}

func (o Output) itemBytes() int {
	n := o.Itemsize
	for _, d := range o.Shape {
		n *= int(d)
	}
	return n
}

// Config is what Python's argument parsing and start-up decided (gofront.py writes it as JSON).
type Config struct {
	ModelName       string            `json:"model_name"`
	MaxBatch        int               `json:"max_batch"`
	MaxQueue        int               `json:"max_queue"`
	Workers         int               `json:"workers"`
	DelayUS         int64             `json:"delay_us"` // < 0: no dynamic batching
	Preferred       []int             `json:"preferred"`
	MaxPixels       int64             `json:"max_pixels"`
	MaxRequestBytes int               `json:"max_request_bytes"`
	MaxStreams      uint32            `json:"max_streams"`
	MaxRPCs         int               `json:"max_concurrent_rpcs"` // calls open at once, every method; 0: no limit
	MaxConnections  int               `json:"max_connections"`     // connections accepted at once; 0: no limit
	BodyTimeout     float64           `json:"body_timeout"`        // seconds for a handshake, and a call's message, to arrive; 0: none
	Tensor          Output            `json:"tensor"`              // the preprocessing's result per image
	Model           bool              `json:"model"`               // Python runs the model on each batch (Host.Model)
	Outputs         []Output          `json:"outputs"`             // the reply's tensors: Tensor itself without a model
	Static          map[string][]byte `json:"static"`              // reply bytes by name (base64 in JSON)
	NotFound        string            `json:"not_found"`
	Draining        string            `json:"draining"`
	InternalMessage string            `json:"internal"`
	QueueMessage    string            `json:"queue_message"`   // batching: the queue is full
	WorkersMessage  string            `json:"workers_message"` // no batching: every worker and queue slot taken
	HealthLive      []string          `json:"health_live"`     // health services SERVING while the process serves
	HealthReady     []string          `json:"health_ready"`    // health services SERVING until the drain
}

// Host is what the front end asks of Python.
type Host interface {
	Plan(h, w int) (*engine.Plan, error)
	// Statistics is the ModelStatistics message of s; it gives up when ctx (the call's) ends.
	Statistics(ctx context.Context, s Snapshot) ([]byte, error)
	// Model runs the model on the n preprocessed images in batch (n rows of Tensor) and returns
	// each of Outputs' n rows, in order. batch is only read during the call, unless the error is
	// ErrStopped: then the host may still be reading it, and the caller must not reuse it.
	Model(batch []byte, n int) ([][]byte, error)
}

// ErrStopped is a host's answer to a question left unanswered at the front end's stop.
var ErrStopped = errors.New("the server is stopping")

// Server is one running front end.
type Server struct {
	cfg  Config
	host Host
	grpc *grpc.Server

	mu       sync.Mutex
	queue    []*pending
	waiting  int // images in queue
	working  int // admitted requests not yet answered
	draining bool
	idle     chan struct{} // closed when working drops to 0 while draining

	signal  chan struct{}
	free    chan struct{} // a slot per running execution (Workers)
	decodes chan struct{} // a slot per image being decoded and preprocessed (the engine's threads)
	rpcs    chan struct{} // a slot per open call (MaxRPCs; nil: no limit)
	stop    context.CancelFunc

	planMu sync.Mutex
	plans  map[[2]int]*planEntry
	stats  stats
	logger *log.Logger
}

// New checks cfg and builds a server, not yet listening; its batcher (when batching is on) runs
// until Drain.
func New(cfg Config, host Host, logger *log.Logger) (*Server, error) {
	if cfg.MaxBatch < 1 || cfg.Workers < 1 || cfg.MaxQueue < 0 || cfg.MaxPixels < 1 || cfg.Tensor.itemBytes() < 1 || len(cfg.Outputs) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "bad front-end configuration %+v", cfg)
	}
	s := &Server{cfg: cfg, host: host, signal: make(chan struct{}, 1), free: make(chan struct{}, cfg.Workers),
		plans: map[[2]int]*planEntry{}, logger: logger,
		decodes: make(chan struct{}, max(1, engine.NumThreads()))}
	opts := []grpc.ServerOption{
		grpc.ForceServerCodec(rawCodec{}),
		grpc.MaxRecvMsgSize(cfg.MaxRequestBytes),
		grpc.MaxSendMsgSize(1 << 30),
	}
	if cfg.MaxStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(cfg.MaxStreams))
	}
	if cfg.MaxRPCs > 0 {
		s.rpcs = make(chan struct{}, cfg.MaxRPCs)
	}
	if cfg.BodyTimeout > 0 { // the HTTP/2 handshake as the Python front end bounds it: at least a second
		opts = append(opts, grpc.ConnectionTimeout(max(time.Duration(cfg.BodyTimeout*float64(time.Second)), time.Second)))
	}
	opts = append(opts, grpc.InTapHandle(s.tap))
	s.grpc = grpc.NewServer(opts...)
	s.grpc.RegisterService(s.desc(), s)
	s.grpc.RegisterService(s.healthDesc(), s)
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop // set before any other goroutine sees s: Drain reads it
	if cfg.DelayUS >= 0 {
		go s.batcher(ctx)
	}
	return s, nil
}

func (s *Server) logf(format string, a ...any) {
	if s.logger != nil {
		s.logger.Printf(format, a...)
	}
}

// Serve answers calls on lis until Drain (at once if Drain came first), accepting at most
// MaxConnections connections at once (more wait in the listen backlog).
func (s *Server) Serve(lis net.Listener) error {
	if s.cfg.MaxConnections > 0 {
		lis = netutil.LimitListener(lis, s.cfg.MaxConnections)
	}
	return s.grpc.Serve(lis)
}

// Drain refuses new requests (UNAVAILABLE, not ready), runs what waits at once, waits up to grace
// for the admitted requests to be answered, then stops the gRPC server (in-flight calls get a
// second to finish their replies) and the batcher.
func (s *Server) Drain(grace time.Duration) {
	s.mu.Lock()
	s.draining = true
	var idle chan struct{}
	if s.working > 0 {
		if s.idle == nil { // a second Drain waits on the first's channel
			s.idle = make(chan struct{})
		}
		idle = s.idle
	}
	s.wake()
	s.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-time.After(grace):
			s.logf("requests still running after the %v grace period", grace)
		}
	}
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		s.grpc.Stop()
	}
	s.stop()
}

// infer answers one ModelInfer call.
func (s *Server) infer(ctx context.Context, body []byte) ([]byte, error) {
	arrived := time.Now()
	r, err := parseInfer(body, parseLimits{maxBatch: s.cfg.MaxBatch, outputs: len(s.cfg.Outputs)})
	if err != nil {
		return nil, err
	}
	mine := r.model == s.cfg.ModelName && (r.version == "" || r.version == "1")
	rep, err := s.admitted(ctx, r, arrived)
	if mine && err != nil {
		s.stats.failed(arrived, time.Now())
	}
	return rep, err
}

func (s *Server) admitted(ctx context.Context, r *inferReq, arrived time.Time) ([]byte, error) {
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	if draining {
		return nil, status.Error(codes.Unavailable, s.cfg.Draining)
	}
	q, err := s.check(r)
	if err != nil {
		return nil, err
	}
	p := &pending{req: q, arrived: arrived, done: make(chan result, 1)}
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		return nil, status.Error(codes.Unavailable, s.cfg.Draining)
	}
	batching := s.cfg.DelayUS >= 0
	if !batching && s.working >= s.cfg.Workers+s.cfg.MaxQueue {
		s.mu.Unlock()
		return nil, status.Error(codes.ResourceExhausted, s.cfg.WorkersMessage)
	}
	s.working++
	s.mu.Unlock()
	defer s.done()
	if batching {
		if !s.enqueue(p) {
			return nil, status.Error(codes.ResourceExhausted, s.cfg.QueueMessage)
		}
	} else {
		select {
		case s.free <- struct{}{}:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		go func() {
			defer func() { <-s.free }()
			s.execute([]*pending{p})
		}()
	}
	select {
	case res := <-p.done:
		if res.err != nil {
			return nil, res.err
		}
		return res.reply, nil // counted a success by execute, with its execution
	case <-ctx.Done():
		s.leave(p)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// done marks an admitted request answered.
func (s *Server) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.working--
	if s.working == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// static answers the metadata calls: the bytes Python serialized, or a status.
func (s *Server) static(ctx context.Context, method string, body []byte) ([]byte, error) {
	served := func(name, version string) bool {
		return name == s.cfg.ModelName && (version == "" || version == "1")
	}
	draining := s.isDraining()
	switch method {
	case "ServerLive":
		return boolReply(true), nil
	case "ServerReady":
		return boolReply(!draining), nil
	case "ServerMetadata":
		return s.cfg.Static["ServerMetadata"], nil
	case "RepositoryIndex":
		repo, ready, err := repoRequest(body)
		if err != nil {
			return nil, malformed("RepositoryIndexRequest", err)
		}
		if repo != "" {
			return nil, status.Errorf(codes.NotFound, "this server has one unnamed repository, not %s", pyRepr(repo))
		}
		switch {
		case !draining:
			return s.cfg.Static["RepositoryIndex"], nil
		case ready:
			return s.cfg.Static["RepositoryIndexDrainingReady"], nil
		}
		return s.cfg.Static["RepositoryIndexDraining"], nil
	}
	name, version, err := nameVersion(body)
	if err != nil {
		return nil, malformed(method+"Request", err)
	}
	switch method {
	case "ModelReady":
		return boolReply(served(name, version) && !draining), nil
	case "ModelStatistics":
		if (name != "" || version != "") && !served(name, version) {
			return nil, status.Error(codes.NotFound, s.cfg.NotFound)
		}
		b, err := s.host.Statistics(ctx, s.stats.snapshot())
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if err != nil {
			s.logf("ModelStatistics failed: %v", err)
			return nil, status.Error(codes.Internal, s.cfg.InternalMessage)
		}
		return b, nil
	}
	if !served(name, version) {
		return nil, status.Error(codes.NotFound, s.cfg.NotFound)
	}
	return s.cfg.Static[method], nil // ModelMetadata, ModelConfig
}

// health answers grpc.health.v1.Health/Check (desc.go).
func (s *Server) health(body []byte) ([]byte, error) {
	var name string
	err := fields(body, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		if num == 1 {
			name = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, malformed("HealthCheckRequest", err)
	}
	st := uint64(0)
	switch {
	case slices.Contains(s.cfg.HealthLive, name):
		st = 1
	case slices.Contains(s.cfg.HealthReady, name):
		st = 1
		if s.isDraining() {
			st = 2
		}
	default:
		return nil, status.Error(codes.NotFound, "unknown service")
	}
	return protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), st), nil
}

func malformed(what string, err error) error {
	return status.Errorf(codes.InvalidArgument, "the request is not a valid %s message: %v", what, err)
}

// ParseConfig reads the JSON Config gofront.py writes.
func ParseConfig(text string) (Config, error) {
	var c Config
	err := json.Unmarshal([]byte(text), &c)
	return c, err
}
