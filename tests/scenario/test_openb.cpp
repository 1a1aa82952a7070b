// The openb importer: good rows read as written; every malformed row is
// refused with the file, line, column and what was expected. Then the
// scenario expansion: nodes, warm workers, apps and their timed actions.
#include <gtest/gtest.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iterator>

#include "scenario/openb_scenario.hpp"
#include "runner/simulation.hpp"
#include "tests/support/test_dir.hpp"
#include "workload/openb.hpp"

using namespace vramsim;

namespace {

const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
const char* kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";

OpenbError pod_error(const std::string& rows) {
  try {
    parse_openb_pods(std::string(kPodHeader) + rows, "pods.csv");
  } catch (const OpenbError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << rows;
  return OpenbError("", 0, 0, "", "");
}

OpenbError node_error(const std::string& rows) {
  try {
    parse_openb_nodes(std::string(kNodeHeader) + rows, "nodes.csv");
  } catch (const OpenbError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << rows;
  return OpenbError("", 0, 0, "", "");
}

}  // namespace

TEST(OpenbImport, ReadsNodeRows) {
  const auto n = parse_openb_nodes(std::string(kNodeHeader) +
                                       "openb-node-0000,64000,262144,2,P100\r\n"
                                       "openb-node-0001,32000,131072,0,\n\n"
                                       "openb-node-0002,96000,393216,8,G2",
                                   "nodes.csv");
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].name, "openb-node-0000");
  EXPECT_EQ(n[0].cpu_milli, 64000);
  EXPECT_EQ(n[0].memory_mib, 262144);
  EXPECT_EQ(n[0].gpus, 2);
  EXPECT_EQ(n[0].model, "P100");  // the CR of a CRLF line is not part of the field
  EXPECT_EQ(n[1].gpus, 0);
  EXPECT_EQ(n[1].model, "");
  EXPECT_EQ(n[2].model, "G2");
  EXPECT_EQ(n[2].line, 5u);  // the blank line counts
}

TEST(OpenbImport, ReadsPodRows) {
  const auto p = parse_openb_pods(std::string(kPodHeader) +
                                      "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                                      "openb-pod-0009,12000,16384,1,1000,V100M16|V100M32|V100M32,LS,Running,4975773,"
                                      "12902960,4975773\n"
                                      "openb-pod-1089,4000,30517,1,230,,BE,Pending,9781875,9782235,\n"
                                      "openb-pod-2000,32000,65536,4,1000,,Burstable,Failed,10,20,15\n"
                                      "openb-pod-3000,2000,4096,0,0,,Guaranteed,Succeeded,5,5,5\n",
                                  "pods.csv");
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].gpu_milli, 460);
  EXPECT_TRUE(p[0].sharing());
  EXPECT_TRUE(p[0].gpu_spec.empty());
  EXPECT_EQ(p[0].creation_time, 427061);
  EXPECT_EQ(p[0].deletion_time, 12902960);
  EXPECT_EQ(p[0].scheduled_time, 427061);
  EXPECT_EQ(p[1].gpu_spec, (std::vector<std::string>{"V100M16", "V100M32"}));  // repeats dropped
  EXPECT_FALSE(p[1].sharing());
  EXPECT_EQ(p[2].phase, "Pending");
  EXPECT_FALSE(p[2].scheduled_time.has_value());
  EXPECT_EQ(p[3].num_gpu, 4);
  EXPECT_EQ(p[3].qos, "Burstable");
  EXPECT_EQ(p[4].num_gpu, 0);
  EXPECT_EQ(p[4].gpu_milli, 0);
  EXPECT_EQ(p[4].line, 6u);
}

TEST(OpenbImport, LimitKeepsTheFirstPodsAndReadsNoFurther) {
  // The third row is malformed; a limit of 2 never reads it.
  const std::string rows = std::string(kPodHeader) + "a,1000,1,1,500,,LS,Running,1,2,1\n" +
                           "b,1000,1,1,500,,LS,Running,1,2,1\n" + "c,x,1,1,500,,LS,Running,1,2,1\n";
  EXPECT_EQ(parse_openb_pods(rows, "pods.csv", 2).size(), 2u);
  EXPECT_THROW(parse_openb_pods(rows, "pods.csv"), OpenbError);
}

