#pragma once
// Cluster status as the operator's status tool reports it (reference-semantics
// section 7): per alive node and rolled up over the cluster, with three GPU
// quantities kept apart because they answer different questions:
//   *_gpu        device fraction booked by the scheduler (Ray's GPU resource)
//   *_vram_mb    VRAM booked through the node-level VRAM_MB resource
//   *_gpu_memory memory the driver observes, in bytes, or "NA"
// The JSON layout, the CLI line and the CSV timeline are described in
// docs/status.md.
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cluster_state.hpp"
#include "models/pending.hpp"
#include "engine/time.hpp"
#include "engine/trace.hpp"

namespace vramsim {

struct StatusOptions {
  bool slurm_mode = true;                   // adds cluster.pending_resources
  Duration observed_max_age = 30 * kSecond; // older driver samples read as "NA"
  // Leaves the head out of nodes and rollup, as the real status does in
  // SLURM mode (where the head runs no work).
  bool exclude_head_node = false;
  // Which actors pending_resources lists (models/pending.hpp); null: the
  // default variant, as BioEngine lists them.
  std::shared_ptr<const PendingPolicy> pending = nullptr;
};

// {"nodes": {<node id>: {...}, ...}, "cluster": {...}}; alive nodes only, in
// registration order.
Json get_cluster_state(const ClusterState& cluster, SimTime now, const StatusOptions& opts = {});

// One CLI line per node of `state["nodes"]`, in the order given, as
// `bioengine cluster status` prints it (docs/status.md).
std::vector<std::string> format_status_lines(const Json& state);

// The CLI's whole text: a blank line, the cluster line, a blank line, then
// "GPU nodes:" and "CPU-only nodes:" sections (cli/cluster.py@1725d5c).
std::vector<std::string> format_status_text(const Json& state);

// One line on the cluster's booked VRAM that never presents an untracked 0 as
// free capacity.
std::string vram_summary(const Json& state);

// Timeline CSV (--status-every): one row per node per sample, these
// columns, which `vramsim report` reads back by name.
namespace status_timeline_columns {
inline constexpr std::string_view time_s = "time_s", node = "node", used_gpu = "used_gpu",
                                  used_vram_mb = "used_vram_mb", total_vram_mb = "total_vram_mb",
                                  used_cpu = "used_cpu";
inline constexpr std::array<std::string_view, 6> all = {time_s, node, used_gpu, used_vram_mb, total_vram_mb, used_cpu};
}  // namespace status_timeline_columns
std::string status_csv_header();  // the columns' header line
std::vector<std::string> status_csv_rows(const Json& state, SimTime now);

}  // namespace vramsim
