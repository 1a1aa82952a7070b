#include "models/status.hpp"

#include "engine/format.hpp"

#include <gtest/gtest.h>

#include "models/registry.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace vramsim {
namespace {

constexpr double kGiBBytes = 1024.0 * 1024.0 * 1024.0;
constexpr std::int64_t kMiB = 1024 * 1024;

GpuDevice device(std::string model, std::int64_t total_mb) {
  GpuDevice d;
  d.model = std::move(model);
  d.total_vram_mb = total_mb;
  return d;
}

NodeSpec gpu_node(std::string ip, bool head, std::string job, double cpus, int gpus,
                  std::int64_t mb_per_gpu, bool advertise_vram, std::string model = "NVIDIA A40",
                  std::string accel = "A40") {
  NodeSpec s;
  s.ip = std::move(ip);
  s.head = head;
  s.slurm_job_id = job;
  s.resources = {{kCPU, cpus}, {kMemory, 16 * kGiBBytes}};
  if (!job.empty()) s.resources.set(slurm_job_resource(job), 1);
  if (advertise_vram) s.resources.set(kVramMB, static_cast<double>(mb_per_gpu * gpus));
  for (int i = 0; i < gpus; ++i) s.devices.push_back(device(model, mb_per_gpu));
  s.accelerator_type = std::move(accel);
  return s;
}

NodeSpec cpu_node(std::string ip, bool head, double cpus) {
  NodeSpec s;
  s.ip = std::move(ip);
  s.head = head;
  s.resources = {{kCPU, cpus}, {kMemory, 8 * kGiBBytes}};
  return s;
}

// Placed and, for actors, created: running replicas.
void place(ClusterState& c, DemandKind kind, ResourceSet request, int times = 1) {
  for (int i = 0; i < times; ++i) c.submit(kind, "app", "replica app#" + std::to_string(i), request, 0);
  for (const auto& p : c.schedule_pending()) c.actor_created(p.demand);
}

// Europa: Ray reads "NVIDIA GeForce RTX 3090" as accelerator type "G" (the
// first capital run after the vendor word), as the real status line shows.
ClusterState europa() {
  ClusterState c;
  NodeSpec s = gpu_node("10.0.0.7", false, "4711", 8, 1, 24576, true, "NVIDIA GeForce RTX 3090", "G");
  s.resources.set(kMemory, 32 * kGiBBytes);
  const NodeId id = c.add_node(std::move(s), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.01}, {kVramMB, 5120}, {kCPU, 1}}, 4);
  // A fifth replica no longer fits the advertised VRAM_MB and stays pending.
  place(c, DemandKind::Actor, {{kGPU, 0.01}, {kVramMB, 5120}, {kCPU, 1}});
  c.report_gpu_memory(id, 6'200'000'000, 100 * kSecond);
  return c;
}

// deNBI: the worker advertises no VRAM_MB; one replica books a 0.33 fraction.
ClusterState denbi() {
  ClusterState c;
  const NodeId id =
      c.add_node(gpu_node("10.0.0.5", false, "123", 8, 1, 15360, false, "Tesla T4", "T4"), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.33}, {kCPU, 1}});
  c.report_gpu_memory(id, 4'500'000'000, 110 * kSecond);
  return c;
}

constexpr SimTime kQueryAt = 120 * kSecond;

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Compares `actual` with tests/models/status-golden/<name>, or rewrites the file when
// VRAMSIM_UPDATE_GOLDEN=1.
void check_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path =
      std::filesystem::path(VRAMSIM_SOURCE_DIR) / "tests" / "models" / "status-golden" / name;
  const char* update = std::getenv("VRAMSIM_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    std::cout << "rewrote " << path << "\n";
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with VRAMSIM_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "golden " << path
                                    << " differs (VRAMSIM_UPDATE_GOLDEN=1 rewrites it)";
}

const std::vector<std::string> kNodeKeys = {
    "node_ip",          "head",            "total_cpu",    "used_cpu",    "total_gpu",
    "used_gpu",         "total_vram_mb",   "used_vram_mb", "total_gpu_memory",
    "used_gpu_memory",  "total_memory",    "used_memory",  "accelerator_type",
    "gpu_device_name",  "slurm_job_id"};
