// The capacity metrics of a run, checked against what the trace of the same
// run says happened: job and replica times, node lifetimes, advertised VRAM.
#include "tests/support/test_dir.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "scenario/generator.hpp"
#include "runner/simulation.hpp"

using namespace vramsim;

namespace {

struct Traced {
  RunResult result;
  std::vector<Json> events;
};

Traced run_traced(const std::string& file, const std::string& policies, const std::string& tag) {
  Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/" + file);
  RunOptions opt;
  opt.policies = policies;
  const testing_support::TestDir dir;
  opt.outputs.trace_path = dir.file("metrics-" + tag + ".jsonl");
  Traced t{run_scenario(sc, opt), {}};
  std::ifstream in(opt.outputs.trace_path);
  for (std::string line; std::getline(in, line);) t.events.push_back(Json::parse(line));
  std::filesystem::remove(opt.outputs.trace_path);
  return t;
}

double secs(const Json& e) { return e["t"].get<double>() / 1e6; }

const Json& first(const std::vector<Json>& ev, const std::string& kind, const std::string& key = "",
                  const std::string& value = "") {
  for (const auto& e : ev)
    if (e["kind"] == kind && (key.empty() || e[key] == value)) return e;
  throw std::runtime_error("no " + kind + " event");
}

}  // namespace

TEST(Metrics, GpuHoursAndVramUtilisationFollowTheTrace) {
  const Traced t = run_traced("cold-start-a100.json", "fixed", "cold-fixed");
  const RunMetrics& m = t.result.metrics;
  const auto& ev = t.events;
  // Allocated: the worker job's GPUs from RUNNING to its end.
  const double job_gpus = first(ev, "job_submitted")["gpus"].get<double>();
  const double job_run = secs(first(ev, "job_ended")) - secs(first(ev, "job_started"));
  EXPECT_NEAR(m.gpu_hours_allocated, job_gpus * job_run / 3600, 1e-12);
  // Booked: the replica's num_gpus from its placement until the app is deleted.
  const Json& placed = first(ev, "replica_placed");
  double deleted = 0;
  for (const auto& e : ev)
    if (e["kind"] == "app_state" && e["to"] == "DELETED") deleted = secs(e);
  const double placed_for = deleted - secs(placed);
  ASSERT_GT(placed_for, 0);
  EXPECT_NEAR(m.gpu_hours_booked, placed["num_gpus"].get<double>() * placed_for / 3600, 1e-12);
  EXPECT_LT(m.gpu_hours_booked, m.gpu_hours_allocated);
  // VRAM: the replica's VRAM_MB over the worker node's advertised VRAM_MB while it was up.
  const Json& reg = first(ev, "node_registered", "node", "node-1");
  const double node_up = secs(first(ev, "node_lost", "node", "node-1")) - secs(reg);
  ASSERT_TRUE(m.vram_utilisation.has_value());
  EXPECT_NEAR(*m.vram_utilisation,
              placed["vram_mb"].get<double>() * placed_for / (reg["resources"]["VRAM_MB"].get<double>() * node_up),
              1e-12);
  // Queue wait: submitted -> RUNNING.
  const double wait = secs(first(ev, "job_started")) - secs(first(ev, "job_submitted"));
  EXPECT_EQ(m.queue_wait_mean_s, wait);
  EXPECT_EQ(m.queue_wait_p95_s, wait);
  EXPECT_FALSE(m.gpu_hours_observed.has_value()) << "simulation measures no device memory";
  EXPECT_EQ(m.rejected_deployments, 0);
  ASSERT_TRUE(m.ttr_p50_s.has_value());
  EXPECT_EQ(*m.ttr_p50_s, to_seconds(*t.result.apps.at(0).time_to_running));
}