TEST(OpenbImport, EveryMalformedPodRowNamesLineColumnAndExpectation) {
  struct Case {
    std::string row;
    std::size_t column;
    std::string column_name, problem;
  };
  const std::vector<Case> cases = {
      {"p,1000,1,1,500,,LS,Running,1,2", 0, "", "expected 11 comma-separated fields, got 10"},
      {",1000,1,1,500,,LS,Running,1,2,1", 1, "name", "expected a non-empty name"},
      {"p,1.5,1,1,500,,LS,Running,1,2,1", 2, "cpu_milli", "expected an integer in [0, 4096000], got \"1.5\""},
      {"p,-1,1,1,500,,LS,Running,1,2,1", 2, "cpu_milli", "expected an integer in [0, 4096000], got -1"},
      {"p,1000,,1,500,,LS,Running,1,2,1", 3, "memory_mib", "expected an integer in [0, 1073741824], got \"\""},
      {"p,1000,1,65,1000,,LS,Running,1,2,1", 4, "num_gpu", "expected an integer in [0, 64], got 65"},
      {"p,1000,1,1,0,,LS,Running,1,2,1", 5, "gpu_milli", "expected an integer in [1, 1000], got 0"},
      {"p,1000,1,1,1001,,LS,Running,1,2,1", 5, "gpu_milli", "expected an integer in [1, 1000], got 1001"},
      {"p,1000,1,2,500,,LS,Running,1,2,1", 5, "gpu_milli", "expected an integer in [1000, 1000], got 500"},
      {"p,1000,1,0,300,,LS,Running,1,2,1", 5, "gpu_milli", "expected an integer in [0, 0], got 300"},
      {"p,1000,1,1,500,T4||P100,LS,Running,1,2,1", 6, "gpu_spec",
       "expected GPU model names separated by '|', got \"T4||P100\""},
      {"p,1000,1,1,500,,XX,Running,1,2,1", 7, "qos", "expected one of LS, BE, Burstable, Guaranteed, got \"XX\""},
      {"p,1000,1,1,500,,LS,Done,1,2,1", 8, "pod_phase",
       "expected one of Running, Succeeded, Failed, Pending, got \"Done\""},
      {"p,1000,1,1,500,,LS,Running,1e3,2000,1", 9, "creation_time",
       "expected an integer in [0, 315360000], got \"1e3\""},
      {"p,1000,1,1,500,,LS,Running,10,9,1", 10, "deletion_time", "expected an integer in [10, 315360000], got 9"},
      {"p,1000,1,1,500,,LS,Running,1,2,x", 11, "scheduled_time", "expected an integer in [0, 315360000], got \"x\""},
  };
  for (const auto& c : cases) {
    const auto e = pod_error("ok,1000,1,1,500,,LS,Running,1,2,1\n" + c.row + "\n");
    EXPECT_EQ(e.file(), "pods.csv") << c.row;
    EXPECT_EQ(e.line(), 3u) << c.row;
    EXPECT_EQ(e.column(), c.column) << c.row;
    EXPECT_EQ(e.column_name(), c.column_name) << c.row;
    EXPECT_EQ(e.problem(), c.problem) << c.row;
  }
  const auto dup = pod_error("p,1000,1,1,500,,LS,Running,1,2,1\np,1000,1,1,500,,LS,Running,1,2,1\n");
  EXPECT_EQ(std::string(dup.what()), "pods.csv: line 3, column 1 (name): duplicate pod name \"p\"");
}

