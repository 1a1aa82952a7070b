#pragma once
// Every kind of trace event, declared once: the name a trace writes, and
// every field any writer of that kind may set (docs/trace-format.md gives
// each field's meaning; tests hold that page against this list both ways).
// The recorder takes a TraceKind, so an undeclared kind cannot be recorded;
// builds with VRAMSIM_TRACE_CHECKS (the sanitizer build) also refuse a field
// the kind does not declare. Readers (explain, critical paths, diff, the
// expectations) compare against the same enumerators.
//
// To add a kind: one X(...) line below (name, then its fields separated by
// spaces), the record call, and its row in docs/trace-format.md.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace vramsim {

// X(name, "field field ...") in the order of docs/trace-format.md.
#define VRAMSIM_TRACE_KINDS(X)                                                                                     \
  /* Run */                                                                                                         \
  X(run_started, "scenario seed policies background_jobs mode time_scale emulate_boot run_id agent_port bind "     \
                 "advertise status_port")                                                                           \
  X(demand_unplaced, "label app request forever reason")                                                            \
  X(run_ended, "events jobs_left")                                                                                  \
  /* SLURM world (backend) */                                                                                       \
  X(job_submitted, "job gpus cpus mem_per_cpu_gb time_limit queue_wait_us warm")                                    \
  X(job_rejected, "gpus cpus mem_per_cpu_gb error")                                                                 \
  X(job_started, "job host")                                                                                        \
  X(node_advertised, "job gpus resources notice script_resources host agent_pid allocation")                        \
  X(job_cancel_requested, "job reason")                                                                             \
  X(node_stop_requested, "job")                                                                                     \
  X(job_ended, "job state reason slurm_state exit_code source lookup_error")                                        \
  X(job_pending, "job reason")                                                                                      \
  X(job_submit_delayed, "wall_s failed_starts reason")                                                              \
  X(slurm_outage, "phase command error wall_s held_submissions cancels_resent")                                    \
  X(head_warning, "warning")                                                                                        \
  /* Live mode only */                                                                                              \
  X(slurm_error, "command error")                                                                                   \
  X(agent_gone, "job reason")                                                                                       \
  X(agent_refused, "peer reason")                                                                                   \
  X(replica_memory, "job replica memory bytes")                                                                     \
  X(agent_unreachable, "job error")                                                                                 \
  X(job_orphan_cancelled, "job")                                                                                    \
  X(signal, "signal count")                                                                                         \
  /* Head / Ray view */                                                                                             \
  X(node_registered, "node job ip resources devices")                                                               \
  X(node_lost, "node job reason")                                                                                   \
  X(node_unclaimed, "job ip")                                                                                       \
  X(task_placed, "label node")                                                                                      \
  X(replica_placed, "app replica node job devices num_gpus vram_mb node_vram_available_mb device_vram_booked_mb "  \
                    "device_vram_total_mb device_overbooked")                                                       \
  X(device_vram_overbooked, "node device app booked_mb total_mb")                                                   \
  X(replica_running, "app replica node")                                                                            \
  X(replica_lost, "app node")                                                                                       \
  X(replica_failed, "app replica node job device reason device_total_mb held_mb free_mb needed_mb replicas_held "  \
                    "context_mb vram_total_mb vram_booked_mb failures threshold")                                   \
  X(deployment_failed, "app failures message")                                                                      \
  X(proxy_placed, "app node job memory")                                                                            \
  X(proxy_running, "app node")                                                                                      \
  X(proxy_lost, "app node")                                                                                         \
  X(replica_start_failed, "app node error")                                                                         \
  X(call_sent, "app call replica node")                                                                             \
  X(call_failed, "app call error")                                                                                  \
  X(call_result, "app call replica ok latency_us result")                                                           \
  X(status, "source lines")                                                                                         \
  /* Apps manager */                                                                                                \
  X(deploy_requested, "app gpu_memory_mb replicas cpus num_gpus")                                                   \
  X(deploy_ignored, "app reason")                                                                                   \
  X(stop_ignored, "app reason")                                                                                     \
  X(deploy_cancelled, "app reason")                                                                                 \
  X(introspection_submitted, "app resources env_build_us")                                                          \
  X(introspection_done, "app")                                                                                      \
  X(submit_task_submitted, "app worker_start_us duration_us")                                                       \
  X(submit_task_done, "app")                                                                                        \
  X(sizing, "app branch num_gpus vram_mb vram_advertised min_gpu_total_mb warning error")                          \
  X(admission, "app admitted reason requested worker_jobs unregistered_jobs max_workers message added_back")       \
  X(replicas_submitted, "app replicas resources")                                                                   \
  X(replica_target, "app from to running ongoing_requests")                                                         \
  X(replicas_added, "app from to reason")                                                                           \
  X(serve_summary, "app arrived completed refused timed_out failed unfinished cold wait_mean_us p50_us p95_us "     \
                   "p99_us")                                                                                        \
  X(request_cold_start, "app replica arrived_us dispatched_us latency_us")                                          \
  X(replicas_removed, "app from to reason")                                                                         \
  X(app_state, "app from to reason")                                                                                \
  X(app_deleted, "app")                                                                                             \
  X(auto_redeploy, "app state attempt next_after_us")                                                               \
  /* Autoscaler and workers */                                                                                      \
  X(scale_up, "gpus cpus mem_per_cpu_gb demand worker_jobs for_installing")                                         \
  X(autoscaler_error, "error demand consecutive backoff_us")                                                        \
  X(worker_creation_failed, "job error")                                                                            \
  X(worker_joined, "job node")                                                                                      \
  X(worker_creation_cancelled, "job sbatch_in_flight")                                                              \
  X(creation_cancel_lost, "job reason")                                                                             \
  X(scale_down, "node job idle_for_us")                                                                             \
  X(graceful_stop_started, "node job")                                                                              \
  X(graceful_stop_done, "node job cancelled")                                                                       \
  X(graceful_stop_failed, "node job error")                                                                         \
  X(jobs_cancelled, "jobs by")                                                                                      \
  /* Shutdown */                                                                                                    \
  X(shutdown_started, "blocking_timeout_us")                                                                        \
  X(shutdown_plan, "return_early drain await_drain cancel_remaining jobs_listed note")                              \
  X(close_all_returned, "serve_shutdown_us ray_shutdown_us head_ray_stop_us head_exit_us")                          \
  X(shutdown_force_exit, "after_us")                                                                                \
  X(shutdown_done, "jobs_left")

enum class TraceKind : std::uint8_t {
#define VRAMSIM_TRACE_KIND_ENUM(kind, fields) kind,
  VRAMSIM_TRACE_KINDS(VRAMSIM_TRACE_KIND_ENUM)
#undef VRAMSIM_TRACE_KIND_ENUM
};

inline constexpr std::size_t kTraceKindCount = 0
#define VRAMSIM_TRACE_KIND_COUNT(kind, fields) +1
    VRAMSIM_TRACE_KINDS(VRAMSIM_TRACE_KIND_COUNT)
#undef VRAMSIM_TRACE_KIND_COUNT
    ;

// The name the trace writes ("replica_placed"). O(1).
std::string_view name(TraceKind kind);
// The kind of that name; nullopt for a name no kind declares. O(log kinds).
std::optional<TraceKind> trace_kind_named(std::string_view name);
// The fields the kind may carry, in declared order. O(1).
std::span<const std::string_view> trace_kind_fields(TraceKind kind);
// Whether `field` is one of them. O(fields of the kind).
bool trace_kind_has_field(TraceKind kind, std::string_view field);
// Every kind, in declared order.
std::span<const TraceKind> all_trace_kinds();

}  // namespace vramsim
