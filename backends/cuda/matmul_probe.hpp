#pragma once

#include "backends/cuda/error.hpp"
#include "backends/cuda/probe_options.hpp"
#include "backends/cuda/probe_report.hpp"

namespace vramsim::gpu {

// Runs on the first visible device: a check_n GEMM compared with the CPU
// reference, then warmup + timed iterations of an n x n fp16 GEMM (cuBLASLt,
// fp32 accumulation, tensor cores) timed with CUDA events. Errors:
// InvalidArgument, NoDevice, CorrectnessFailed, CudaFailure. Builds without
// CUDA get NoDevice ("vramsim was built without CUDA support").
// Defined in vramsim_cuda when CUDA is built, in vramsim_cuda_common otherwise.
Expected<ProbeReport> run_matmul_probe(const ProbeOptions& options);

}  // namespace vramsim::gpu
