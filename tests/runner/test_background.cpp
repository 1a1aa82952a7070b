// A background load from a workload trace competes with the worker jobs on
// a shared partition (cluster.partition_scheduler fcfs|easy): the worker
// job's queue wait comes out of the load, not out of a draw.
#include "tests/support/test_dir.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "scenario/background.hpp"
#include "scenario/scenario.hpp"
#include "analysis/calibration.hpp"
#include "analysis/trace_diff.hpp"
#include "runner/simulation.hpp"

namespace vramsim {
namespace {

// This test process's own folder (ctest runs each test in a process of its own).
const testing_support::TestDir& scratch() {
  static const testing_support::TestDir dir;
  return dir;
}

std::string write_temp(const std::string& name, const std::string& text) { return scratch().write(name, text); }

// SWF: id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue part prec think,
// and vramsim's 19th field (GPUs per node) where `gpus` is given.
std::string swf_job(int id, int submit, int run, int procs, int req_time, std::optional<int> gpus = std::nullopt) {
  std::ostringstream s;
  s << id << " " << submit << " -1 " << run << " " << procs << " -1 -1 " << procs << " " << req_time
    << " -1 1 1 1 -1 -1 -1 -1 -1";
  if (gpus) s << " " << *gpus;
  s << "\n";
  return s.str();
}

// Two nodes of 4 cores and 1 GPU; one app deployed at 0 asks for a worker
// of `worker_cpus` cores and 1 GPU that is eligible (queue_wait) at about 10 s.
std::string scenario(const std::string& scheduler, const std::string& trace_path, int worker_cpus = 4,
                     const std::string& source = "swf") {
  return R"({"horizon": "2h", "cluster": {"max_workers": 1, "worker_defaults": {"cpus": )" +
         std::to_string(worker_cpus) + R"(, "gpus": 1},
    "partition": [{"count": 2, "cpus": 4, "memory_gb": 512, "gpus": 1, "gpu": "A100-SXM4-40GB"}],
    "partition_scheduler": ")" + scheduler + R"(",
    "background": {"source": ")" + source + R"(", "path": ")" + trace_path + R"(", "procs_per_node": 4}},
    "apps": [{"id": "a", "gpu_memory_mb": 8000, "cpus": 1, "deploy_at": "0s"}]})";
}

std::vector<Json> events_of(const std::string& path, const std::string& kind) {
  std::ifstream in(path);
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line)) {
    Json j = Json::parse(line);
    if (j["kind"] == kind) out.push_back(j);
  }
  return out;
}

struct Outcome {
  SimTime worker_started = -1;
  RunMetrics metrics;
  std::string summary;
};

Outcome run(const std::string& scheduler, const std::string& trace, int worker_cpus = 4,
            const std::string& source = "swf") {
  const std::string name = source == "swf" ? "load.swf" : source == "batsim" ? "load.json" : "load.csv";
  const std::string path = write_temp(name, trace);
  const Scenario sc = parse_scenario_text(scenario(scheduler, path, worker_cpus, source), "bg.json");
  RunOptions opt;
  opt.outputs.trace_path = scratch().file("trace.jsonl");
  const RunResult r = run_scenario(sc, opt);
  const auto started = events_of(opt.outputs.trace_path, "job_started");
  Outcome o;
  if (!started.empty()) o.worker_started = started.front()["t"].get<SimTime>();
  o.metrics = r.metrics;
  std::ostringstream summary;
  print_summary(r, summary);
  o.summary = summary.str();
  return o;
}

// A: 4 cores (one node) 0..1000 s; B: 8 cores (both nodes) from 1 s, so it
// waits for A; the worker queues behind B; C: 4 cores for 100 s at 30 s.
const std::string kLoad = swf_job(1, 0, 1000, 4, 1000) + swf_job(2, 1, 1000, 8, 1000) + swf_job(3, 30, 100, 4, 100);

