#include "tools/agent/gpu_facts.hpp"

#include <csignal>
#include <sstream>

#include "backends/cuda/gpu_detector.hpp"
#include "tools/agent/job_allocation.hpp"

namespace vramsim::agent {

GpuDetection detect_gpus(const std::string& mode, const std::string& nvidia_smi, int allocated_gpus,
                         const std::optional<std::vector<std::string>>& visible) {
  GpuDetection d;
  std::optional<gpu::Expected<gpu::GpuInventory>> result;
  std::string cuda_error;
  if (mode == "cuda" || (mode == "auto" && gpu::cuda_built_in())) {
    auto r = gpu::make_default_detector()->detect();
    if (r && !r->devices.empty()) {
      result = std::move(r);
    } else {
      cuda_error = r ? "the CUDA runtime found no device" : r.error().message;
      if (mode == "cuda") result = gpu::Expected<gpu::GpuInventory>(gpu::Error{gpu::ErrorKind::NoDevice, cuda_error});
    }
  }
  bool smi_missing = false;
  if (!result) {
    result = gpu::NvidiaSmiDetector(nvidia_smi).detect();
    smi_missing = !gpu::find_executable(nvidia_smi).has_value();
  }
  auto& facts = d.facts;
  if (*result) {
    const auto& inv = result->value();
    d.source = inv.source;
    std::vector<gpu::GpuInfo> mine = inv.devices;
    if (inv.source != "cuda-runtime") {
      if (auto positions = job_device_positions(inv.devices.size(), visible)) {
        mine.clear();
        for (int p : *positions) mine.push_back(inv.devices[static_cast<std::size_t>(p)]);
      }
    }
    for (const auto& g : mine) {
      d.devices.push_back({static_cast<int>(d.devices.size()), g.name, g.total_mb});
      facts.memory_total_mb.push_back(g.total_mb);
      if (g.mig_enabled.value_or(false)) facts.mig_enabled = true;
    }
    if (inv.devices.empty()) d.error = inv.source + " found no devices";
  } else {
    d.error = result->error().message;
    if (!cuda_error.empty()) d.error = cuda_error + "; " + d.error;
    if (smi_missing) {
      facts.nvidia_smi_present = false;
    } else {
      facts.nvidia_smi_fails = true;
    }
  }
  facts.gpus = allocated_gpus >= 0 ? allocated_gpus : static_cast<int>(d.devices.size());
  return d;
}

std::vector<slurm::DeviceUsage> parse_memory_used(const std::string& csv) {
  std::vector<slurm::DeviceUsage> out;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    auto comma = line.find(',');
    if (comma == std::string::npos) continue;
    try {
      std::size_t used = 0;
      int index = std::stoi(line.substr(0, comma), &used);
      long long mb = std::stoll(line.substr(comma + 1), &used);
      if (index < 0 || mb < 0) continue;
      out.push_back({index, static_cast<std::int64_t>(mb) << 20});
    } catch (const std::exception&) {
      continue;  // "[N/A]" and the like
    }
  }
  return out;
}

MemoryUsage::MemoryUsage(boost::asio::io_context& io, std::string nvidia_smi,
                         std::optional<std::vector<std::string>> visible)
    : nvidia_smi_(std::move(nvidia_smi)), visible_(std::move(visible)), runner_(std::make_unique<slurm::ProcessRunner>(io)) {}

void MemoryUsage::query(std::chrono::milliseconds timeout, std::function<void()> done) {
  if (!runner_) return;
  slurm::CommandSpec spec;
  spec.argv = {nvidia_smi_, kMemoryUsedQuery, kMemoryUsedFormat};
  spec.timeout = timeout;
  spec.parent_death_signal = SIGKILL;  // a killed agent leaves no query behind
  querying_ = true;
  runner_->run(std::move(spec), [this, alive = std::weak_ptr<bool>(alive_), done = std::move(done)](
                                    slurm::CommandResult r) {
    if (alive.expired() || !runner_) return;
    querying_ = false;
    // No nvidia-smi, a failing or hung one: no driver-observed figures.
    last_ = r.ok() ? usage_by_ordinal(parse_memory_used(r.out), visible_) : std::vector<slurm::DeviceUsage>{};
    done();
  });
}

void MemoryUsage::child_exited() {
  if (runner_) runner_->check_exits();
}

void MemoryUsage::stop() {
  runner_.reset();  // kills and reaps a query in flight
  querying_ = false;
}

}  // namespace vramsim::agent