const std::vector<std::string> kRollupKeys = {
    "total_cpu",     "used_cpu",         "total_gpu",       "used_gpu",     "total_vram_mb",
    "used_vram_mb",  "total_gpu_memory", "used_gpu_memory", "total_memory", "used_memory"};

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

// Golden ----------------------------------------------------------------------

TEST(StatusGolden, Europa) {
  const Json s = get_cluster_state(europa(), kQueryAt);
  check_golden("europa.json", s.dump(2) + "\n");
  check_golden("europa.txt", join_lines(format_status_lines(s)));
}

TEST(StatusGolden, Denbi) {
  const Json s = get_cluster_state(denbi(), kQueryAt);
  check_golden("denbi.json", s.dump(2) + "\n");
  check_golden("denbi.txt", join_lines(format_status_lines(s)));
}

// The goldens pin the whole text; these state the cases' meaning outright.
TEST(StatusCases, EuropaFourReplicasBookFractionAndVramSeparately) {
  const Json s = get_cluster_state(europa(), kQueryAt);
  const Json& n = s["nodes"]["node-1"];
  EXPECT_DOUBLE_EQ(n["used_gpu"].get<double>(), 0.04);
  EXPECT_EQ(n["used_vram_mb"], 20480);
  EXPECT_EQ(n["total_vram_mb"], 24576);
  EXPECT_EQ(n["used_gpu_memory"], 6'200'000'000);
  EXPECT_EQ(n["total_gpu_memory"], 24576 * kMiB);
  EXPECT_EQ(format_status_lines(s),
            std::vector<std::string>{"  10.0.0.7 [worker] G GPU: 0.04/1 booked: 20480/24576 MB  "
                                     "VRAM: 5.8/24.0 GiB  CPU: 4/8"});
}

TEST(StatusCases, DenbiWithoutVramMbReportsZeroAndNoBookedPart) {
  const Json s = get_cluster_state(denbi(), kQueryAt);
  const Json& n = s["nodes"]["node-1"];
  EXPECT_DOUBLE_EQ(n["used_gpu"].get<double>(), 0.33);
  EXPECT_EQ(n["total_vram_mb"], 0);
  EXPECT_EQ(n["used_vram_mb"], 0);
  const auto lines = format_status_lines(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("booked:"), std::string::npos);
  EXPECT_EQ(lines[0], "  10.0.0.5 [worker] T4 GPU: 0.33/1 VRAM: 4.2/15.0 GiB  CPU: 1/8");
}

// JSON ------------------------------------------------------------------------

TEST(StatusJson, KeysAlwaysPresentInOrder) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, false), 0);
  c.add_node(gpu_node("10.0.0.3", false, "8", 8, 2, 40960, true), 0);
  for (bool slurm : {true, false}) {
    const Json s = get_cluster_state(c, 0, {.slurm_mode = slurm});
    EXPECT_EQ(keys(s), (std::vector<std::string>{"nodes", "cluster"}));
    EXPECT_EQ(keys(s["nodes"]), (std::vector<std::string>{"head", "node-1", "node-2"}));
    for (const auto& [id, n] : s["nodes"].items()) EXPECT_EQ(keys(n), kNodeKeys) << id;
    auto want = kRollupKeys;
    if (slurm) want.push_back("pending_resources");
    EXPECT_EQ(keys(s["cluster"]), want);
  }
}

// The real status leaves the head out in SLURM mode: no "[HEAD] CPU: 0/0"
// line, and nothing of the head in the rollup.
TEST(StatusJson, ExcludeHeadNodeDropsTheHeadFromNodesAndRollup) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, false), 0);
  StatusOptions opts;
  opts.exclude_head_node = true;
  const Json s = get_cluster_state(c, 0, opts);
  EXPECT_EQ(keys(s["nodes"]), (std::vector<std::string>{"node-1"}));
  EXPECT_EQ(s["cluster"]["total_cpu"], 8.0);
  const auto lines = format_status_lines(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("HEAD"), std::string::npos) << lines[0];
  EXPECT_EQ(get_cluster_state(c, 0)["cluster"]["total_cpu"], 12.0);
}