TEST(Metrics, RejectionCountedAndNoTimeToRunningWithoutVramAdvertised) {
  const Traced t = run_traced("cold-start-a100.json", "legacy", "cold-legacy");
  const RunMetrics& m = t.result.metrics;
  int refused = 0;
  for (const auto& e : t.events)
    if (e["kind"] == "admission" && !e["admitted"].get<bool>()) ++refused;
  ASSERT_GT(refused, 0) << "legacy refuses the deploy on this scenario";
  EXPECT_EQ(m.rejected_deployments, refused);
  EXPECT_FALSE(m.ttr_p50_s.has_value());
  EXPECT_FALSE(m.ttr_p99_s.has_value());
  EXPECT_EQ(m.apps_running, 0);
  EXPECT_EQ(m.apps_deployed, 1);
  EXPECT_FALSE(m.vram_utilisation.has_value()) << "legacy advertises no VRAM_MB";
  EXPECT_EQ(m.gpu_hours_booked, 0);
  EXPECT_GT(m.gpu_hours_allocated, 0) << "the job ran although nothing was placed";
}

TEST(Metrics, TimeToRunningPercentilesAreNearestRankOverApps) {
  GeneratorOptions g;
  g.apps = 20;
  g.seed = 3;
  const RunResult r = run_scenario(parse_scenario(generate_scenario(g), "generated"), RunOptions{});
  std::vector<double> ttr;
  for (const auto& a : r.apps)
    if (a.time_to_running) ttr.push_back(to_seconds(*a.time_to_running));
  ASSERT_GE(ttr.size(), 2u);
  std::sort(ttr.begin(), ttr.end());
  auto rank = [&](double p) { return ttr[static_cast<std::size_t>(std::ceil(p / 100 * ttr.size())) - 1]; };
  EXPECT_EQ(r.metrics.ttr_p50_s, rank(50));
  EXPECT_EQ(r.metrics.ttr_p95_s, rank(95));
  EXPECT_EQ(r.metrics.ttr_p99_s, ttr.back());
  EXPECT_EQ(r.metrics.apps_deployed, static_cast<int>(r.apps.size()));
  EXPECT_EQ(r.metrics.apps_running, static_cast<int>(ttr.size()));
}

TEST(Metrics, ForEachNamesEveryMetricOnceInAFixedOrder) {
  RunMetrics m;
  m.jobs_left = 3;
  m.gpu_hours_booked = 1.5;
  std::vector<std::string> names;
  std::map<std::string, std::optional<double>> values;
  m.for_each([&](std::string_view n, std::optional<double> v) {
    names.emplace_back(n);
    values[std::string(n)] = v;
  });
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "a name twice";
  EXPECT_EQ(values.at("jobs_left"), 3.0);
  EXPECT_EQ(values.at("gpu_hours_booked"), 1.5);
  EXPECT_FALSE(values.at("vram_utilisation").has_value());
  EXPECT_FALSE(values.at("gpu_hours_observed").has_value());
  std::vector<std::string> again;
  m.for_each([&](std::string_view n, std::optional<double>) { again.emplace_back(n); });
  EXPECT_EQ(names, again);
}

// Every worker job's ending has a column: one cancelled while queued counts
// as never started; one that ran and was left behind does not.
TEST(Metrics, AJobCancelledWhileQueuedNeverStarted) {
  for (const std::string policies : {"legacy", "fixed"}) {
    Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/shutdown-sweep.json");
    RunOptions opt;
    opt.policies = policies;
    const RunResult r = run_scenario(sc, opt);
    ASSERT_EQ(r.metrics.jobs_submitted, 1) << policies;
    if (policies == "fixed") {
      EXPECT_EQ(r.metrics.jobs_cancelled, 1);
      EXPECT_EQ(r.metrics.jobs_never_started, 1) << "scancelled while queued";
    } else {
      EXPECT_EQ(r.metrics.jobs_left, 1);
      EXPECT_EQ(r.metrics.jobs_never_started, 0) << "left behind, it ran";
    }
    std::optional<double> column;
    r.metrics.for_each([&](std::string_view name, std::optional<double> v) {
      if (std::string(name) == "jobs_never_started") column = v;
    });
    EXPECT_EQ(column, std::optional<double>(r.metrics.jobs_never_started));
  }
}
