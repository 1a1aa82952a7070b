#pragma once
// `vramsim-agent replica`: one replica process the agent hosts. It holds its
// declared memory, says "ready" on stdout, and answers calls from stdin as
// JSON Lines until stdin closes (docs/live-protocol.md, "Replicas").
#include <cstdint>
#include <string>

namespace vramsim::agent {

struct ReplicaOptions {
  std::string name = "replica";
  std::int64_t gpu_memory_mb = 0;
  int device = -1;
  std::string kind = "plain";  // "plain" or "probe"
};

int run_replica(const ReplicaOptions& options);

}  // namespace vramsim::agent