TEST(StatusJson, NumberTypes) {
  const Json n = get_cluster_state(europa(), kQueryAt)["nodes"]["node-1"];
  for (const char* k : {"total_cpu", "used_cpu", "total_gpu", "used_gpu"})
    EXPECT_TRUE(n[k].is_number_float()) << k;
  for (const char* k : {"total_vram_mb", "used_vram_mb", "total_gpu_memory", "used_gpu_memory",
                        "total_memory", "used_memory"})
    EXPECT_TRUE(n[k].is_number_integer()) << k;
  EXPECT_EQ(n["total_memory"], std::int64_t{32} * 1024 * kMiB);
  EXPECT_EQ(n["used_memory"], 0);
  EXPECT_EQ(n["head"], false);
  EXPECT_EQ(n["slurm_job_id"], "4711");
}

TEST(StatusJson, CpuOnlyNodeHasNoGpuMemory) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  const Json n = get_cluster_state(c, 0)["nodes"]["head"];
  EXPECT_EQ(n["total_gpu"], 0.0);
  EXPECT_EQ(n["total_vram_mb"], 0);
  // proxy_actor.py: a node without GPUs reads 0 bytes and "NA" as its type.
  EXPECT_EQ(n["total_gpu_memory"], 0);
  EXPECT_EQ(n["used_gpu_memory"], 0);
  EXPECT_EQ(n["accelerator_type"], "NA");
  EXPECT_EQ(n["gpu_device_name"], "");
  EXPECT_EQ(n["slurm_job_id"], "");
}

TEST(StatusJson, UnobservedDeviceIsNA) {
  ClusterState c;
  c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, true), 0);
  const Json n = get_cluster_state(c, 0)["nodes"]["node-1"];
  EXPECT_EQ(n["total_gpu_memory"], 24576 * kMiB);
  EXPECT_EQ(n["used_gpu_memory"], "NA");
}

TEST(StatusJson, StaleSampleIsNA) {
  ClusterState c;
  const NodeId id = c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, true), 0);
  c.report_gpu_memory(id, 1000, 10 * kSecond);
  EXPECT_EQ(get_cluster_state(c, 40 * kSecond)["nodes"][id]["used_gpu_memory"], 1000);
  EXPECT_EQ(get_cluster_state(c, 40 * kSecond + 1)["nodes"][id]["used_gpu_memory"], "NA");
  EXPECT_EQ(get_cluster_state(c, 100 * kSecond)["nodes"][id]["used_gpu_memory"], "NA");
  EXPECT_EQ(get_cluster_state(c, 100 * kSecond, {.observed_max_age = 90 * kSecond})["nodes"][id]
                                                                                     ["used_gpu_memory"],
            1000);
  // The total is a property of the device and stays known.
  EXPECT_EQ(get_cluster_state(c, 100 * kSecond)["nodes"][id]["total_gpu_memory"], 24576 * kMiB);
}

TEST(StatusJson, LastPushWinsPerNode) {
  // Two devices, one value: the node keeps the last push of any replica there
  // (proxy_actor.py:476-490@1725d5c), never a sum over devices.
  ClusterState c;
  const NodeId id = c.add_node(gpu_node("10.0.0.3", false, "8", 8, 2, 40960, true), 0);
  EXPECT_EQ(get_cluster_state(c, 0)["nodes"][id]["used_gpu_memory"], "NA") << "no push yet";
  c.report_gpu_memory(id, 1000, 5 * kSecond);
  c.report_gpu_memory(id, 2000, 10 * kSecond);
  EXPECT_EQ(get_cluster_state(c, 35 * kSecond)["nodes"][id]["used_gpu_memory"], 2000);
  c.report_gpu_memory(id, 1000, 12 * kSecond);
  EXPECT_EQ(get_cluster_state(c, 35 * kSecond)["nodes"][id]["used_gpu_memory"], 1000);
  EXPECT_EQ(get_cluster_state(c, 42 * kSecond)["nodes"][id]["used_gpu_memory"], 1000) << "30 s old still counts";
  EXPECT_EQ(get_cluster_state(c, 42 * kSecond + 1)["nodes"][id]["used_gpu_memory"], "NA");
  c.report_gpu_memory("node-99", 7, 0);  // unknown node: ignored
}

TEST(StatusJson, UsedGpuIsFractionNotVram) {
  ClusterState c;
  c.add_node(gpu_node("10.0.0.3", false, "8", 8, 2, 40960, true), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.3}, {kVramMB, 12000}}, 3);
  place(c, DemandKind::Actor, {{kGPU, 1}, {kVramMB, 40000}});
  const Json n = get_cluster_state(c, 0)["nodes"]["node-1"];
  EXPECT_DOUBLE_EQ(n["used_gpu"].get<double>(), 1.9);
  EXPECT_EQ(n["total_gpu"], 2.0);
  EXPECT_EQ(n["used_vram_mb"], 76000);
  EXPECT_EQ(n["total_vram_mb"], 81920);
}