TEST(OpenbImport, EveryMalformedNodeRowNamesLineColumnAndExpectation) {
  auto e = node_error("n0,1000,1,1,T4\nn1,1000,1,x,T4\n");
  EXPECT_EQ(std::string(e.what()), "nodes.csv: line 3, column 4 (gpu): expected an integer in [0, 64], got \"x\"");
  e = node_error("n0,1000,1,2,\n");
  EXPECT_EQ(e.column(), 5u);
  EXPECT_EQ(e.problem(), "expected a non-empty name");
  e = node_error("n0,1000,1,0,T4\n");
  EXPECT_EQ(e.problem(), "expected an empty model for a node with 0 GPUs, got \"T4\"");
  e = node_error("n0,1000,1,0,\nn0,1000,1,0,\n");
  EXPECT_EQ(e.problem(), "duplicate node name \"n0\"");
  e = node_error("n0,1000,1,0\n");
  EXPECT_EQ(e.column(), 0u);
  EXPECT_EQ(e.problem(), "expected 5 comma-separated fields, got 4");
  e = node_error("");
  EXPECT_EQ(e.line(), 0u);
  EXPECT_EQ(std::string(e.what()), "nodes.csv: file: expected at least one node row after the header");
}

TEST(OpenbImport, HeaderMustMatch) {
  try {
    parse_openb_nodes("sn,cpu,memory_mib,gpu,model\nn,1,1,0,\n", "nodes.csv");
    FAIL();
  } catch (const OpenbError& e) {
    EXPECT_EQ(e.line(), 1u);
    EXPECT_EQ(e.problem(), "expected the header sn,cpu_milli,memory_mib,gpu,model, got \"sn,cpu,memory_mib,gpu,model\"");
  }
  EXPECT_THROW(parse_openb_pods("", "pods.csv"), OpenbError);
  try {
    load_openb_pods("/nonexistent/pods.csv");
    FAIL();
  } catch (const OpenbError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/pods.csv: file: cannot open the file for reading");
  }
}

