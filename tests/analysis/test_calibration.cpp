// Calibration from traces: the phases a trace shows, a round trip through
// `vramsim run` traces of a scenario with known latency distributions, and
// the model file a scenario loads with "latency": {"from": FILE}.
#include "tests/support/test_dir.hpp"
#include "analysis/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "analysis/phase_samples.hpp"
#include "runner/simulation.hpp"
#include "analysis/trace_diff.hpp"

using namespace vramsim;

namespace {

namespace fs = std::filesystem;

// A folder inside this test process's own (removed at exit).
fs::path temp_dir(const std::string& name) {
  static const testing_support::TestDir scratch;
  const fs::path d = scratch.path() / name;
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  ASSERT_TRUE(f.good());
}

std::vector<TraceEvent> traced_run(const Scenario& sc, const fs::path& trace, std::optional<std::uint64_t> seed = {}) {
  RunOptions opt;
  opt.seed = seed;
  opt.outputs.trace_path = trace.string();
  run_scenario(sc, opt);
  return read_trace(trace.string());
}

TEST(PhaseSamples, TheColdStartShowsItsScenarioLatencies) {
  const fs::path dir = temp_dir("cold");
  const Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/cold-start-a100.json");
  PhaseSamples s;
  extract_phase_samples(traced_run(sc, dir / "t.jsonl"), s);
  fs::remove_all(dir);
  using V = std::vector<Duration>;
  EXPECT_EQ(s.samples["queue_wait"], V{seconds(19)});
  EXPECT_EQ(s.samples["node_boot"], V{seconds(30)});
  EXPECT_EQ(s.samples["registration"], V{seconds(6)});
  // 110 s install + 15 s init: one replica, so one span of both.
  EXPECT_EQ(s.samples["runtime_env_install"], V{seconds(125)});
  EXPECT_EQ(s.samples["ray_stop"], V{seconds(5)});
  EXPECT_EQ(s.samples["cancel"], V{seconds(1)});
  EXPECT_EQ(s.samples.count("replica_init"), 0u);
  split_runtime_env(s);
  EXPECT_EQ(s.samples["runtime_env_install"], V{seconds(125)});
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("not separable"), std::string::npos);
}

TEST(PhaseSamples, AReplicaPlacedOnceTheEnvExistsSplitsInstallFromInit) {
  const fs::path dir = temp_dir("redeploy");
  const Scenario sc = parse_scenario_text(R"({"name": "redeploy", "horizon": "10m",
    "cluster": {"initial_workers": 1, "latency": {"runtime_env_install": "20s", "replica_init": "5s"}},
    "apps": [{"id": "a", "gpu_memory_mb": 4000, "deploy_at": "0s"}],
    "actions": [{"at": "100s", "do": "stop", "app": "a"}, {"at": "120s", "do": "deploy", "app": "a"}]})",
                                          (dir / "s.json").string());
  PhaseSamples s;
  extract_phase_samples(traced_run(sc, dir / "t.jsonl"), s);
  fs::remove_all(dir);
  using V = std::vector<Duration>;
  // The warm worker's job shows no queue wait, boot or registration.
  EXPECT_EQ(s.samples.count("queue_wait"), 0u);
  EXPECT_EQ(s.samples.count("node_boot"), 0u);
  EXPECT_EQ(s.samples["runtime_env_install"], V{seconds(25)});
  EXPECT_EQ(s.samples["replica_init"], V{seconds(5)});
  split_runtime_env(s);
  EXPECT_EQ(s.samples["runtime_env_install"], V{seconds(20)});
}

// A cold start whose every phase is drawn from a known distribution.
const char* kKnown = R"({"name": "known-latencies", "seed": 1, "horizon": "2h",
  "cluster": {"max_workers": 1,
    "latency": {"queue_wait": {"dist": "lognormal", "median": "10s", "sigma": 0.3},
                "node_boot": {"dist": "uniform", "min": "20s", "max": "40s"},
                "registration": {"dist": "exponential", "mean": "6s"},
                "runtime_env_install": {"dist": "lognormal", "median": "100s", "sigma": 0.2},
                "ray_stop": {"dist": "lognormal", "median": "5s", "sigma": 0.5},
                "cancel": "1s"}},
  "apps": [{"id": "app", "gpu_memory_mb": 8000, "deploy_at": "0s"}],
  "actions": [{"at": "30m", "do": "shutdown"}]})";

