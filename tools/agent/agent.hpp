#pragma once
// The node agent: connects to the head, proves the run's secret, registers
// the node's advertisement, heartbeats driver-observed GPU memory, and hosts
// replicas as child processes, all on one single-threaded io_context
// (docs/live-protocol.md).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "backends/slurm/protocol.hpp"

namespace vramsim::agent {

struct AgentOptions {
  std::string head_host;
  unsigned short head_port = 0;
  std::string run_id, job_id;
  std::string secret;  // read from --secret-file
  double heartbeat_s = 5.0;
  double connect_timeout_s = 10.0;  // retrying every 0.5 s
  // After registration, silence from the head this long (no line, the
  // head's pings included) stops the replicas and ends the agent: a head
  // that vanished without closing the connection does not keep the GPU
  // held until the job's time limit. 0: never.
  double head_timeout_s = 30.0;
  std::string nvidia_smi = "nvidia-smi";
  // CUDA_VISIBLE_DEVICES as a list (nullopt: unset): heartbeats key
  // nvidia-smi's rows by the job's CUDA ordinals with it.
  std::optional<std::vector<std::string>> visible_gpus;
  std::string self_exe;  // this binary, to start replicas
  std::size_t max_message_bytes = slurm::kDefaultMaxMessageBytes;
};

class Agent {
 public:
  Agent(boost::asio::io_context& io, AgentOptions options, slurm::AgentRegistration registration);
  ~Agent();
  // Starts connecting; run the io_context, then read exit_code().
  void start();
  int exit_code() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace vramsim::agent