namespace {

// The bundled small openb scenario's folder.
std::string openb_dir() { return std::string(VRAMSIM_SOURCE_DIR) + "/tests/scenarios/openb"; }

Scenario openb_scenario(const std::string& workload_extra, const std::string& top_extra = "") {
  const std::string text = R"({"cluster": {"mode": "static"}, )" + top_extra +
                           R"("workload": {"source": "openb", "nodes": "nodes.csv", "pods": "pods.csv")" +
                           workload_extra + "}}";
  return parse_scenario_text(text, openb_dir() + "/case.json");
}

ScenarioError openb_scenario_error(const std::string& workload_extra, const std::string& top_extra = "") {
  try {
    openb_scenario(workload_extra, top_extra);
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << workload_extra << " " << top_extra;
  return ScenarioError("", "", "");
}

}  // namespace

TEST(OpenbScenario, NodesBecomePartitionNodesWithWholeNodeWarmWorkers) {
  const Scenario s = openb_scenario("");
  ASSERT_EQ(s.slurm.nodes.size(), 2u);
  const auto& t4 = s.slurm.nodes[0];
  EXPECT_EQ(t4.count, 1);
  EXPECT_EQ(t4.cpus, 8);
  EXPECT_EQ(t4.memory_gb, 64);
  EXPECT_EQ(t4.gpus, 2);
  EXPECT_EQ(t4.gpu_model, "Tesla T4");
  EXPECT_EQ(t4.accelerator_type, "T4");
  EXPECT_EQ(t4.gpu_memory_mb, 15360);
  EXPECT_EQ(s.slurm.nodes[1].gpu_memory_mb, 32768);
  ASSERT_EQ(s.warm_workers.size(), 2u);
  EXPECT_EQ(s.warm_workers[0].gpus, 2);
  EXPECT_EQ(s.warm_workers[0].cpus, 8);
  EXPECT_EQ(s.warm_workers[0].mem_per_cpu_gb, 8);
  EXPECT_EQ(s.warm_workers[1].cpus, 16);
  EXPECT_EQ(s.utilisation_samples, 100);
}

TEST(OpenbScenario, PodsBecomeAppsDeployedAndDeletedAtTheirTimes) {
  const Scenario s = openb_scenario(R"(, "time_scale": 0.5)");
  ASSERT_EQ(s.apps.size(), 6u);
  const AppSpec& share = s.apps[0];
  EXPECT_EQ(share.id, "p-0");
  EXPECT_EQ(share.replicas, 1);
  EXPECT_DOUBLE_EQ(share.cpus, 2.0);
  EXPECT_EQ(share.memory_bytes, 4096LL << 20);
  EXPECT_EQ(share.gpu_memory_mb, 7680);  // 500 milli of the smallest GPU (T4, 15360 MB)
  const AppSpec& multi = s.apps[2];     // 2 GPUs, 1 CPU, 2048 MiB: one replica of both GPUs
  EXPECT_EQ(multi.replicas, 1);
  EXPECT_EQ(multi.gpu_memory_mb, -1);
  EXPECT_EQ(multi.gpu_milli, 2000);
  EXPECT_DOUBLE_EQ(multi.cpus, 1.0);
  EXPECT_EQ(multi.memory_bytes, 2048LL << 20);
  EXPECT_FALSE(s.apps[3].gpu_memory_mb.has_value());  // CPU only
  // p-0: created at 10 s, deleted at 1000 s of the trace, halved.
  ASSERT_GE(s.actions.size(), 2u);
  EXPECT_EQ(s.actions[0].kind, ActionKind::Deploy);
  EXPECT_EQ(s.actions[0].app, "p-0");
  EXPECT_EQ(s.actions[0].at, 5 * kSecond);
  auto del = std::find_if(s.actions.begin(), s.actions.end(),
                          [](const ScenarioAction& a) { return a.kind == ActionKind::Delete && a.app == "p-0"; });
  ASSERT_NE(del, s.actions.end());
  EXPECT_EQ(del->at, 500 * kSecond);
  EXPECT_EQ(s.horizon, 500 * kSecond + kMinute);  // the last deletion plus a minute
  for (std::size_t i = 1; i < s.actions.size(); ++i) EXPECT_LE(s.actions[i - 1].at, s.actions[i].at);
}

TEST(OpenbScenario, ArrivalsDeployInCreationOrderAndNeverDelete) {
  const Scenario s = openb_scenario(R"(, "replay": "arrivals", "interval": "2s", "limit": 3)");
  ASSERT_EQ(s.actions.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s.actions[i].kind, ActionKind::Deploy);
    EXPECT_EQ(s.actions[i].at, static_cast<Duration>(i + 1) * 2 * kSecond);
  }
  EXPECT_EQ(s.actions[0].app, "p-0");
  EXPECT_EQ(s.actions[2].app, "p-2");
}

TEST(OpenbScenario, OverridesChangeTheModelFigures) {
  const Scenario s = openb_scenario(R"(, "gpu_models": {"T4": {"vram_mb": 16000}})");
  EXPECT_EQ(s.slurm.nodes[0].gpu_memory_mb, 16000);
  EXPECT_EQ(s.apps[0].gpu_memory_mb, 8000);  // the share of the new smallest GPU
}