const PhaseFit& phase(const Calibration& c, const std::string& name) {
  for (const auto& p : c.phases)
    if (p.phase == name) return p;
  throw std::runtime_error("phase " + name + " not fitted");
}

double rel(double got, double want) { return std::abs(got - want) / want; }

// Draws of one latency field as the simulated partition makes them: one
// per run, the first of the field's named stream under each seed.
std::vector<Duration> first_draws(const LatencyModel& m, const std::string& stream, std::uint64_t runs) {
  std::vector<Duration> out;
  for (std::uint64_t seed = 1; seed <= runs; ++seed) {
    RandomStreams r(seed);
    out.push_back(m.sample(r.stream(stream)));
  }
  return out;
}

// 1000 runs with seeds 1..1000, calibrated on their traces. The samples are
// exactly the drawn latencies, so each fit equals the fit of those draws;
// against the generating parameters, with one sample per run, the
// tolerances are about three standard errors: lognormal median 5 %, sigma
// 10 %; exponential mean 10 %; uniform bounds 1 % of the range.
// A job cancelled while still queued never shows its wait: it lasted at
// least from submission to the cancel, a right-censored queue wait the
// calibration takes as such rather than dropping it.
TEST(PhaseSamples, AJobCancelledWhileQueuedIsACensoredWait) {
  const fs::path dir = temp_dir("censored");
  const Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/shutdown-sweep.json");
  PhaseSamples s;
  const auto trace = traced_run(sc, dir / "t.jsonl");
  extract_phase_samples(trace, s);
  fs::remove_all(dir);
  ASSERT_EQ(s.censored["queue_wait"].size(), 1u) << "fixed cancels its queued job at the shutdown";
  EXPECT_EQ(s.censored["queue_wait"][0], 130 * kSecond - kSecond) << "submitted at the 1 s pass, cancelled at 130 s";
  EXPECT_TRUE(s.samples["queue_wait"].empty()) << "no completed wait";
}

TEST(Calibration, RecoversTheLatenciesOfSimulatedRuns) {
  constexpr std::uint64_t kRuns = 1000;
  const fs::path dir = temp_dir("roundtrip");
  const Scenario sc = parse_scenario_text(kKnown, (dir / "known.json").string());
  std::vector<std::vector<TraceEvent>> traces;
  std::vector<std::string> names;
  for (std::uint64_t seed = 1; seed <= kRuns; ++seed) {
    traces.push_back(traced_run(sc, dir / "t.jsonl", seed));
    names.push_back("seed " + std::to_string(seed));
  }
  const Calibration c = calibrate(traces, names);

  const auto& q = phase(c, "queue_wait").fit;
  EXPECT_EQ(q.n, kRuns);
  EXPECT_EQ(q.empirical.samples, first_draws(sc.slurm.queue_wait, "slurm.queue_wait", kRuns));
  EXPECT_EQ(q.chosen, "lognormal");
  EXPECT_LT(rel(static_cast<double>(q.model.median), 10e6), 0.05);
  EXPECT_LT(rel(q.model.sigma, 0.3), 0.10);

  const auto& b = phase(c, "node_boot").fit;
  EXPECT_EQ(b.empirical.samples, first_draws(sc.slurm.node_boot, "slurm.node_boot", kRuns));
  EXPECT_EQ(b.chosen, "uniform");
  EXPECT_LT(std::abs(b.model.lo - seconds(20)), seconds(0.2));
  EXPECT_LT(std::abs(b.model.hi - seconds(40)), seconds(0.2));

  const auto& r = phase(c, "registration").fit;
  EXPECT_EQ(r.empirical.samples, first_draws(sc.slurm.registration, "slurm.registration", kRuns));
  EXPECT_EQ(r.chosen, "exponential");
  EXPECT_LT(rel(static_cast<double>(r.model.mean), 6e6), 0.10);

  const auto& e = phase(c, "runtime_env_install").fit;
  EXPECT_EQ(e.empirical.samples, first_draws(sc.control.runtime_env_install, "replica.runtime_env", kRuns));
  EXPECT_EQ(e.chosen, "lognormal");
  EXPECT_LT(rel(static_cast<double>(e.model.median), 100e6), 0.05);
  EXPECT_LT(rel(e.model.sigma, 0.2), 0.10);

  const auto& s = phase(c, "ray_stop").fit;
  EXPECT_EQ(s.empirical.samples, first_draws(sc.slurm.ray_stop, "slurm.ray_stop", kRuns));
  EXPECT_EQ(s.chosen, "lognormal");
  EXPECT_LT(rel(static_cast<double>(s.model.median), 5e6), 0.05);
  EXPECT_LT(rel(s.model.sigma, 0.5), 0.10);

  const auto& k = phase(c, "cancel").fit;
  EXPECT_EQ(k.chosen, "fixed");
  EXPECT_EQ(k.model.value, seconds(1));

  // The model file loads back into the scenario; a field beside `from` wins.
  write(dir / "model.json", calibration_json(c).dump(1));
  const Scenario loaded = parse_scenario_text(
      R"({"name": "calibrated", "cluster": {"latency": {"from": "model.json", "cancel": "2s"}}})",
      (dir / "calibrated.json").string());
  EXPECT_EQ(loaded.slurm.queue_wait.kind, LatencyModel::Kind::Lognormal);
  EXPECT_EQ(loaded.slurm.queue_wait.median, q.model.median);
  EXPECT_DOUBLE_EQ(loaded.slurm.queue_wait.sigma, q.model.sigma);
  EXPECT_EQ(loaded.slurm.node_boot.lo, b.model.lo);
  EXPECT_EQ(loaded.slurm.node_boot.hi, b.model.hi);
  EXPECT_EQ(loaded.slurm.registration.mean, r.model.mean);
  EXPECT_EQ(loaded.control.runtime_env_install.median, e.model.median);
  EXPECT_EQ(loaded.slurm.cancel_latency.kind, LatencyModel::Kind::Fixed);
  EXPECT_EQ(loaded.slurm.cancel_latency.value, seconds(2));
  fs::remove_all(dir);
}

