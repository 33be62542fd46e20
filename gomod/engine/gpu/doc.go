// Package gpu is goprep's device-independent GPU side: placement and the one run path (Run, which
// also runs CPU calls on the engine's CPU backend and falls back to it on a GPU error), the cost
// model of device="auto", the circuit breaker and counters, the copy/kernel pipeline with its
// staging, device and pinned memory pools, device arrays, the simulated GPU and the test hooks.
//
// It reads plans only through package engine's exported API: the plan's GPU view (engine's
// gpu_plan.go: GPUSupported, the accessors, the lazily built row staging) and the descriptors
// (engine's gpu_desc.go: NewDeviceBatch). A device implements Device (device.go): gomod/cuda on
// the CUDA driver, sim.go in host memory for tests.
package gpu
