module github.com/goprep/goprep

go 1.26.0

tool (
	github.com/go-python/gopy
	golang.org/x/tools/cmd/goimports
)

require (
	github.com/go-python/gopy v0.5.0
	golang.org/x/net v0.61.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	// Used only under the `cuda` build tag (gomod/cuda).
	github.com/NVIDIA/go-nvml v0.13.4-1
	gorgonia.org/cu v0.9.6
)

require (
	github.com/gonuts/commander v0.1.0 // indirect
	github.com/gonuts/flag v0.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261009151841-97e8ea77aa2a // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261123191846-1e707ab9fbc2 // indirect
)
