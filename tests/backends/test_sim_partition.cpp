// The simulated partition's own bookkeeping: squeue's listing in id order
// past an extra digit, and the exclusive partition handing out the lowest
// free node that fits, across node types and past the first 64 hosts.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/sim/sim_slurm_backend.hpp"
#include "engine/event_loop.hpp"
#include "models/policy_set.hpp"

namespace vramsim {
namespace {

struct Partition {
  EventLoop loop;
  RandomStreams rng{5};
  TraceRecorder trace;
  std::shared_ptr<MemorySink> sink = std::make_shared<MemorySink>();
  std::unique_ptr<SimSlurmBackend> sim;

  explicit Partition(std::vector<PartitionNodeType> types) {
    trace.add_sink(sink);
    SimSlurmConfig sc;
    sc.nodes = std::move(types);
    sc.cancel_latency = LatencyModel::fixed(1 * kSecond);
    sim = std::make_unique<SimSlurmBackend>(loop, rng, trace, sc, resolve_policies("fixed").advertisement);
  }
  std::string submit(int cpus) {
    WorkerJobSize z;
    z.cpus = cpus;
    z.mem_per_cpu_gb = 1;
    std::string job;
    sim->submit_worker(z, [&](std::optional<std::string> id, const std::string& error) {
      ASSERT_TRUE(id) << error;
      job = *id;
    });
    return job;
  }
  // The host the job started on, "" while it has not.
  std::string host_of(const std::string& job) const {
    for (const auto& e : sink->of_kind(TraceKind::job_started))
      if (e["job"] == job) return string_field(e["host"]);
    return "";
  }
};

PartitionNodeType node_type(int count, int cpus) {
  PartitionNodeType t;
  t.count = count;
  t.cpus = cpus;
  t.memory_gb = 512;
  t.gpus = 0;
  return t;
}

std::vector<std::string> ids(const std::vector<JobInfo>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(j.id);
  return out;
}

// Ids run from 1000, so the 9001st job is 10000: listed after 9999, as squeue
// lists by number, and a poll's answer keeps that order.
TEST(SimPartition, ListingKeepsIdOrderPastAnExtraDigit) {
  constexpr int kJobs = 9002;
  Partition p({node_type(1, 8)});
  std::vector<std::string> submitted;
  for (int i = 0; i < kJobs; ++i) submitted.push_back(p.submit(8));
  ASSERT_EQ(submitted[8999], "9999");
  ASSERT_EQ(submitted[9000], "10000");
  EXPECT_EQ(ids(p.sim->list_jobs()), submitted);
  EXPECT_EQ(p.sim->still_listed({"10001", "10000", "9999", "1000"}),
            (std::vector<std::string>{"1000", "9999", "10000", "10001"}));

  // Cancel most of them (all still pending, so each ends at once): the
  // listing drops exactly those, in order, through the compactions.
  std::vector<std::string> gone, kept;
  for (int i = 0; i < kJobs; ++i) (i % 5 == 0 ? kept : gone).push_back(submitted[static_cast<std::size_t>(i)]);
  p.sim->cancel_jobs(gone);
  EXPECT_EQ(p.sim->job_count(), kept.size());
  EXPECT_EQ(ids(p.sim->list_jobs()), kept);
  EXPECT_EQ(p.sim->still_listed({"10000", "9995", "9999"}), (std::vector<std::string>{"9995", "10000"}));
  EXPECT_EQ(p.sim->jobs().size(), static_cast<std::size_t>(kJobs)) << "every job stays in the history";
}

// 70 small hosts (10.0.0.1-70) then one big one (10.0.0.71, in the second
// word of the free-host map): a job only the big host fits goes there, small
// jobs take the lowest free host, and a host freed by an end is the next one
// handed out.
TEST(SimPartition, ExclusiveJobsTakeTheLowestFreeHostThatFits) {
  Partition p({node_type(70, 8), node_type(1, 64)});
  const std::string big = p.submit(64);
  std::vector<std::string> small;
  for (int i = 0; i < 70; ++i) small.push_back(p.submit(8));
  const std::string waits = p.submit(8);
  p.loop.run(1 * kMinute);
  EXPECT_EQ(p.host_of(big), "10.0.0.71");
  for (int i = 0; i < 70; ++i) EXPECT_EQ(p.host_of(small[static_cast<std::size_t>(i)]), "10.0.0." + std::to_string(i + 1));
  EXPECT_EQ(p.host_of(waits), "") << "every host is taken";

  // Host 10.0.0.66 (second word) and then 10.0.0.3 free up; the waiting job
  // takes the first to free, the next job the other.
  p.sim->cancel_jobs({small[65]});
  p.loop.run(p.loop.now() + 10 * kSecond);
  EXPECT_EQ(p.host_of(waits), "10.0.0.66");
  p.sim->cancel_jobs({small[2]});
  p.loop.run(p.loop.now() + 10 * kSecond);
  const std::string next = p.submit(8);
  p.loop.run(p.loop.now() + 1 * kMinute);
  EXPECT_EQ(p.host_of(next), "10.0.0.3");
  // With the big host free again, the lowest free host that fits a big job
  // is still the big one, past the small one that is free.
  p.sim->cancel_jobs({big, small[4]});
  p.loop.run(p.loop.now() + 10 * kSecond);
  const std::string big2 = p.submit(64);
  p.loop.run(p.loop.now() + 1 * kMinute);
  EXPECT_EQ(p.host_of(big2), "10.0.0.71");
}

// sbatch refuses a size no node type fits, whatever the partition's length.
TEST(SimPartition, SizeNoNodeTypeFitsIsRefused) {
  Partition p({node_type(3, 8), node_type(0, 128)});
  WorkerJobSize z;
  z.cpus = 128;
  z.mem_per_cpu_gb = 1;
  bool refused = false;
  p.sim->submit_worker(z, [&](std::optional<std::string> id, const std::string& error) {
    refused = !id && error.find("Requested node configuration is not available") != std::string::npos;
  });
  EXPECT_TRUE(refused) << "a node type with no nodes runs nothing";
  EXPECT_EQ(p.sink->of_kind(TraceKind::job_rejected).size(), 1u);
}

}  // namespace
}  // namespace vramsim
