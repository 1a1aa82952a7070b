#pragma once

// Reads a device's current SM clock for the probe's report: through NVML
// (libnvidia-ml.so.1, loaded at run time, part of the driver), which answers
// in microseconds, else through nvidia-smi, which takes a process start. The
// probe keeps a reading only when it fell inside a timed sample
// (clock_reading_inside), so the clock reported is the one the work ran at.

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vramsim::gpu {

// The environment variable naming the NVML library to load instead of
// libnvidia-ml.so.1 (a path or soname); tests point it at a missing file.
inline constexpr const char* kNvmlEnv = "VRAMSIM_NVML";

class SmClockReader {
 public:
  // `pci_bus_id` as cudaDeviceGetPCIBusId gives it ("0000:17:00.0").
  // `nvidia_smi` is the fallback program (PATH lookup unless it has a '/').
  explicit SmClockReader(std::string pci_bus_id, std::string nvidia_smi = "nvidia-smi");
  ~SmClockReader();
  SmClockReader(const SmClockReader&) = delete;
  SmClockReader& operator=(const SmClockReader&) = delete;

  // The current SM clock in MHz; nullopt when neither source can tell.
  std::optional<int> read() const;
  // "nvml" when NVML found the device, else "nvidia-smi".
  const std::string& source() const { return source_; }
  // Why NVML is not used ("" when it is): the load or lookup failure.
  const std::string& nvml_error() const { return nvml_error_; }

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string pci_bus_id_;
  std::string nvidia_smi_;
  std::string source_;
  std::string nvml_error_;
};

// A clock reading describes the timed work only when the work had started
// before the reading began and had not finished when it returned.
inline bool clock_reading_inside(bool started_before_read, bool finished_before_read_returned) {
  return started_before_read && !finished_before_read_returned;
}

}  // namespace vramsim::gpu
