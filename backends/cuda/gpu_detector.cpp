#include "backends/cuda/gpu_detector.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "engine/text.hpp"

#if VRAMSIM_CUDA_ENABLED
#include "backends/cuda/cuda_runtime_detector.hpp"
#endif

namespace vramsim::gpu {

namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

// nvidia-smi exit statuses that mean "no usable GPU here" rather than a bad
// query: 6 no devices found, 9 driver not loaded, 12 NVML library missing,
// 15 GPU fell off the bus.
bool means_no_device(int status) { return status == 6 || status == 9 || status == 12 || status == 15; }

}  // namespace

std::optional<std::string> find_executable(std::string_view program) {
  if (program.empty()) return std::nullopt;
  const std::string prog(program);
  if (prog.find('/') != std::string::npos) {
    if (is_executable_file(prog)) return prog;
    return std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env != nullptr ? path_env : "";
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    // POSIX: an empty entry is the current directory. (Built as one
    // expression: assigning "." to the empty substring trips GCC 12's
    // -Wrestrict false positive at -O3.)
    const std::string candidate = (end == start ? std::string(".") : path.substr(start, end - start)) + "/" + prog;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

NvidiaSmiDetector::NvidiaSmiDetector(std::string program) : program_(std::move(program)) {}

Expected<GpuInventory> NvidiaSmiDetector::detect() const {
  const auto exe = find_executable(program_);
  if (!exe) {
    return no_device_error(program_ + (program_.find('/') != std::string::npos
                                           ? " is not an executable file"
                                           : " not found on PATH"));
  }
  // stderr is dropped so warnings cannot corrupt the CSV; nvidia-smi prints
  // its failure reasons on stdout.
  const std::string command = shell_quote(*exe) + " " + kNvidiaSmiQueryArgs + " 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return Error{ErrorKind::DetectionFailed, "could not start " + *exe};
  }
  std::string output;
  char buf[4096];
  std::size_t got = 0;
  constexpr std::size_t kMaxOutput = 1 << 20;
  while ((got = std::fread(buf, 1, sizeof buf, pipe)) > 0) {
    if (output.size() < kMaxOutput) output.append(buf, got);
  }
  const int status = ::pclose(pipe);
  if (status == -1) {
    return Error{ErrorKind::DetectionFailed, "could not collect the exit status of " + *exe};
  }
  if (WIFSIGNALED(status)) {
    return Error{ErrorKind::DetectionFailed,
                 *exe + " was killed by signal " + std::to_string(WTERMSIG(status))};
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    const std::string line = first_line(output, 200);
    const std::string what =
        "nvidia-smi exited with status " + std::to_string(code) + ": " + (line.empty() ? "(no output)" : line);
    if (means_no_device(code)) return no_device_error(what);
    return Error{ErrorKind::DetectionFailed, what};
  }
  return parse_nvidia_smi_csv(output);
}

bool cuda_built_in() { return VRAMSIM_CUDA_ENABLED != 0; }

std::unique_ptr<GpuDetector> make_default_detector() {
#if VRAMSIM_CUDA_ENABLED
  return std::make_unique<CudaRuntimeDetector>();
#else
  return std::make_unique<NvidiaSmiDetector>();
#endif
}

}  // namespace vramsim::gpu
