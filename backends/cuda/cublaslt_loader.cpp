#include "backends/cuda/cublaslt_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace vramsim::gpu {

namespace {

template <class Fn>
bool resolve(void* handle, const char* symbol, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(::dlsym(handle, symbol));
  if (out == nullptr && missing.empty()) missing = symbol;
  return out != nullptr;
}

}  // namespace

std::vector<std::string> cublaslt_candidates() {
  if (const char* env = std::getenv(kCublasLtEnv); env != nullptr && *env != '\0') return {env};
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> out{soname};
#ifdef VRAMSIM_CUDA_LIBRARY_DIR
  // The toolkit the probe was built with: found even when its lib directory
  // is not on the loader's path (a toolkit outside ld.so.conf).
  out.push_back(std::string(VRAMSIM_CUDA_LIBRARY_DIR) + "/" + soname);
#endif
  return out;
}

Expected<CublasLtApi> load_cublaslt(const std::vector<std::string>& candidates) {
  std::string why;
  for (const auto& library : candidates) {
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* err = ::dlerror();
      if (why.empty()) why = err != nullptr ? err : library + ": cannot be opened";
      continue;
    }
    CublasLtApi api;
    api.library = library;
    std::string missing;
    resolve(handle, "cublasLtCreate", api.Create, missing);
    resolve(handle, "cublasLtDestroy", api.Destroy, missing);
    resolve(handle, "cublasLtGetStatusName", api.GetStatusName, missing);
    resolve(handle, "cublasLtGetStatusString", api.GetStatusString, missing);
    resolve(handle, "cublasLtMatmulDescCreate", api.MatmulDescCreate, missing);
    resolve(handle, "cublasLtMatmulDescDestroy", api.MatmulDescDestroy, missing);
    resolve(handle, "cublasLtMatmulDescSetAttribute", api.MatmulDescSetAttribute, missing);
    resolve(handle, "cublasLtMatrixLayoutCreate", api.MatrixLayoutCreate, missing);
    resolve(handle, "cublasLtMatrixLayoutDestroy", api.MatrixLayoutDestroy, missing);
    resolve(handle, "cublasLtMatmulPreferenceCreate", api.MatmulPreferenceCreate, missing);
    resolve(handle, "cublasLtMatmulPreferenceDestroy", api.MatmulPreferenceDestroy, missing);
    resolve(handle, "cublasLtMatmulPreferenceSetAttribute", api.MatmulPreferenceSetAttribute, missing);
    resolve(handle, "cublasLtMatmulAlgoGetHeuristic", api.MatmulAlgoGetHeuristic, missing);
    resolve(handle, "cublasLtMatmul", api.Matmul, missing);
    if (missing.empty()) return api;  // the handle stays open for the process
    if (why.empty()) why = library + " has no symbol " + missing;
    ::dlclose(handle);
  }
  std::string tried;
  for (const auto& c : candidates) tried += (tried.empty() ? "" : ", ") + c;
  return Error{ErrorKind::NoDevice, std::string(kNoUsableCudaPrefix) + "cuBLASLt cannot be loaded (tried " + tried +
                                        "): " + why + "; put the CUDA toolkit's lib directory on LD_LIBRARY_PATH " +
                                        "or name the library in " + kCublasLtEnv};
}

const Expected<CublasLtApi>& cublaslt() {
  static const Expected<CublasLtApi> loaded = load_cublaslt(cublaslt_candidates());
  return loaded;
}

}  // namespace vramsim::gpu
