#pragma once
// The columns of the CSV files a run writes that `vramsim report` reads
// back, declared once: the writers (observers/serve_timeline.cpp,
// observers/fragmentation_csv.cpp) write these headers, and the readers
// (analysis/report_inputs.cpp, report_frag.cpp) take each column by these
// names. The status timeline's are in models/status.hpp, beside its writer.
#include <array>
#include <string_view>

namespace vramsim {

// --serve-timeline: one row per serving app per window (docs/serving.md).
namespace serve_timeline_columns {
inline constexpr std::string_view time_s = "time_s", app = "app", arrival_rate_per_s = "arrival_rate_per_s",
                                  completed = "completed", never = "never", latency_p50_s = "latency_p50_s",
                                  latency_p95_s = "latency_p95_s", latency_p99_s = "latency_p99_s",
                                  replicas = "replicas", ongoing_requests = "ongoing_requests",
                                  window_s = "window_s", slo_latency_s = "slo_latency_s";
inline constexpr std::array<std::string_view, 12> all = {
    time_s,        app,      arrival_rate_per_s, completed, never,    latency_p50_s,
    latency_p95_s, latency_p99_s, replicas,      ongoing_requests, window_s, slo_latency_s};
}  // namespace serve_timeline_columns

// --frag-csv: one row per deployed app (docs/workloads-openb.md).
namespace frag_columns {
inline constexpr std::string_view arrival = "arrival", time_s = "time_s", pod = "pod", placement = "placement",
                                  pod_gpus = "pod_gpus", arrived_gpus = "arrived_gpus",
                                  arrived_share = "arrived_share", gpus = "gpus", allocated_gpus = "allocated_gpus",
                                  unallocated_gpus = "unallocated_gpus", fragmented_gpus = "fragmented_gpus",
                                  nodes_fragmented = "nodes_fragmented",
                                  node_fragmentation_max = "node_fragmentation_max";
inline constexpr std::array<std::string_view, 13> all = {
    arrival, time_s, pod, placement, pod_gpus, arrived_gpus, arrived_share, gpus, allocated_gpus, unallocated_gpus,
    fragmented_gpus, nodes_fragmented, node_fragmentation_max};
}  // namespace frag_columns

// --frag-nodes-csv: each GPU node at the end.
namespace frag_node_columns {
inline constexpr std::array<std::string_view, 6> all = {"node", "model", "gpus", "allocated_gpus", "fragmented_gpus",
                                                        "cpus_free"};
}  // namespace frag_node_columns

}  // namespace vramsim