TEST(StatusJson, OnlyAliveNodesListed) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  const NodeId gone = c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, true), 0);
  c.add_node(gpu_node("10.0.0.3", false, "8", 8, 1, 24576, true), 0);
  c.remove_node(gone);
  const Json s = get_cluster_state(c, 0);
  EXPECT_EQ(keys(s["nodes"]), (std::vector<std::string>{"head", "node-2"}));
  EXPECT_EQ(s["cluster"]["total_cpu"], 12.0);
  EXPECT_EQ(s["cluster"]["total_vram_mb"], 24576);
  EXPECT_EQ(format_status_lines(s).size(), 2u);
}

TEST(StatusJson, EmptyCluster) {
  const Json s = get_cluster_state(ClusterState{}, 0);
  EXPECT_TRUE(s["nodes"].empty());
  EXPECT_EQ(s["cluster"]["total_cpu"], 0.0);
  EXPECT_EQ(s["cluster"]["total_vram_mb"], 0);
  EXPECT_EQ(s["cluster"]["total_gpu_memory"], 0);
  EXPECT_EQ(s["cluster"]["pending_resources"]["total"], 0);
  EXPECT_TRUE(format_status_lines(s).empty());
  EXPECT_TRUE(status_csv_rows(s, 0).empty());
}

// Rollup ----------------------------------------------------------------------

TEST(StatusRollup, SumsTwoNodes) {
  ClusterState c;
  const NodeId head = c.add_node(gpu_node("10.0.0.1", true, "", 8, 1, 24576, true), 0);
  const NodeId w = c.add_node(gpu_node("10.0.0.2", false, "9", 16, 2, 40960, true), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.1}, {kCPU, 0.1}, {kVramMB, 4000}});  // lands on head
  place(c, DemandKind::Actor, {{kGPU, 0.2}, {kCPU, 0.2}, {kVramMB, 30000}, {kMemory, 1e9}});
  c.report_gpu_memory(head, 3'000'000'000, 0);
  c.report_gpu_memory(w, 2'000'000'000, 0);
  const Json s = get_cluster_state(c, 0);
  const Json& cl = s["cluster"];
  for (const auto& k : kRollupKeys) {
    const Json& a = s["nodes"][head][k];
    const Json& b = s["nodes"][w][k];
    if (a.is_number_float())
      EXPECT_DOUBLE_EQ(cl[k].get<double>(), a.get<double>() + b.get<double>()) << k;
    else
      EXPECT_EQ(cl[k].get<std::int64_t>(), a.get<std::int64_t>() + b.get<std::int64_t>()) << k;
  }
  // Summed in fixed point: exactly 0.3, as Ray holds it.
  EXPECT_EQ(cl["used_cpu"].get<double>(), 0.3);
  EXPECT_EQ(cl["used_gpu"].get<double>(), 0.3);
  EXPECT_EQ(cl["total_gpu"], 3.0);
  EXPECT_EQ(cl["used_vram_mb"], 34000);
  EXPECT_EQ(cl["total_vram_mb"], 24576 + 81920);
  EXPECT_EQ(cl["used_gpu_memory"], 5'000'000'000);
  EXPECT_EQ(cl["total_gpu_memory"], (24576 + 2 * 40960) * kMiB);
  EXPECT_EQ(cl["used_memory"], 1'000'000'000);
}

TEST(StatusRollup, SkipsNAOnSomeNodes) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);  // no GPUs: 0 for both
  const NodeId a = c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, true), 0);
  c.add_node(gpu_node("10.0.0.3", false, "8", 8, 1, 16384, true), 0);  // never sampled
  c.report_gpu_memory(a, 5'000'000'000, 0);
  const Json cl = get_cluster_state(c, 0)["cluster"];
  EXPECT_EQ(cl["used_gpu_memory"], 5'000'000'000);
  EXPECT_EQ(cl["total_gpu_memory"], (24576 + 16384) * kMiB);
}

// The real rollup starts at 0 and adds numbers only: "NA" on every GPU node
// still rolls up to 0, never to "NA".
TEST(StatusRollup, NAOnEveryNodeRollsUpToZero) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  const NodeId a = c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, true), 0);
  c.add_node(gpu_node("10.0.0.3", false, "8", 8, 1, 16384, true), 0);
  Json s = get_cluster_state(c, 0);
  EXPECT_EQ(s["nodes"][a]["used_gpu_memory"], "NA");
  EXPECT_EQ(s["cluster"]["used_gpu_memory"], 0);
  EXPECT_EQ(s["cluster"]["total_gpu_memory"], (24576 + 16384) * kMiB);

  ClusterState cpu_only;
  cpu_only.add_node(cpu_node("10.0.0.1", true, 4), 0);
  cpu_only.add_node(cpu_node("10.0.0.4", false, 4), 0);
  const Json cl = get_cluster_state(cpu_only, 0)["cluster"];
  EXPECT_EQ(cl["used_gpu_memory"], 0);
  EXPECT_EQ(cl["total_gpu_memory"], 0);
  EXPECT_EQ(cl["total_cpu"], 8.0);
}

