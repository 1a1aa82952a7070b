#pragma once
// The agent's GPU facts: detection turned into the NodeGpuFacts the
// advertisement models read and the devices it reports at registration, and
// the driver-observed memory its heartbeats carry.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "backends/slurm/process_runner.hpp"
#include "backends/slurm/protocol.hpp"
#include "models/advertisement.hpp"

namespace vramsim::agent {

struct GpuDetection {
  NodeGpuFacts facts;
  std::vector<slurm::AgentDevice> devices;
  std::string source;  // "cuda-runtime", "nvidia-smi" or "" when both failed
  std::string error;   // the detection error, "" when it worked
};

// mode: "auto" (CUDA runtime when built in, nvidia-smi when it finds no
// device), "cuda" or "nvidia-smi". allocated_gpus < 0: the detected count.
// `visible` (CUDA_VISIBLE_DEVICES as a list): nvidia-smi lists every GPU of
// the node, so its rows are narrowed to the job's, in CUDA order; the CUDA
// runtime sees only those already. Devices are indexed by CUDA ordinal.
GpuDetection detect_gpus(const std::string& mode, const std::string& nvidia_smi, int allocated_gpus,
                         const std::optional<std::vector<std::string>>& visible);

// Parses "index, memory.used" lines (MiB) of nvidia-smi's
// --query-gpu=index,memory.used --format=csv,noheader,nounits; lines that do
// not parse are skipped.
std::vector<slurm::DeviceUsage> parse_memory_used(const std::string& csv);
inline constexpr const char* kMemoryUsedQuery = "--query-gpu=index,memory.used";
inline constexpr const char* kMemoryUsedFormat = "--format=csv,noheader,nounits";

// nvidia-smi's memory.used per device, one query at a time on the agent's
// loop. A query that fails, or is killed at its timeout, leaves no figures:
// a heartbeat then carries none rather than stale ones.
class MemoryUsage {
 public:
  // Rows are re-keyed by the job's CUDA ordinals (usage_by_ordinal).
  MemoryUsage(boost::asio::io_context& io, std::string nvidia_smi, std::optional<std::vector<std::string>> visible);
  bool querying() const { return querying_; }
  // Starts a query; `done` runs on the loop when it ended and last() is
  // updated (also when nvidia-smi is missing), unless stop() came first.
  void query(std::chrono::milliseconds timeout, std::function<void()> done);
  const std::vector<slurm::DeviceUsage>& last() const { return last_; }
  // Kills a running query (its `done` is not called) and starts no more.
  void stop();
  // On SIGCHLD: sees a query's exit at once, not at the runner's next poll.
  void child_exited();

 private:
  std::string nvidia_smi_;
  std::optional<std::vector<std::string>> visible_;
  std::unique_ptr<slurm::ProcessRunner> runner_;
  std::vector<slurm::DeviceUsage> last_;
  bool querying_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace vramsim::agent