TEST(OpenbScenario, BadFieldsNameTheirPath) {
  auto e = openb_scenario_error(R"(, "time_scale": 0)");
  EXPECT_EQ(e.path(), "$.workload.time_scale");
  EXPECT_EQ(e.problem(), "expected a number in (0, 1], got 0");
  e = openb_scenario_error(R"(, "replay": "fast")");
  EXPECT_EQ(e.path(), "$.workload.replay");
  e = openb_scenario_error(R"(, "interval": "1s")");
  EXPECT_EQ(e.problem(), "applies only with \"replay\": \"arrivals\"");
  e = openb_scenario_error(R"(, "gpu_models": {"X9": {"vram_mb": 10}})");
  EXPECT_EQ(e.path(), "$.workload.gpu_models.X9");
  e = openb_scenario_error(R"(, "gpu_models": {"T4": {"vram_gb": 10}})");
  EXPECT_EQ(e.path(), "$.workload.gpu_models.T4.vram_gb");
  e = openb_scenario_error(R"(, "speed": 1)");
  EXPECT_EQ(e.path(), "$.workload.speed");
  try {
    parse_scenario_text(R"({"cluster": {"mode": "static", "partition": [{"count": 1}]},
                           "workload": {"source": "openb", "nodes": "nodes.csv", "pods": "pods.csv"}})",
                        openb_dir() + "/case.json");
    ADD_FAILURE() << "no error for a partition beside a workload";
  } catch (const ScenarioError& err) {
    EXPECT_EQ(err.path(), "$.cluster.partition");
  }
  // A missing trace file is named, not the scenario.
  try {
    parse_scenario_text(R"({"cluster": {"mode": "static"}, "workload": {"source": "openb", "nodes": "nodes.csv",
                           "pods": "absent.csv"}})",
                        openb_dir() + "/case.json");
    ADD_FAILURE() << "no error for a missing pod list";
  } catch (const ScenarioError& err) {
    EXPECT_EQ(err.file(), openb_dir() + "/absent.csv");
    EXPECT_EQ(err.problem(), "cannot open the file for reading");
  }
}

TEST(OpenbScenario, AppIdsMustNotCollideWithPods) {
  const auto e = openb_scenario_error("", R"("apps": [{"id": "p-1"}], )");
  EXPECT_EQ(e.path(), "$.apps[0].id");
  EXPECT_EQ(e.problem(), "duplicate app id 'p-1'");
}

// Every openb node is a warm worker: max_workers is their count unless the
// scenario states more, never the default of 4.
TEST(OpenbScenario, MaxWorkersIsTheNodeCountUnlessStatedHigher) {
  EXPECT_EQ(openb_scenario("").control.autoscaler.max_workers, 2);
  const Scenario more = parse_scenario_text(
      R"({"cluster": {"mode": "static", "max_workers": 9}, "workload": {"source": "openb", "nodes": "nodes.csv", "pods": "pods.csv"}})",
      openb_dir() + "/case.json");
  EXPECT_EQ(more.control.autoscaler.max_workers, 9);
}

namespace {

// Runs an openb workload of the given rows (arrivals one a second, never
// deleted) in a folder of its own, fraction packing over the whole cluster
// (legacy advertisement) unless `policies` says otherwise; `expect` is the
// scenario's expect array.
RunResult run_openb_rows(const std::string& nodes, const std::string& pods, const std::string& expect,
                         std::optional<std::string> policies = std::nullopt) {
  const testing_support::TestDir dir;
  dir.write("nodes.csv", std::string(kNodeHeader) + nodes);
  dir.write("pods.csv", std::string(kPodHeader) + pods);
  const std::string path = dir.write(
      "case.json", R"({"cluster": {"mode": "static", "introspection": {"cpus": 0, "env_build": "0s", "duration": "0s"}},
                      "policies": {"preset": "fixed", "advertisement": "legacy"},
                      "workload": {"source": "openb", "nodes": "nodes.csv", "pods": "pods.csv",
                                   "replay": "arrivals", "samples": 0},
                      "expect": )" + expect + "}");
  const Scenario s = load_scenario(path);
  RunOptions o;
  o.policies = policies;
  return run_scenario(s, o);
}

void expect_all_held(const RunResult& r) {
  for (const auto& e : r.expectations) EXPECT_TRUE(e.held) << e.path << " " << e.description << ": " << e.why;
}

}  // namespace

