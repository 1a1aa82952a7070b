#pragma once
// A scenario: the cluster, the apps, timed actions and the expectations that
// make it an executable regression test. The format is documented field by
// field in docs/scenario-format.md.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/trace.hpp"
#include "models/worker_defaults.hpp"
#include "scenario/app_spec.hpp"
#include "scenario/cluster_spec.hpp"
#include "scenario/control_config.hpp"
#include "workload/traffic.hpp"

namespace vramsim {

// Bad input: names the file, the JSON path of the field and what was expected.
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, std::string path, std::string problem)
      : std::runtime_error(file + ": " + path + ": " + problem), file_(std::move(file)),
        path_(std::move(path)), problem_(std::move(problem)) {}
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_, path_, problem_;
};

// The range of every numeric scenario field (docs/scenario-format.md). They
// are checked before any arithmetic, keep every sum of times and bytes far
// from overflow, and bound a run: at most horizon / period wake-ups of each
// periodic loop.
namespace limits {
constexpr std::size_t kMaxFileBytes = 16 << 20;        // a scenario file
constexpr int kMaxDepth = 64;                          // JSON nesting
constexpr Duration kMaxDuration = 365 * 24 * kHour;    // any duration field
constexpr Duration kMaxHorizon = 30 * 24 * kHour;
constexpr Duration kMinPeriod = kSecond;               // tick, creation_poll, --status-every
constexpr std::int64_t kMaxNodes = 65536;              // partition nodes in all
constexpr std::int64_t kMaxWorkers = 65536;            // min/max/initial workers
constexpr std::int64_t kMaxCpus = 4096;                // per node, job or replica
constexpr std::int64_t kMaxGpus = 64;                  // per node or job
constexpr std::int64_t kMaxMemoryGb = 1 << 20;         // per node (1 PiB)
constexpr std::int64_t kMaxMemPerCpuGb = 1 << 16;
constexpr std::int64_t kMaxVramMb = 1 << 20;           // gpu_memory_mb, observed_vram_mb
constexpr std::int64_t kMaxCudaContextMb = 65536;      // cuda_context_mb
constexpr std::int64_t kMaxMemoryMb = 1 << 24;         // host memory per replica (16 TiB)
constexpr std::int64_t kMaxReplicas = 100000;
constexpr std::int64_t kMaxBackgroundJobs = 10000000;   // background trace jobs
constexpr std::int64_t kMaxTraceSeconds = 10LL * 366 * 24 * 3600;  // trace times (ten years)
constexpr double kMaxSigma = 10;                       // lognormal spread
constexpr Duration kMaxShutdownTimeout = 3600 * kSecond;  // a blocking stop's graceful_shutdown_timeout
}  // namespace limits

struct GpuModelInfo {
  std::string device_name;       // "NVIDIA A100-SXM4-40GB"
  std::string accelerator_type;  // "A100"
  std::int64_t memory_mb = 0;    // nvidia-smi memory.total
  std::int64_t cuda_total_mb = 0;  // what CUDA can give (GpuModel::cuda_total_mb)
};
// The known GPU models, by the short name scenarios use ("A100-SXM4-40GB").
const std::map<std::string, GpuModelInfo>& gpu_catalogue();
// Ray's accelerator type for an nvidia-smi device name.
std::string ray_accelerator_type(const std::string& device_name);

struct HeadSpec {
  std::string ip = "10.0.0.254";
  int cpus = 0;           // 0: the head runs no tasks (the usual SLURM setup)
  // Ray's memory resource on the head: BioEngine's `ray start --head` passes
  // --memory only with head_memory_in_gb (ray_cluster.py:780-785@fba5ffe),
  // so Ray takes 70% of the host's available memory (resource_and_label_spec.py
  // :374-398@5866967ffd). 16 GB is an assumption (about 23 GB available);
  // it holds the apps' proxy replicas (32 of 0.5 GiB).
  std::int64_t memory_gb = 16;
  int gpus = 0;
  std::string gpu;        // catalogue name when gpus > 0
  bool mig_enabled = false;  // MIG on the head's GPU: the head's detection does not look
};

// What an action does (`do` in the file).
enum class ActionKind { Deploy, Stop, Delete, Shutdown, Status, Call };
// The word a scenario writes: "deploy", "stop", ...
const char* name(ActionKind kind);
// The action of that word; nullopt for none.
std::optional<ActionKind> action_kind_named(const std::string& word);

