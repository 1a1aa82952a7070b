#pragma once

// cuBLASLt loaded at run time (dlopen) rather than linked, so that a node
// without libcublasLt on the loader path still runs --detect and --peak-for
// and gets one clear line and the "no usable CUDA" status (3) from the
// probe, instead of the loader's exit 127 before main. CUDA builds only.

#include <cublasLt.h>

#include <string>
#include <vector>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu {

// The cuBLASLt entry points the probe calls.
struct CublasLtApi {
  decltype(&::cublasLtCreate) Create = nullptr;
  decltype(&::cublasLtDestroy) Destroy = nullptr;
  decltype(&::cublasLtGetStatusName) GetStatusName = nullptr;
  decltype(&::cublasLtGetStatusString) GetStatusString = nullptr;
  decltype(&::cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmul) Matmul = nullptr;
  std::string library;  // what was loaded
};

// The environment variable naming the one library to load instead (a path,
// or a soname for the loader's search); tests point it at a missing file.
inline constexpr const char* kCublasLtEnv = "VRAMSIM_CUBLASLT";

// Where the default load looks, in order: the soname of the cuBLAS major
// version the probe was compiled against (libcublasLt.so.13), through the
// loader's search path, then the same file in the build's toolkit lib
// directory; only $VRAMSIM_CUBLASLT when that is set.
std::vector<std::string> cublaslt_candidates();

// Loads the first candidate that opens and resolves every entry point. Not
// cached. NoDevice error "no usable CUDA: ..." naming what was tried and why.
Expected<CublasLtApi> load_cublaslt(const std::vector<std::string>& candidates);

// load_cublaslt(cublaslt_candidates()) once per process.
const Expected<CublasLtApi>& cublaslt();

}  // namespace vramsim::gpu