// gpu_milli is asked for exactly: 465 + 535 fill one GPU, 466 + 535 do not
// (rounded to two decimals both pairs would be 0.47 + 0.54 and 0.47 + 0.54).
TEST(OpenbScenario, GpuMilliIsKeptExact) {
  const std::string node = "n-0,8000,65536,1,T4\n";
  const std::string both = R"([
    {"event": "replica_placed", "match": {"app": "a", "devices": [0], "num_gpus": 0.465}, "count": 1},
    {"event": "replica_placed", "match": {"app": "b", "devices": [0], "num_gpus": 0.535}, "count": 1}])";
  expect_all_held(run_openb_rows(node,
                                 "a,1000,1024,1,465,,LS,Running,1,9,1\n"
                                 "b,1000,1024,1,535,,LS,Running,2,9,2\n",
                                 both));
  const std::string one = R"([
    {"event": "replica_placed", "match": {"app": "a", "devices": [0], "num_gpus": 0.466}, "count": 1},
    {"event": "replica_placed", "match": {"app": "b"}, "count": 0}])";
  expect_all_held(run_openb_rows(node,
                                 "a,1000,1024,1,466,,LS,Running,1,9,1\n"
                                 "b,1000,1024,1,535,,LS,Running,2,9,2\n",
                                 one));
}

// A pod's gpu_spec confines it to nodes of the models it names: the first
// node (a T4) has room, but a pod asking for a V100M32 goes to the second; a
// pod naming a model no node has is rejected at admission (no node with room
// offers its model), not left pending forever.
TEST(OpenbScenario, GpuSpecConfinesPlacementToTheNamedModels) {
  const std::string nodes = "n-0,8000,65536,1,T4\nn-1,8000,65536,1,V100M32\n";
  const RunResult r = run_openb_rows(nodes,
                                     "a,1000,1024,1,500,V100M32,LS,Running,1,9,1\n"
                                     "b,1000,1024,1,200,P100,LS,Running,2,9,2\n"
                                     "c,1000,1024,1,300,V100M32|T4,LS,Running,3,9,3\n"
                                     "d,1000,1024,1,400,,LS,Running,4,9,4\n",
                                     R"([
    {"event": "replica_placed", "match": {"app": "a", "node": "node-2"}, "count": 1},
    {"event": "replica_placed", "match": {"app": "b"}, "count": 0},
    {"app": "b", "admitted": false, "message_contains": "Insufficient resources"},
    {"event": "replica_placed", "match": {"app": "c", "node": "node-1"}, "count": 1},
    {"event": "replica_placed", "match": {"app": "d", "node": "node-1"}, "count": 1}])");
  expect_all_held(r);
  EXPECT_TRUE(r.unplaced.empty());
  EXPECT_NE(r.workload.find("3 with a gpu_spec, placed only on the GPU models it names"), std::string::npos)
      << r.workload;
}

// A multi-GPU pod is one gang: all its GPUs on one node or none. Two nodes
// with two free GPUs each hold no three-GPU pod (apart, they would); a
// two-GPU pod takes both GPUs of one node.
TEST(OpenbScenario, MultiGpuPodIsOneGangOnOneNode) {
  const std::string nodes = "n-0,8000,65536,2,T4\nn-1,8000,65536,2,T4\n";
  const RunResult r = run_openb_rows(nodes,
                                     "a,1000,1024,2,1000,,LS,Running,1,9,1\n"
                                     "b,1000,1024,3,1000,,LS,Running,2,9,2\n"
                                     "c,1000,1024,1,500,,LS,Running,3,9,3\n",
                                     R"([
    {"event": "replica_placed", "match": {"app": "a", "node": "node-1", "devices": [0, 1], "num_gpus": 2.0},
     "count": 1},
    {"event": "replica_placed", "match": {"app": "b"}, "count": 0},
    {"app": "b", "admitted": false, "message_contains": "'num_gpus': 3.0"},
    {"event": "replica_placed", "match": {"app": "c", "node": "node-2"}, "count": 1}])");
  expect_all_held(r);
}