// Pending ---------------------------------------------------------------------

TEST(StatusPending, ListsAndCountsInSlurmMode) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 2), 0);
  c.submit(DemandKind::Actor, "a", "replica a#0", {{kGPU, 0.5}, {kVramMB, 8000}}, 1);
  c.submit(DemandKind::Task, "a", "task", {{kCPU, 1}}, 2);  // fits: placed
  c.submit(DemandKind::Job, "a", "job", {{kCPU, 4}}, 3);
  c.submit(DemandKind::Actor, "b", "replica b#0", {{kGPU, 1}}, 4);
  c.submit(DemandKind::Task, "b", "task", {{kCPU, 3}}, 5);
  c.schedule_pending();
  const Json p = get_cluster_state(c, 0)["cluster"]["pending_resources"];
  EXPECT_EQ(keys(p), (std::vector<std::string>{"actors", "jobs", "tasks", "total"}));
  const Json want_actors = Json::array({Json{{"required_resources", {{"GPU", 0.5}, {"VRAM_MB", 8000.0}}}},
                                        Json{{"required_resources", {{"GPU", 1.0}}}}});
  EXPECT_EQ(p["actors"], want_actors);
  EXPECT_EQ(p["jobs"], Json::array({Json{{"required_resources", {{"CPU", 4.0}}}}}));
  EXPECT_EQ(p["tasks"], Json::array({Json{{"required_resources", {{"CPU", 3.0}}}}}));
  EXPECT_EQ(p["total"], 4);
}

// ProxyActor.get_cluster_state builds pending_resources from
// _get_pending_actors (proxy_actor.py:649-655@1725d5c): an actor placed but
// not yet created (installing its runtime env) is listed, as the autoscaler
// reads it; the repaired variant lists only those waiting for a node.
TEST(StatusPending, AnActorInCreationIsListedUnlessTheVariantExcludesIt) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", false, 4), 0);
  c.submit(DemandKind::Actor, "a", "replica a#0", {{kCPU, 1}}, 1);  // placed, installing
  c.submit(DemandKind::Actor, "a", "replica a#1", {{kCPU, 1}}, 2);  // placed, created
  c.submit(DemandKind::Actor, "b", "replica b#0", {{kCPU, 8}}, 3);  // waits for a node
  const auto placed = c.schedule_pending();
  ASSERT_EQ(placed.size(), 2u);
  c.actor_created(placed[1].demand);
  const Json counted = get_cluster_state(c, 0)["cluster"]["pending_resources"];
  EXPECT_EQ(counted["actors"], Json::array({Json{{"required_resources", {{"CPU", 1.0}}}},
                                            Json{{"required_resources", {{"CPU", 8.0}}}}}));
  EXPECT_EQ(counted["total"], 2);
  StatusOptions repaired;
  repaired.pending = PolicyRegistry::instance().make<PendingPolicy>("excludes-installing");
  const Json excluded = get_cluster_state(c, 0, repaired)["cluster"]["pending_resources"];
  EXPECT_EQ(excluded["actors"], Json::array({Json{{"required_resources", {{"CPU", 8.0}}}}}));
  EXPECT_EQ(excluded["total"], 1);
}