TEST(BackgroundLoad, TheWorkerJobWaitsForTheJobsAheadOfIt) {
  for (const std::string scheduler : {"fcfs", "easy"}) {
    const Outcome o = run(scheduler, kLoad);
    // B runs 1000..2000 on both nodes; the worker's 4 h estimate cannot
    // backfill before B's reservation, so it starts when B ends.
    EXPECT_EQ(o.worker_started, 2000 * kSecond) << scheduler;
    EXPECT_EQ(o.metrics.background_jobs, 3u) << scheduler;
    EXPECT_EQ(o.metrics.background_started, 3u) << scheduler;
  }
}

TEST(BackgroundLoad, AJobStillQueuedAtTheEndIsCountedAsNeverStarted) {
  // D wants both nodes from 7100 s, but the worker holds one until the 2 h horizon.
  const Outcome o = run("fcfs", kLoad + swf_job(4, 7100, 60, 8, 60));
  EXPECT_EQ(o.metrics.background_jobs, 4u);
  EXPECT_EQ(o.metrics.background_started, 3u);
  EXPECT_EQ(o.metrics.background_never_started, 1u);
}

TEST(BackgroundLoad, EasyBackfillsTheShortJobThatFcfsHoldsBack) {
  // FCFS: C starts at 2000 beside the worker; EASY: C fits before B's
  // reservation on the idle node and starts at once.
  const Outcome fcfs = run("fcfs", kLoad);
  const Outcome easy = run("easy", kLoad);
  EXPECT_NEAR(fcfs.metrics.background_wait_mean_s, (0 + 999 + 1970) / 3.0, 1e-6);
  EXPECT_NEAR(easy.metrics.background_wait_mean_s, (0 + 999 + 0) / 3.0, 1e-6);
}

TEST(BackgroundLoad, AnIdlePartitionStartsTheWorkerAfterTheDrawnWaitOnly) {
  const Outcome o = run("fcfs", swf_job(1, 0, 5, 4, 5));
  const Outcome exclusive_like = run("easy", swf_job(1, 0, 5, 4, 5));
  EXPECT_EQ(o.worker_started, exclusive_like.worker_started);
  EXPECT_LT(o.worker_started, 60 * kSecond);
  EXPECT_GT(o.metrics.background_core_share, 0.0);
}

TEST(BackgroundLoad, ErrorsNameTheFieldAndTheTraceLine) {
  const std::string swf = write_temp("ok.swf", swf_job(1, 0, 10, 4, 10));
  try {
    parse_scenario_text(scenario("exclusive", swf), "bg.json");
    FAIL() << "background on an exclusive partition was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "$.cluster.background");
    EXPECT_NE(e.problem().find("partition_scheduler"), std::string::npos) << e.what();
  }
  const std::string bad = write_temp("bad.swf", swf_job(1, 0, 10, 4, 10) + "2 5 -1 x 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n");
  try {
    parse_scenario_text(scenario("fcfs", bad), "bg.json");
    FAIL() << "a malformed trace was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "$.cluster.background.path");
    EXPECT_NE(e.problem().find("bad.swf:2: run_time"), std::string::npos) << e.what();
  }
  try {
    parse_scenario_text(scenario("fcfs", write_temp("huge.swf", swf_job(1, 0, 10, 4, 10) +
                                                                   "2 5 -1 999999999999 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n")),
                        "bg.json");
    FAIL() << "a run time beyond the range was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(e.problem().find("huge.swf:2: run_time: expected at most"), std::string::npos) << e.what();
  }
}

TEST(BackgroundLoad, JobsTooWideForThePartitionAreLeftOutAndCounted) {
  const Outcome o = run("fcfs", swf_job(1, 0, 10, 4, 10) + swf_job(2, 1, 10, 12, 10) + swf_job(3, 2, -1, 4, 10));
  EXPECT_EQ(o.metrics.background_jobs, 1u);
  EXPECT_EQ(o.metrics.background_skipped, 2u) << "12 cores on 2 nodes of 4, and a job without a run time";
}