namespace {

// The arrivals replay of these rows under `placement` with --frag-csv and
// --frag-nodes-csv: the two files' text.
std::pair<std::string, std::string> frag_csvs(const std::string& node_rows, const std::string& pod_rows,
                                              const std::string& placement) {
  const testing_support::TestDir dir;
  dir.write("nodes.csv", std::string(kNodeHeader) + node_rows);
  dir.write("pods.csv", std::string(kPodHeader) + pod_rows);
  const std::string path = dir.write(
      "case.json", R"({"cluster": {"mode": "static", "introspection": {"cpus": 0, "env_build": "0s", "duration": "0s"}},
                      "policies": {"preset": "fixed", "advertisement": "legacy"},
                      "workload": {"source": "openb", "nodes": "nodes.csv", "pods": "pods.csv",
                                   "replay": "arrivals", "samples": 0}})");
  RunOptions o;
  o.policies = "fixed,advertisement=legacy,placement=" + placement;
  o.outputs.frag_csv_path = dir.file("frag.csv");
  o.outputs.frag_nodes_csv_path = dir.file("frag-nodes.csv");
  run_scenario(load_scenario(path), o);
  auto read = [](const std::string& f) {
    std::ifstream in(f);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  return {read(o.outputs.frag_csv_path), read(o.outputs.frag_nodes_csv_path)};
}

const char* kFragHeader =
    "arrival,time_s,pod,placement,pod_gpus,arrived_gpus,arrived_share,gpus,allocated_gpus,unallocated_gpus,"
    "fragmented_gpus,nodes_fragmented,node_fragmentation_max\n";

}  // namespace

// --frag-csv measures a typical task naming GPU models as unable to use a
// node of another model. A T4 node and an A10 node, one GPU each; both pods
// are half an A10, so the typical task is half an A10. After a: the A10 has
// 0.5 free, which the task can use; the T4's whole idle GPU is fragment for
// it (blind to the model, it was none). After b the A10 is full and the T4
// is still the 1 fragmented GPU.
TEST(OpenbScenario, FragCsvCountsOtherModelsGpusAsFragment) {
  const auto [csv, nodes] = frag_csvs("n-0,8000,65536,1,T4\nn-1,8000,65536,1,A10\n",
                                      "a,1000,1024,1,500,A10,LS,Running,1,9,1\n"
                                      "b,1000,1024,1,500,A10,LS,Running,2,9,2\n",
                                      "first-fit");
  EXPECT_EQ(csv, std::string(kFragHeader) +
                     "1,1,a,first-fit,0.5,0.5,0.25,2,0.5,1.5,1,1,1\n"
                     "2,2,b,first-fit,0.5,1,0.5,2,1,1,1,1,1\n");
  EXPECT_EQ(nodes, "node,model,gpus,allocated_gpus,fragmented_gpus,cpus_free\nnode-1,T4,1,0,1,8\nnode-2,A10,1,1,0,6\n");
}

// --frag-csv: one row per pod, written once its placement settled. One T4
// node with two GPUs; the typical tasks are a half GPU (two pods) and two
// whole GPUs (one). After a: 0.5 booked; the two-GPU task finds one GPU
// wholly free, so the 1.5 idle GPUs are fragment for it: (2 * 0 + 1.5) / 3.
// b (two GPUs) finds no room: the arrived demand grows, nothing else moves.
// c takes the rest of device 0: 1 GPU idle, (2 * 0 + 1) / 3 fragmented.
TEST(OpenbScenario, FragCsvHasOneRowPerArrival) {
  const auto [csv, nodes] = frag_csvs("n-0,8000,65536,2,T4\n",
                                      "a,1000,1024,1,500,,LS,Running,1,9,1\n"
                                      "b,1000,1024,2,1000,,LS,Running,2,9,2\n"
                                      "c,1000,1024,1,500,,LS,Running,3,9,3\n",
                                      "best-fit");
  EXPECT_EQ(csv, std::string(kFragHeader) +
                     "1,1,a,best-fit,0.5,0.5,0.25,2,0.5,1.5,0.5,1,0.5\n"
                     "2,2,b,best-fit,2,2.5,1.25,2,0.5,1.5,0.5,1,0.5\n"
                     "3,3,c,best-fit,0.5,3,1.5,2,1,1,0.3333,1,0.3333\n");
  EXPECT_EQ(nodes, "node,model,gpus,allocated_gpus,fragmented_gpus,cpus_free\nnode-1,T4,2,1,0.3333,6\n");
}