TEST(StatusPending, AbsentOutsideSlurmMode) {
  ClusterState c;
  c.submit(DemandKind::Actor, "a", "replica a#0", {{kGPU, 1}}, 0);
  const Json s = get_cluster_state(c, 0, {.slurm_mode = false});
  EXPECT_FALSE(s["cluster"].contains("pending_resources"));
}

// CLI line ----------------------------------------------------------------------

TEST(StatusLine, HeadWithBookedVram) {
  ClusterState c;
  const NodeId h =
      c.add_node(gpu_node("172.17.0.3", true, "", 8, 1, 24576, true, "NVIDIA GeForce RTX 3090", "G"), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.01}, {kVramMB, 5120}, {kCPU, 2}}, 4);
  c.report_gpu_memory(h, 6'200'000'000, 0);
  EXPECT_EQ(format_status_lines(get_cluster_state(c, 0)),
            std::vector<std::string>{
                "  172.17.0.3 [HEAD] G GPU: 0.04/1 booked: 20480/24576 MB  VRAM: 5.8/24.0 GiB  CPU: 8/8"});
}

TEST(StatusLine, WorkerWithoutVramMb) {
  ClusterState c;
  const NodeId w = c.add_node(gpu_node("10.0.0.5", false, "5", 8, 1, 24576, false, "Tesla T4", "T4"), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.99}, {kCPU, 6}});
  c.report_gpu_memory(w, 6'200'000'000, 0);
  EXPECT_EQ(format_status_lines(get_cluster_state(c, 0)),
            std::vector<std::string>{"  10.0.0.5 [worker] T4 GPU: 0.99/1 VRAM: 5.8/24.0 GiB  CPU: 6/8"});
}

TEST(StatusLine, UnknownObservedMemoryPrintsNA) {
  ClusterState c;
  c.add_node(gpu_node("10.0.0.6", false, "6", 8, 2, 40960, true), 0);
  EXPECT_EQ(format_status_lines(get_cluster_state(c, 0)),
            std::vector<std::string>{
                "  10.0.0.6 [worker] A40 GPU: 0.00/2 booked: 0/81920 MB  VRAM: NA/80.0 GiB  CPU: 0/8"});
}

// The CLI prints info.get('accelerator_type', '?'); the key is always there,
// None on a GPU node without an accelerator_type resource.
TEST(StatusLine, NoAcceleratorTypePrintsPythonsNone) {
  ClusterState c;
  const NodeId w = c.add_node(gpu_node("10.0.0.8", false, "8", 4, 1, 16384, false, "Tesla V100", ""), 0);
  c.report_gpu_memory(w, 0, 0);
  const Json s = get_cluster_state(c, 0);
  EXPECT_EQ(s["nodes"][w]["gpu_device_name"], "Tesla V100");
  EXPECT_TRUE(s["nodes"][w]["accelerator_type"].is_null());
  EXPECT_EQ(format_status_lines(s),
            std::vector<std::string>{"  10.0.0.8 [worker] None GPU: 0.00/1 VRAM: 0.0/16.0 GiB  CPU: 0/4"});
}

// CPU as the CLI's :.0f: Python rounds half to even, so 0.5 prints 0 and
// 2.5 prints 2; a node without GPUs carries accelerator_type "NA".
TEST(StatusLine, CpuOnlyNodesAndFractionalCpu) {
  for (const auto& [cpus, printed] : {std::pair{0.5, "0"}, {2.5, "2"}, {3.5, "4"}}) {
    ClusterState c;
    const NodeId h = c.add_node(cpu_node("10.0.0.1", true, 8), 0);
    c.add_node(cpu_node("10.0.0.4", false, 4), 0);
    place(c, DemandKind::Task, {{kCPU, 8}});
    place(c, DemandKind::Task, {{kCPU, cpus}});
    const Json s = get_cluster_state(c, 0);
    EXPECT_EQ(s["nodes"][h]["accelerator_type"], "NA");
    EXPECT_EQ(format_status_lines(s), (std::vector<std::string>{"  10.0.0.1 [HEAD] CPU: 8/8",
                                                                "  10.0.0.4 [worker] CPU: " + std::string(printed) + "/4"}))
        << cpus;
  }
}

