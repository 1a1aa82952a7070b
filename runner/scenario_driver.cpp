#include "runner/scenario_driver.hpp"

#include <algorithm>

#include "models/advertisement.hpp"
#include "models/status.hpp"

namespace vramsim {

// Hands each event to the observers that asked for its kind.
class ScenarioDriver::Dispatch final : public TraceSink {
 public:
  explicit Dispatch(const RunObservers& observers) {
    for (const auto& o : observers) {
      const TraceKindSet kinds = o->kinds();
      for (std::size_t k = 0; k < kTraceKindCount; ++k)
        if (kinds.test(k)) by_kind_[k].push_back(o.get());
    }
  }
  void write(const TraceEvent& ev) override {
    for (RunObserver* o : by_kind_[static_cast<std::size_t>(ev.kind)]) o->on_event(ev);
  }

 private:
  std::array<std::vector<RunObserver*>, kTraceKindCount> by_kind_;
};

ScenarioDriver::ScenarioDriver(const Scenario& sc, RunWorld world, RunResult& result, RunObservers observers)
    : sc_(sc), world_(world), result_(result),
      ctx_{sc, world.exec, world.cluster, world.backend, world.control, world.trace, result},
      observers_(std::move(observers)),
      traffic_(sc.traffic, world.exec, result.seed, sc.horizon,
               [this](const std::string& app, Duration service) { world_.control.serve_request(app, service); }) {
  for (auto& o : observers_) o->attach(ctx_);
  for (auto& o : observers_) o->prepare();
  dispatch_ = std::make_shared<Dispatch>(observers_);
  world_.trace.add_sink(dispatch_);
  for (const auto& s : sc_.apps) spec_of_[s.id] = &s;  // one lookup per deploy, not a scan
  on_shutdown_action = [this](std::optional<Duration> blocking_timeout) {
    world_.control.shutdown({}, blocking_timeout);
  };
}

ScenarioDriver::~ScenarioDriver() = default;

void ScenarioDriver::record_run_started(const Json& extra) {
  Json policy_names = Json::object();
  for (const auto& [m, v] : world_.control.policies().names) policy_names[m] = v;
  Json started = {{"scenario", result_.scenario}, {"seed", result_.seed}, {"policies", policy_names}};
  for (auto it = extra.begin(); it != extra.end(); ++it) started[it.key()] = it.value();
  world_.trace.record(0, TraceKind::run_started, std::move(started));
}

void ScenarioDriver::start(const std::function<void()>& start_world) {
  add_head_node(world_.cluster, world_.trace, sc_);
  if (start_world) start_world();
  // One place decides whether the status history is kept: before the
  // monitor's first pass, if any observer reads the status.
  if (std::any_of(observers_.begin(), observers_.end(), [](const auto& o) { return o->reads_status(); }))
    world_.control.keep_status(StatusOptions{sc_.control.slurm_mode, 30 * kSecond, sc_.control.slurm_mode,
                                             world_.control.policies().pending});
  world_.control.start();
  traffic_.schedule();
  schedule_actions();
  for (auto& o : observers_) o->start();
}

void ScenarioDriver::schedule_actions() {
  for (const auto& a : sc_.actions) world_.exec.at(a.at, [this, &a] { act(a); });
}

void ScenarioDriver::act(const ScenarioAction& a) {
  ControlPlane& control = world_.control;
  switch (a.kind) {
    case ActionKind::Deploy:
      control.deploy(a.app_override ? *a.app_override : *spec_of_.at(a.app));
      traffic_.deployed(a.app);  // traffic without a start begins with the app's first deploy
      break;
    case ActionKind::Stop: control.stop_app(a.app); break;
    case ActionKind::Delete: control.delete_app(a.app); break;
    case ActionKind::Shutdown: on_shutdown_action(a.blocking_timeout); break;
    case ActionKind::Call: control.call_app(a.app, a.payload); break;
    case ActionKind::Status: break;  // an observer's (status snapshots)
  }
  for (auto& o : observers_) o->on_action(a);
  if (after_action) after_action();
}

void ScenarioDriver::finish(SimTime end, std::uint64_t events, const Json& end_fields) {
  for (auto& o : observers_) o->end_records(end);
  Json ended = {{"events", events}};
  for (auto it = end_fields.begin(); it != end_fields.end(); ++it) ended[it.key()] = it.value();
  world_.trace.record(end, TraceKind::run_ended, std::move(ended));
  world_.trace.close();
  for (auto& o : observers_) o->close(end);
  RunMetrics& m = result_.metrics;
  m.end_time = end;
  m.shut_down = world_.control.shutdown_done_at().has_value();
  m.events = events;
  for (auto& o : observers_) o->measure(result_);
  for (auto& o : observers_) o->account(result_);
  for (auto& o : observers_) o->derive(result_);
  for (auto& o : observers_) o->conclude(result_);
  for (auto& o : observers_) o->publish(result_);
}

void add_head_node(ClusterState& cluster, TraceRecorder& trace, const Scenario& sc) {
  NodeSpec head;
  head.ip = sc.head.ip;
  head.head = true;
  head.resources.set(kCPU, sc.head.cpus);
  if (sc.head.memory_gb > 0) head.resources.set(kMemory, static_cast<double>(sc.head.memory_gb) * kGiB);
  if (sc.head.gpus > 0) {
    const auto& info = gpu_catalogue().at(sc.head.gpu);
    NodeGpuFacts facts;
    facts.gpus = sc.head.gpus;
    facts.mig_enabled = sc.head.mig_enabled;
    facts.memory_total_mb.assign(static_cast<std::size_t>(sc.head.gpus), info.memory_mb);
    for (int g = 0; g < sc.head.gpus; ++g)
      head.devices.push_back(GpuDevice{g, info.device_name, info.memory_mb, 0, 0, std::nullopt, 0});
    head.accelerator_type = info.accelerator_type;
    if (auto v = head_vram_mb(facts)) head.resources.set(kVramMB, static_cast<double>(*v));
  }
  const Json resources = head.resources.to_json();
  NodeId id = cluster.add_node(std::move(head), 0);
  trace.record(0, TraceKind::node_registered, {{"node", id}, {"job", ""}, {"ip", sc.head.ip}, {"resources", resources}});
}

}  // namespace vramsim
