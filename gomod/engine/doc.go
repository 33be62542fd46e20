// Package engine is goprep's validated preprocessing plan, its CPU backend (the golden reference
// every other backend is tested against) and the plan's GPU view and descriptors; the GPU runner is
// package engine/gpu.
//
// # Data flow, and the files of each step
//
// CPU path: spec → plan → rows → kernels.
//
//  1. Spec (spec.go): the call as JSON from the binding (ParseSpec), checked once by Validate;
//     errors are Codes (errors.go). Nothing after this step validates.
//  2. Plan (plan.go: NewPlan, EstimatePlan; NewPlanLike for a training batch's per-item plans,
//     which share their template's normalisation tables): the spec with every table precomputed,
//     immutable and shared by goroutines. Per axis the taps of the resize rule (resize.go: bilinear,
//     resize_cubic.go, resize_area.go, resize_nearest.go) with the view and canvas folded in; the
//     normalisation tables (normalize.go); the row kernel kind (rowKernel); the kernel set, chosen
//     once per process from the CPU's features and overrides (kernels.go, cpufeat_*.go) and
//     copied into the plan (Plan.kern). Where a plan qualifies, the tables of a fast path:
//     fastPlan (resize_fast.go: uint8 RGB bilinear, OpenCV's arithmetic) or aaPlan (resize_aa.go:
//     Pillow / PyTorch uint8 antialias; resize_aa_planar.go for planar sources, resize_aa_vnni.go
//     for aaHRowsZ's tables), or aaU8 (resize_aa_u8.go: the same arithmetic for uint8 results and
//     padded canvases the fused CHW path does not take).
//  3. Rows (cpu.go, backend.go): CPU.Run splits a call into bands of output rows over NumThreads
//     workers (a call with encoded sources, Job.Enc, gives each worker whole images instead: it
//     decodes one into its reused decode buffer, then runs the plan on it; decode_job.go, with the
//     binding's codec-backed Encoded; a staged job, Job.Stages, goes the same way and runs its
//     colour steps and next plans on the worker's scratch images: staged_job.go); worker.run picks each row's path: duoRows / fastRow (resize_fast*.go), aaRow
//     (resize_aa.go), or the general path, resizeRowU8 / resizeRowF32 (resize_cpu.go, with
//     vfirstRowU8 for Pillow's vertical-first order; premul.go for RGBA premultiplied by alpha) then
//     emitU8 / emitF32 (normalize_cpu.go; the patch layout of Qwen2-VL's rows: normalize_patch.go).
//  4. Kernels: methods of the plan's kernelSet, one stem per family (below). Every SIMD kernel equals
//     its scalar twin bit for bit, and a test proves it.
//
// Each SIMD file has a pure-Go twin of the same stem and signatures, built when the SIMD one is not
// (GOEXPERIMENT=simd off, or not amd64); arm64 has its own files (NEON assembly, kernelSet.NEON),
// which call the scalar kernels when the kernel set has no NEON (kernelOverrides.NoSIMD):
//
//   - the bilinear fast path: resize_fast_amd64.go (+ .s) / resize_fast_arm64.go (+ .s:
//     hresizeNEON, vnormNEON) / resize_fast_other.go; scalar hresizeScalar, vnormScalar, duoScalar
//     (resize_fast.go).
//   - the antialias path, horizontal pass: resize_aa_amd64.go / resize_aa_arm64.go (+ .s: aaHNEON) /
//     resize_aa_other.go; vertical pass: resize_aa_vertical_amd64.go / resize_aa_vertical_arm64.go
//     (+ .s: aaVNEON) / resize_aa_vertical_other.go; scalar aaHScalar, aaVScalar (resize_aa.go). Its
//     assembly column loops, resize_aa_avx2_amd64.{go,s} (aaHRowsY, aaVRow3Y) and
//     resize_aa_vnni_amd64.{go,s} (aaHRowsZ), are called only from the amd64 files, so they need no
//     twin.
//   - the planar antialias pass: resize_aa_planar_amd64.go / resize_aa_planar_other.go (arm64
//     too); scalar aaHPlanar.
//   - the gray antialias horizontal pass of aaU8: resize_aa_gray_amd64.go / resize_aa_gray_other.go
//     (arm64 too); scalar aaHGrayScalar.
//   - the float normalisation (emitF32, three channels): normalize_arm64.go (+ .s: normCHW3NEON,
//     normHWC3NEON) / normalize_other.go; scalar normCHW3Scalar, normHWC3Scalar (normalize_cpu.go).
//   - CPU features: cpufeat_amd64.go (+ .s) / cpufeat_arm64.go / cpufeat_other.go.
//
// The arm64 assembly writes the NEON instructions Go's assembler lacks as WORDs with their exact
// mnemonic in a comment (scripts/arm64_words.py checks them); its tests run under qemu-aarch64
// (scripts/test_arm64.sh), its instruction counts come from scripts/count_arm64_insns.sh.
//
// GPU path: plan → GPU descriptors → PTX. The runner is package engine/gpu, which imports this
// one; what it reads of a plan stays here:
//
//  1. Placement (gpu/place.go): gpu.Run decides CPU or GPU per call (ParseDevice, the cost model of
//     device="auto" in gpu/cost.go), runs CPU calls on this package's CPU backend, and falls back to
//     it on a GPU error; gpu/breaker.go keeps failing devices off for a cool-down.
//  2. The plan's GPU view (gpu_plan.go): GPUSupported, the accessors the runner reads, and the
//     GPU-only plan data (planGPU: the row staging, only the source rows the plan reads going over
//     PCIe), built on a plan's first GPU use, so a CPU-only process never builds it.
//  3. Descriptors (gpu_desc.go): NewDeviceBatch lays the plan's own tables out in the byte layout
//     of kernels/goprep.h (gp_image, gp_axis; gpu_abi.go is generated from the header by cgo
//     -godefs, gpu_abi_defs.go its input), so the GPU reads the same taps and weights as the CPU;
//     gpu_yuv.go adds a YUV plan's plane tables, coefficients and row staging.
//  4. Pipeline (gpu/pipeline.go): stage (gpu/stage.go) → copy in → fused kernel → copy out in
//     chunks over lanes, on pooled device and pinned memory (gpu/pool.go); device arrays
//     (gpu/array.go).
//  5. Device (gpu/device.go): the gpu.Device interface and registry. gomod/cuda implements it on the
//     CUDA driver, launching kernels/ptx/preprocess.ptx (generated from kernels/*.cu, embedded by
//     package kernels) by KernelName; gpu/sim.go implements it on host memory, running the same
//     kernels compiled for the CPU (package kernels/cpu, -tags cpukernel and the gpu package's
//     tests); gpu/testhooks.go holds the fault injection the tests use.
//
// Outside the plan: the training colour ops (torchvision's ColorJitter and RandomGrayscale) on one
// HWC uint8 image in place, with Pillow's numerics (color.go: ColorPIL) or torchvision's tensor
// numerics (color_tensor.go: ColorTensor; its HSV hue in color_hsv.go; float32 images in
// color_float.go: ColorTensorF32); the binding's color.go runs a batch of them. And packing a Pillow
// "RGB" image's RGBX memory into 3-byte pixels before a plan reads it (pack.go, pack_amd64.go).
//
// docs/perf/2026-12-03-engine-notes.md holds the measurements behind the kernels' choices.
package engine