// The whole text of `bioengine cluster status`: the cluster line (CPUs :.0f,
// GPUs :.1f/:.0f), then the GPU nodes, then the CPU-only ones.
TEST(StatusText, ClusterLineThenGpuThenCpuOnlySections) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", false, 8), 0);
  const NodeId g = c.add_node(gpu_node("10.0.0.5", false, "5", 8, 1, 24576, true, "NVIDIA GeForce RTX 3090", "G"), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.01}, {kVramMB, 5120}, {kCPU, 2}}, 4);
  c.report_gpu_memory(g, 6'200'000'000, 0);
  EXPECT_EQ(format_status_text(get_cluster_state(c, 0)),
            (std::vector<std::string>{"", "Cluster: 8/16 CPUs, 0.0/1 GPUs", "", "GPU nodes:",
                                      "  10.0.0.5 [worker] G GPU: 0.04/1 booked: 20480/24576 MB  VRAM: 5.8/24.0 GiB  CPU: 8/8",
                                      "", "CPU-only nodes:", "  10.0.0.1 [worker] CPU: 0/8"}));
  ClusterState none;
  EXPECT_EQ(format_status_text(get_cluster_state(none, 0)),
            (std::vector<std::string>{"", "Cluster: 0/0 CPUs, 0.0/0 GPUs", ""}));
}

// Summary -----------------------------------------------------------------------

TEST(StatusSummary, BookedWhenAdvertised) {
  EXPECT_EQ(vram_summary(get_cluster_state(europa(), kQueryAt)), "VRAM booked: 20480/24576 MB");
}

TEST(StatusSummary, ZeroTotalNeverReadsAsFree) {
  for (const Json& s : {get_cluster_state(denbi(), kQueryAt), get_cluster_state(ClusterState{}, 0)}) {
    const std::string line = vram_summary(s);
    EXPECT_EQ(line, "VRAM booked: not tracked (no node advertises VRAM_MB)");
    EXPECT_EQ(line.find("free"), std::string::npos);
    EXPECT_EQ(line.find("0 MB"), std::string::npos);
  }
}

TEST(StatusSummary, NamesGpuNodesOutsideTheTotal) {
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  c.add_node(gpu_node("10.0.0.2", false, "7", 8, 1, 24576, true), 0);
  c.add_node(gpu_node("10.0.0.3", false, "8", 8, 1, 24576, false), 0);
  const std::string line = vram_summary(get_cluster_state(c, 0));
  EXPECT_EQ(line, "VRAM booked: 0/24576 MB (not tracked on 1 GPU node without VRAM_MB)");
  EXPECT_EQ(line.find("free"), std::string::npos);
}

// CSV -----------------------------------------------------------------------------

TEST(StatusCsv, Header) {
  EXPECT_EQ(status_csv_header(), "time_s,node,used_gpu,used_vram_mb,total_vram_mb,used_cpu");
}

TEST(StatusCsv, RowsPerNodeInRegistrationOrder) {
  EXPECT_EQ(status_csv_rows(get_cluster_state(europa(), kQueryAt), kQueryAt),
            std::vector<std::string>{"120.000,node-1,0.04,20480,24576,4"});
  ClusterState c;
  c.add_node(cpu_node("10.0.0.1", true, 4), 0);
  c.add_node(gpu_node("10.0.0.5", false, "5", 8, 1, 15360, false), 0);
  place(c, DemandKind::Actor, {{kGPU, 0.33}, {kCPU, 1.5}});
  const SimTime t = 1234567;  // 1.234567 s
  EXPECT_EQ(status_csv_rows(get_cluster_state(c, t), t),
            (std::vector<std::string>{"1.235,head,0,0,0,0", "1.235,node-1,0.33,0,0,1.5"}));
}

TEST(FormatAmount, RaySpellingsAndValuesPastAnyInteger) {
  EXPECT_EQ(format_amount(2.0), "2");
  EXPECT_EQ(format_amount(0.04), "0.04");
  EXPECT_EQ(format_amount(1.0 / 3.0), "0.3333");
  EXPECT_EQ(format_amount(-0.00001), "0");  // integral at 1e-4, and no "-0"
  EXPECT_EQ(format_amount(123456789012.0), "123456789012");
  // Beyond a long long (undefined to cast) and beyond "%.4f"'s buffer.
  EXPECT_EQ(format_amount(1e300), "1e+300");
  EXPECT_EQ(format_amount(-1e19), "-1e+19");
  EXPECT_EQ(format_amount(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_amount(std::nan("")), "nan");
}

}  // namespace
}  // namespace vramsim