TEST(Calibration, RefusesAPhaseWithTooFewSamples) {
  const fs::path dir = temp_dir("few");
  const Scenario sc = parse_scenario_text(kKnown, (dir / "known.json").string());
  std::vector<std::vector<TraceEvent>> traces;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) traces.push_back(traced_run(sc, dir / "t.jsonl", seed));
  fs::remove_all(dir);
  try {
    calibrate(traces, {"a", "b", "c", "d"});
    FAIL() << "four runs were calibrated with a minimum of five samples";
  } catch (const CalibrationError& e) {
    EXPECT_NE(std::string(e.what()).find("phase queue_wait: 4 sample(s), at least 5 needed"), std::string::npos)
        << e.what();
  }
  const Calibration c = calibrate(traces, {"a", "b", "c", "d"}, 4);
  EXPECT_EQ(c.phases.size(), 6u);
  EXPECT_THROW(calibrate({}, {}), CalibrationError);
}

std::string load_error(const fs::path& dir, const std::string& scenario, const std::string& model) {
  if (!model.empty()) write(dir / "m.json", model);
  try {
    parse_scenario_text(scenario, (dir / "s.json").string());
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(Calibration, ModelFileErrorsNameTheFileAndField) {
  const fs::path dir = temp_dir("errors");
  const std::string m = (dir / "m.json").string();
  const std::string from = R"({"cluster": {"latency": {"from": "m.json"}}})";
  EXPECT_EQ(load_error(dir, R"({"cluster": {"latency": {"from": "absent.json"}}})", ""),
            (dir / "absent.json").string() + ": $: cannot open the file for reading");
  EXPECT_EQ(load_error(dir, R"({"cluster": {"latency": {"from": 3}}})", ""),
            (dir / "s.json").string() +
                ": $.cluster.latency.from: expected the path of a calibrated latency model (vramsim calibrate -o FILE)");
  EXPECT_EQ(load_error(dir, from, R"({"latency": {"node_boot": {"dist": "lognormal", "median": -1}}})"),
            m + ": $.latency.node_boot.median: expected a non-negative duration up to 8760h, got -1");
  EXPECT_EQ(load_error(dir, from, R"({"latency": {"boot": "3s"}})").rfind(m + ": $.latency.boot: unknown field", 0), 0u);
  EXPECT_EQ(load_error(dir, from, R"({"format": "other/2", "latency": {}})"),
            m + ": $.format: expected \"vramsim-latency-model/1\", got \"other/2\"");
  EXPECT_EQ(load_error(dir, from, R"({"fit": {}})"),
            m + ": $.latency: expected the latency object of a calibrated model");
  EXPECT_EQ(load_error(dir, from, "{"), m + ": $: invalid JSON at line 1, column 2: syntax error while parsing object key - unexpected end of input; expected string literal");
  fs::remove_all(dir);
}

}  // namespace
