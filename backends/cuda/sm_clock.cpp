#include "backends/cuda/sm_clock.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "backends/cuda/probe_method.hpp"

namespace vramsim::gpu {

// The few NVML entry points used, declared here because the CUDA toolkit
// does not always ship nvml.h; their C ABI is stable across driver versions
// (nvmlReturn_t and nvmlClockType_t are C enums, NVML_SUCCESS = 0,
// NVML_CLOCK_SM = 1).
struct SmClockReader::Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*handle_by_pci_bus_id)(const char*, Device*) = nullptr;
  int (*clock_info)(Device, int, unsigned int*) = nullptr;
  void* library = nullptr;
  Device device = nullptr;
  bool initialised = false;

  ~Nvml() {
    if (initialised && shutdown != nullptr) (void)shutdown();
    if (library != nullptr) ::dlclose(library);
  }
};

namespace {
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;

template <class Fn>
bool resolve(void* library, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(library, symbol));
  return out != nullptr;
}
}  // namespace

SmClockReader::SmClockReader(std::string pci_bus_id, std::string nvidia_smi)
    : pci_bus_id_(std::move(pci_bus_id)), nvidia_smi_(std::move(nvidia_smi)), source_("nvidia-smi") {
  const char* env = std::getenv(kNvmlEnv);
  const std::string library = env != nullptr && *env != '\0' ? env : "libnvidia-ml.so.1";
  auto nvml = std::make_unique<Nvml>();
  nvml->library = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nvml->library == nullptr) {
    const char* err = ::dlerror();
    nvml_error_ = err != nullptr ? err : library + ": cannot be opened";
    return;
  }
  if (!resolve(nvml->library, "nvmlInit_v2", nvml->init) || !resolve(nvml->library, "nvmlShutdown", nvml->shutdown) ||
      !resolve(nvml->library, "nvmlDeviceGetHandleByPciBusId_v2", nvml->handle_by_pci_bus_id) ||
      !resolve(nvml->library, "nvmlDeviceGetClockInfo", nvml->clock_info)) {
    nvml_error_ = library + " lacks an NVML entry point";
    return;
  }
  if (const int rc = nvml->init(); rc != kNvmlSuccess) {
    nvml_error_ = "nvmlInit_v2 returned " + std::to_string(rc);
    return;
  }
  nvml->initialised = true;
  if (const int rc = nvml->handle_by_pci_bus_id(pci_bus_id_.c_str(), &nvml->device); rc != kNvmlSuccess) {
    nvml_error_ = "nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id_ + ") returned " + std::to_string(rc);
    return;
  }
  nvml_ = std::move(nvml);
  source_ = "nvml";
}

SmClockReader::~SmClockReader() = default;

std::optional<int> SmClockReader::read() const {
  if (nvml_) {
    unsigned int mhz = 0;
    if (nvml_->clock_info(nvml_->device, kNvmlClockSm, &mhz) == kNvmlSuccess && mhz > 0)
      return static_cast<int>(mhz);
    return std::nullopt;
  }
  return query_sm_clock_mhz(pci_bus_id_, nvidia_smi_);
}

}  // namespace vramsim::gpu