// A run with a background load says so in its trace, and `vramsim
// calibrate` does not fit the queue wait from it: that wait holds the load's
// contention, which a scenario's own background load would simulate again.
// The other phases are fitted as from any run.
TEST(BackgroundLoad, CalibrationLeavesTheQueueWaitOfLoadedRunsOut) {
  const Scenario sc = parse_scenario_text(scenario("fcfs", write_temp("cal.swf", swf_job(1, 0, 600, 4, 600))), "bg.json");
  std::vector<std::vector<TraceEvent>> traces;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    RunOptions opt;
    opt.seed = seed;
    opt.outputs.trace_path = (scratch().path() / ("loaded" + std::to_string(seed) + ".jsonl")).string();
    run_scenario(sc, opt);
    traces.push_back(read_trace(opt.outputs.trace_path));
  }
  ASSERT_EQ(traces[0].front().kind, TraceKind::run_started);
  EXPECT_EQ(traces[0].front()["background_jobs"], 1);
  const Calibration c = calibrate(traces, {"a", "b"}, 1);
  for (const auto& p : c.phases) EXPECT_NE(p.phase, "queue_wait");
  EXPECT_NE(std::find(c.unobserved.begin(), c.unobserved.end(), "queue_wait"), c.unobserved.end());
  bool said = false;
  for (const auto& n : c.notes) said = said || n.rfind("queue_wait: not fitted from 2 trace(s) of runs with a background load", 0) == 0;
  EXPECT_TRUE(said);
  EXPECT_FALSE(c.phases.empty()) << "node boot and the rest are still fitted";
}

// A calibrated queue wait used beside a background load is named in a
// warning; set beside "from", the scenario's own value is no double count.
TEST(BackgroundLoad, ACalibratedQueueWaitBesideALoadIsWarnedOf) {
  const std::string model = write_temp("model.json", R"({"format": "vramsim-latency-model/1",
    "latency": {"queue_wait": {"dist": "fixed", "value": 30}, "node_boot": {"dist": "fixed", "value": 20}}})");
  auto text = [&](const std::string& latency) {
    return R"({"cluster": {"partition": [{"count": 2, "cpus": 4, "memory_gb": 512, "gpus": 1, "gpu": "A100-SXM4-40GB"}],
      "partition_scheduler": "fcfs", "background": {"path": ")" + write_temp("w.swf", swf_job(1, 0, 60, 4, 60)) +
           R"("}, "latency": )" + latency + "}}";
  };
  const Scenario warned = parse_scenario_text(text(R"({"from": ")" + model + R"("})"), "s.json");
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_NE(warned.warnings[0].find("latency.queue_wait: fitted from runs"), std::string::npos) << warned.warnings[0];
  const Scenario own = parse_scenario_text(text(R"({"from": ")" + model + R"(", "queue_wait": "5s"})"), "s.json");
  EXPECT_TRUE(own.warnings.empty());
}

// Two 1-core jobs from 0 s, for 1000 s and 1500 s, each with `gpus` GPUs
// per node (none: 18 fields).
std::string two_gpu_jobs(std::optional<int> gpus) {
  return swf_job(1, 0, 1000, 1, 1000, gpus) + swf_job(2, 0, 1500, 1, 1500, gpus);
}

// The two jobs hold both of the partition's GPUs; the worker (1 core, 1 GPU)
// fits beside them on cores, so it waits exactly until the first one ends.
TEST(BackgroundLoad, JobsHoldingTheOnlyGpusKeepTheWorkerWaitingUntilOneEnds) {
  for (const std::string scheduler : {"fcfs", "easy"}) {
    EXPECT_EQ(run(scheduler, two_gpu_jobs(1), 1).worker_started, 1000 * kSecond) << scheduler;
    // Without GPUs they take cores only: the worker starts after its drawn queue wait.
    const Outcome cores_only = run(scheduler, two_gpu_jobs(std::nullopt), 1);
    EXPECT_GE(cores_only.worker_started, 0) << scheduler;
    EXPECT_LT(cores_only.worker_started, 60 * kSecond) << scheduler;
    for (const int none : {-1, 0}) {
      const Outcome o = run(scheduler, two_gpu_jobs(none), 1);
      EXPECT_EQ(o.worker_started, cores_only.worker_started) << scheduler << " " << none;
      EXPECT_EQ(o.summary, cores_only.summary) << scheduler << " " << none;
    }
  }
}

