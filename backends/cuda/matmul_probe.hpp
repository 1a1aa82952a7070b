#pragma once

#include "backends/cuda/error.hpp"
#include "backends/cuda/probe_options.hpp"
#include "backends/cuda/probe_report.hpp"

namespace vramsim::gpu {

// Loads cuBLASLt (cublaslt_loader.hpp), then runs on the first visible
// device: a check_n GEMM compared with the CPU reference; then an n x n fp16
// GEMM (cuBLASLt, fp32 accumulation, tensor cores) warmed up for at least
// warmup_ms, timed with CUDA events over `samples` samples of at least
// sample_ms each (median and spread reported, with the SM clock read inside
// each sample, sm_clock.hpp); finally sampled rows and columns of the timed
// output are checked against a CPU dot product. Errors: InvalidArgument,
// NoDevice (also for a missing cuBLASLt), OutOfMemory, CorrectnessFailed,
// CudaFailure. Builds without CUDA get NoDevice ("vramsim was built without
// CUDA support").
// Defined in vramsim_cuda when CUDA is built, in vramsim_cuda_common otherwise.
Expected<ProbeReport> run_matmul_probe(const ProbeOptions& options);

}  // namespace vramsim::gpu