struct ScenarioAction {
  SimTime at = 0;
  ActionKind kind = ActionKind::Deploy;
  std::string app;
  std::optional<AppSpec> app_override;  // deploy with a changed spec
  Json expect = Json::object();         // status: JSON path -> expected value
  Json payload = Json::object();        // call: the request sent to a replica
  // shutdown with "blocking": true: the worker's graceful_shutdown_timeout,
  // after which the process force-exits; none: the signal path.
  std::optional<Duration> blocking_timeout;
  std::string json_path;                // where the action sits, for messages
};

// An event kind and the fields it must carry (a subset match).
struct EventPattern {
  TraceKind event = TraceKind::run_started;
  Json match = Json::object();
};

// One entry of $.expect, type-checked at load. Exactly one kind; each kind
// checks at least one thing (docs/scenario-format.md, "expect").
struct Expectation {
  enum class Kind { App, Event, Metric, Invariant, StatusLine };
  Kind kind = Kind::App;
  std::string json_path;  // "$.expect[2]"
  std::string name;       // optional label printed with the result
  std::optional<Duration> within;

  // App: the app's state (reached within `within` of its first deploy
  // request, and/or held at the end), admission, message, reservation.
  std::string app;
  std::optional<std::string> state;
  bool at_end = false;
  std::optional<bool> admitted;
  std::optional<std::string> message, message_contains;
  std::optional<Json> reservation;

  // Event: how many events match, counted from the run start (up to
  // `within`), after the first `after` event (up to `within` later), or
  // before the first `before` event.
  EventPattern pattern;
  std::optional<EventPattern> after, before;
  std::int64_t min_count = 1, max_count = INT64_MAX;

  // Metric: a run metric compared with equals/min/max.
  std::string metric;
  std::optional<double> equals, min, max;

  // Invariant: checked at every trace event of the run. max_worker_jobs uses
  // `max` as the bound.
  std::string invariant;

  // Status line: the CLI status line of `node` at time `at` contains the text.
  std::string node, contains;
  SimTime at = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  SimTime horizon = 12 * kHour;
  std::string policies = "fixed";  // preset or "preset,model=variant,..."
  HeadSpec head;
  SimSlurmConfig slurm;
  ControlConfig control;
  int initial_workers = 0;
  bool max_workers_stated = false;  // cluster.max_workers given (else the default, 4)
  std::size_t background_skipped = 0;  // trace jobs left out of the background load
  std::size_t background_skipped_gpus = 0;  // of them, asking more GPUs per node than any node has
  std::vector<std::string> warnings;   // what loading read with a problem but did not refuse
  WorkerJobSize initial_worker_size;   // defaults unless given
  std::vector<WorkerJobSize> warm_workers;  // more warm workers, one per size (a trace's nodes)
  int utilisation_samples = 0;  // GPU use samples over the horizon (RunMetrics)
  std::string workload_summary;  // what a trace workload's import made of it (the summary prints it)
  std::vector<AppSpec> apps;
  // Applications of several deployments: the app ids of each one's
  // deployments, the ingress (the one its traffic reaches) first.
  std::map<std::string, std::vector<std::string>> applications;
  // Whose requests the run's req_* metrics count: an app, an application
  // (its requests end to end, at its ingress) or one of its deployments;
  // empty: every application's, once each at its ingress.
  std::string metrics_app;
  // cluster.cuda_context_mb: each replica process's device memory beyond
  // its tensors, for apps that do not set their own (measured on an H200,
  // PyTorch 2.11 / CUDA 13: ../shared/data/gpu-colocation/memory-h200.csv).
  std::int64_t cuda_context_mb = 680;
  std::map<std::string, TrafficSpec> traffic;  // serving apps' requests, by app id
  // $.gpu_prices_usd_per_hour: over the built-in on-demand table, by GPU model.
  std::map<std::string, double> gpu_prices;
  std::vector<ScenarioAction> actions;  // sorted by time, stable
  std::vector<Expectation> expectations;
};

// The `format` of a calibrated latency model (`vramsim calibrate`), which a
// scenario loads with "latency": {"from": FILE}.
inline constexpr const char* kLatencyModelFormat = "vramsim-latency-model/1";

Scenario load_scenario(const std::string& path);                      // throws ScenarioError
// A file's bytes (at most limits::kMaxFileBytes and one chunk: more is
// refused by the parsers), and a JSON file as one checked document; both
// throw ScenarioError naming the file.
std::string read_file_text(const std::string& path);
Json read_json_file(const std::string& path);
// The file's bytes as a scenario: one JSON document (no duplicate keys, at
// most limits::kMaxDepth deep, nothing after it), then parse_scenario.
Scenario parse_scenario_text(const std::string& text, const std::string& file);  // throws ScenarioError
Scenario parse_scenario(const Json& doc, const std::string& file);    // throws ScenarioError

}  // namespace vramsim