TEST(BackgroundLoad, BatsimGresHoldsGpusAsTheSwfFieldDoes) {
  const std::string doc = R"({"nb_res": 8, "profiles": {"d1000": {"type": "delay", "delay": 1000},
    "d1500": {"type": "delay", "delay": 1500}}, "jobs": [
    {"id": 1, "subtime": 0, "res": 1, "profile": "d1000", "gres": "gpu:1"},
    {"id": 2, "subtime": 0, "res": 1, "profile": "d1500", "gres": "gpu:1"}]})";
  const Outcome o = run("fcfs", doc, 1, "batsim");
  EXPECT_EQ(o.worker_started, 1000 * kSecond);
  EXPECT_NEAR(o.metrics.background_gpu_share, run("fcfs", two_gpu_jobs(1), 1).metrics.background_gpu_share, 1e-12);
}

TEST(BackgroundLoad, GpuShareIsTheGpuSecondsHeldOverThePartitions) {
  const Outcome o = run("fcfs", two_gpu_jobs(1), 1);
  const double end_s = to_seconds(o.metrics.end_time);
  ASSERT_EQ(end_s, 7200) << "the 2 h horizon";
  // 1000 + 1500 GPU-seconds (and core-seconds) over 2 GPUs (8 cores) for 7200 s.
  EXPECT_NEAR(o.metrics.background_gpu_share, 2500.0 / (2 * 7200), 1e-12);
  EXPECT_NEAR(o.metrics.background_core_share, 2500.0 / (8 * 7200), 1e-12);
  EXPECT_NE(o.summary.find("mean wait 0 s, 4.3% of the partition's cores busy, 17.4% of its GPUs held\n"),
            std::string::npos)
      << o.summary;
  std::optional<double> column;
  o.metrics.for_each([&](std::string_view name, std::optional<double> v) {
    if (std::string(name) == "background_gpu_share") column = v;
  });
  ASSERT_TRUE(column);
  EXPECT_EQ(*column, o.metrics.background_gpu_share);
  const Outcome cores_only = run("fcfs", two_gpu_jobs(std::nullopt), 1);
  EXPECT_EQ(cores_only.metrics.background_gpu_share, 0.0);
  EXPECT_EQ(cores_only.metrics.background_core_share, o.metrics.background_core_share);
}

TEST(BackgroundLoad, JobsAskingMoreGpusPerNodeThanAnyNodeHasAreLeftOutAndCounted) {
  // Job 2 asks 2 GPUs per node of nodes with 1; job 3 is too wide (12 cores on 2 nodes of 4).
  const Outcome o =
      run("fcfs", swf_job(1, 0, 10, 1, 10, 1) + swf_job(2, 1, 10, 1, 10, 2) + swf_job(3, 2, 10, 12, 10, 1), 1);
  EXPECT_EQ(o.metrics.background_jobs, 1u);
  EXPECT_EQ(o.metrics.background_skipped, 2u);
  EXPECT_EQ(o.metrics.background_skipped_gpus, 1u);
  EXPECT_NE(o.summary.find("background: 1 trace job(s) (2 left out, 1 of them for more GPUs per node than any node "
                           "has), 1 started"),
            std::string::npos)
      << o.summary;
}

// On mixed nodes a job takes only the nodes with its GPUs per node: one
// wider than those is too wide, one asking more than any node has is counted
// apart.
TEST(BackgroundLoad, GpusPerNodeNarrowTheNodesAJobCanTake) {
  std::vector<PartitionNodeType> partition(2);
  partition[0].count = 1;
  partition[0].cpus = 4;
  partition[0].gpus = 4;
  partition[1].count = 3;
  partition[1].cpus = 4;
  partition[1].gpus = 1;
  BackgroundSpec spec;
  spec.procs_per_node = 4;
  spec.path = write_temp("mixed.swf", swf_job(1, 0, 10, 4, 10, 2) + swf_job(2, 0, 10, 8, 10, 2) +
                                          swf_job(3, 0, 10, 4, 10, 5) + swf_job(4, 0, 10, 8, 10, 1));
  const BackgroundLoad load = load_background(spec, partition);
  ASSERT_EQ(load.jobs.size(), 2u);
  EXPECT_EQ(load.jobs[0].id, 1);
  EXPECT_EQ(load.jobs[0].gpus_per_node, 2);
  EXPECT_EQ(load.jobs[1].id, 4);
  EXPECT_EQ(load.jobs[1].nodes, 2);
  EXPECT_EQ(load.jobs[1].gpus_per_node, 1);
  EXPECT_EQ(load.too_wide, 1u) << "2 nodes with 2 GPUs each: the partition has one";
  EXPECT_EQ(load.too_many_gpus, 1u) << "5 GPUs per node: no node has them";
  EXPECT_EQ(load.skipped(), 2u);
}

// openb pods: rows of name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation,deletion,scheduled.
const std::string kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p0,1500,1024,1,500,,LS,Running,100,1100,\n"         // a GPU share: one whole GPU, 2 cores, 1000 s
    "p1,0,1024,1,1000,,BE,Succeeded,100,1600,100\n"      // 1 GPU, no core, 1500 s
    "p2,1000,1024,2,1000,,LS,Running,200,300,\n"         // 2 GPUs per node: no node has them
    "p3,4001,1024,0,0,,Burstable,Failed,200,300,\n";     // 5 cores: no node has them

TEST(BackgroundLoad, OpenbPodsAreJobsOfOneNodeWithWholeGpus) {
  std::vector<PartitionNodeType> partition(1);
  partition[0].count = 2;
  partition[0].cpus = 4;
  partition[0].gpus = 1;
  BackgroundSpec spec;
  spec.source = "openb";
  spec.path = write_temp("pods.csv", kPods);
  const BackgroundLoad load = load_background(spec, partition);
  ASSERT_EQ(load.jobs.size(), 2u);
  EXPECT_EQ(load.jobs[0].submit, 0) << "the first creation time is t = 0";
  EXPECT_EQ(load.jobs[0].nodes, 1);
  EXPECT_EQ(load.jobs[0].cpus_per_node, 2) << "ceil(1500 / 1000)";
  EXPECT_EQ(load.jobs[0].gpus_per_node, 1) << "a GPU share holds a whole GPU";
  EXPECT_EQ(load.jobs[0].run_time, 1000 * kSecond);
  EXPECT_EQ(load.jobs[1].cpus_per_node, 0);
  EXPECT_EQ(load.jobs[1].run_time, 1500 * kSecond);
  EXPECT_EQ(load.too_many_gpus, 1u);
  EXPECT_EQ(load.too_wide, 1u);
  spec.from_s = 150;
  EXPECT_EQ(load_background(spec, partition).before_start, 2u);
}

TEST(BackgroundLoad, OpenbPodsHoldingTheOnlyGpusKeepTheWorkerWaiting) {
  const Outcome o = run("fcfs", kPods, 1, "openb");
  EXPECT_EQ(o.worker_started, 1000 * kSecond);
  EXPECT_EQ(o.metrics.background_skipped_gpus, 1u);
  EXPECT_NEAR(o.metrics.background_gpu_share, 2500.0 / (2 * 7200), 1e-12);
  try {
    run("fcfs", "name,cpu_milli\n", 1, "openb");
    FAIL() << "a malformed pod list was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "$.cluster.background.path");
    EXPECT_NE(e.problem().find("load.csv: line 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramsim
