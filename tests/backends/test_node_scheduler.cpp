// The node scheduler: on one node it schedules exactly as the processor
// scheduler does; GPUs, memory and multi-node jobs constrain placement and
// backfilling; shares never exceed a node's capacity.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>

#include "backends/sim/node_scheduler.hpp"

using namespace vramsim;

namespace {

struct Placed {
  std::int64_t start = -1, end = -1;
  std::vector<std::size_t> nodes;
  PartitionOutcome outcome = PartitionOutcome::Completed;
  bool operator==(const Placed&) const = default;
};

struct Sub {
  std::int64_t at;
  NodeJob job;
};

NodeJob njob(std::int64_t id, std::int64_t nodes, NodeShape per_node, std::int64_t run, std::int64_t est = -1) {
  NodeJob j;
  j.id = id;
  j.nodes = nodes;
  j.per_node = per_node;
  j.run_time = run;
  j.estimate = est < 0 ? run : est;
  return j;
}

std::map<std::int64_t, Placed> run(const std::vector<NodeShape>& nodes, PartitionPolicy p, const std::vector<Sub>& subs) {
  std::map<std::int64_t, Placed> out;
  NodeScheduler::Callbacks cb;
  cb.on_start = [&](const NodeJob& j, std::int64_t t, const std::vector<std::size_t>& where) {
    out[j.id].start = t;
    out[j.id].nodes = where;
  };
  cb.on_end = [&](const NodeJob& j, std::int64_t t, PartitionOutcome o) {
    out[j.id].end = t;
    out[j.id].outcome = o;
  };
  NodeScheduler s(nodes, p, cb);
  for (const auto& x : subs) s.submit(x.at, x.job);
  s.drain();
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(s.free(i), nodes[i]) << "node " << i;
  return out;
}

const NodeShape kGpuNode{8, 64000, 4};

}  // namespace

// Random workloads on one node of N cores give the same starts and ends as
// PartitionScheduler on N processors, under both policies.
TEST(NodeScheduler, OneNodeMatchesTheProcessorScheduler) {
  for (const auto policy : {PartitionPolicy::Fcfs, PartitionPolicy::Easy}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      std::mt19937_64 rng(seed);
      const std::int64_t procs = 1 + static_cast<std::int64_t>(rng() % 32);
      std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> a, b;
      PartitionScheduler::Callbacks pc;
      pc.on_start = [&](const PartitionJob& j, std::int64_t t) { a[j.id].first = t; };
      pc.on_end = [&](const PartitionJob& j, std::int64_t t, PartitionOutcome) { a[j.id].second = t; };
      NodeScheduler::Callbacks nc;
      nc.on_start = [&](const NodeJob& j, std::int64_t t, const std::vector<std::size_t>&) { b[j.id].first = t; };
      nc.on_end = [&](const NodeJob& j, std::int64_t t, PartitionOutcome) { b[j.id].second = t; };
      PartitionScheduler ps(procs, policy, pc);
      NodeScheduler ns({{procs, 0, 0}}, policy, nc);
      std::int64_t t = 0;
      for (int i = 0; i < 300; ++i) {
        t += static_cast<std::int64_t>(rng() % 20);
        PartitionJob p;
        p.id = i;
        p.procs = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(procs));
        p.run_time = 1 + static_cast<std::int64_t>(rng() % 200);
        p.estimate = p.run_time / 2 + static_cast<std::int64_t>(rng() % 300);
        if (rng() % 4 == 0) p.time_limit = static_cast<std::int64_t>(rng() % 150);
        ps.submit(t, p);
        NodeJob n = njob(i, 1, {p.procs, 0, 0}, p.run_time, p.estimate);
        n.time_limit = p.time_limit;
        ns.submit(t, n);
      }
      ps.drain();
      ns.drain();
      ASSERT_EQ(a.size(), 300u);
      EXPECT_EQ(a, b) << "seed " << seed;
    }
  }
}

TEST(NodeScheduler, GpusAreAResourceOfTheirOwn) {
  // Two nodes of 8 cores, 64 GB and 4 GPUs. A and B take all GPUs; C (1
  // GPU) waits although cores are free; D (cores only) runs beside them:
  // under FCFS only after C, under EASY at once (it fits, and the spare at
  // C's reservation covers it).
  const std::vector<Sub> subs = {{0, njob(1, 1, {2, 1000, 4}, 10)},
                                 {0, njob(2, 1, {2, 1000, 4}, 20)},
                                 {1, njob(3, 1, {1, 1000, 1}, 5)},
                                 {2, njob(4, 1, {4, 1000, 0}, 100)}};
  const auto fcfs = run({kGpuNode, kGpuNode}, PartitionPolicy::Fcfs, subs);
  EXPECT_EQ(fcfs.at(1), (Placed{0, 10, {0}}));
  EXPECT_EQ(fcfs.at(2), (Placed{0, 20, {1}}));
  EXPECT_EQ(fcfs.at(3), (Placed{10, 15, {0}}));
  EXPECT_EQ(fcfs.at(4), (Placed{10, 110, {0}}));
  const auto easy = run({kGpuNode, kGpuNode}, PartitionPolicy::Easy, subs);
  EXPECT_EQ(easy.at(3), (Placed{10, 15, {0}}));
  EXPECT_EQ(easy.at(4), (Placed{2, 102, {0}})) << "4 cores on node 0 leave C its GPU and core";
}

TEST(NodeScheduler, BackfillMustNotTakeWhatTheHeadReserved) {
  // Node 0: 8 cores, 4 GPUs; node 1: 2 cores. A holds 2 cores and the 4
  // GPUs of node 0 until 10. B (4 cores, 4 GPUs) reserves node 0 at 10,
  // leaving 4 of its cores spare then.
  //  X (6 cores, past 10) fits now in node 0's 6 free cores, but would eat
  //    B's reservation: must not backfill.
  //  Y (4 cores, past 10) fits in the spare: backfills at 3.
  //  Z (2 cores, ends at 9) ends before the reservation: backfills at 4.
  const std::vector<NodeShape> nodes = {kGpuNode, {2, 64000, 0}};
  const std::vector<Sub> subs = {{0, njob(1, 1, {2, 1000, 4}, 10)},
                                 {1, njob(2, 1, {4, 1000, 4}, 10)},
                                 {2, njob(3, 1, {6, 1000, 0}, 50)},
                                 {3, njob(4, 1, {4, 1000, 0}, 50)},
                                 {4, njob(5, 1, {2, 1000, 0}, 5)}};
  const auto r = run(nodes, PartitionPolicy::Easy, subs);
  EXPECT_EQ(r.at(2), (Placed{10, 20, {0}})) << "B starts at its reservation";
  EXPECT_EQ(r.at(4), (Placed{3, 53, {0}}));
  EXPECT_EQ(r.at(5), (Placed{4, 9, {0}}));
  EXPECT_EQ(r.at(3), (Placed{53, 103, {0}})) << "X waits for 6 free cores on node 0";
}

TEST(NodeScheduler, MemoryAndMultiNodeJobs) {
  // Three nodes of 8 cores and 64 GB. A takes 48 GB on node 0. B asks 2
  // nodes x 32 GB: nodes 1 and 2. C asks 3 nodes x 1 core: every node has
  // cores left, so it starts at once on all three. D asks 2 nodes x 20 GB:
  // node 0 has 16 GB and nodes 1, 2 have 32 GB: it takes 1 and 2.
  const std::vector<NodeShape> nodes(3, NodeShape{8, 64000, 0});
  const std::vector<Sub> subs = {{0, njob(1, 1, {1, 48000, 0}, 10)},
                                 {0, njob(2, 2, {1, 32000, 0}, 10)},
                                 {0, njob(3, 3, {1, 0, 0}, 10)},
                                 {0, njob(4, 2, {1, 20000, 0}, 10)},
                                 {0, njob(5, 1, {1, 20000, 0}, 10)}};
  const auto r = run(nodes, PartitionPolicy::Fcfs, subs);
  EXPECT_EQ(r.at(1).nodes, (std::vector<std::size_t>{0}));
  EXPECT_EQ(r.at(2).nodes, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(r.at(3), (Placed{0, 10, {0, 1, 2}}));
  EXPECT_EQ(r.at(4), (Placed{0, 10, {1, 2}}));
  EXPECT_EQ(r.at(5), (Placed{10, 20, {0}})) << "8 GB left anywhere: waits for the memory";
}

TEST(NodeScheduler, TimeoutCancelAndRefusals) {
  NodeJob a = njob(1, 1, {8, 0, 4}, 100);
  a.time_limit = 30;
  const auto r = run({kGpuNode}, PartitionPolicy::Easy, {{0, a}, {1, njob(2, 1, {8, 0, 0}, 5)}});
  EXPECT_EQ(r.at(1), (Placed{0, 30, {0}, PartitionOutcome::Timeout}));
  EXPECT_EQ(r.at(2), (Placed{30, 35, {0}}));

  NodeScheduler s({kGpuNode}, PartitionPolicy::Fcfs, {});
  EXPECT_THROW(s.submit(0, njob(1, 2, {1, 0, 0}, 1)), std::invalid_argument) << "2 nodes of 1";
  EXPECT_THROW(s.submit(0, njob(1, 1, {1, 0, 5}, 1)), std::invalid_argument) << "5 GPUs of 4";
  EXPECT_THROW(s.submit(0, njob(1, 1, {1, 70000, 0}, 1)), std::invalid_argument) << "70 GB of 64";
  s.submit(0, njob(1, 1, {8, 0, 0}, 10));
  s.submit(0, njob(2, 1, {8, 0, 0}, 10));
  s.advance(1);
  EXPECT_EQ(s.free(0), (NodeShape{0, 64000, 4}));
  EXPECT_TRUE(s.cancel(2, 2));
  EXPECT_TRUE(s.cancel(3, 1));
  EXPECT_EQ(s.free(0), kGpuNode);
  EXPECT_EQ(s.running(), 0u);
  EXPECT_EQ(s.queued(), 0u);
  EXPECT_THROW(NodeScheduler({}, PartitionPolicy::Fcfs, {}), std::invalid_argument);
}

// Random multi-resource workloads on mixed nodes: no node's share ever
// exceeds its capacity, each job holds distinct nodes, and FCFS starts
// jobs in submit order.
TEST(NodeScheduler, SharesNeverExceedCapacity) {
  for (const auto policy : {PartitionPolicy::Fcfs, PartitionPolicy::Easy}) {
    for (unsigned seed = 1; seed <= 10; ++seed) {
      std::mt19937_64 rng(seed);
      std::vector<NodeShape> nodes;
      for (int i = 0; i < 6; ++i) nodes.push_back(i % 2 ? NodeShape{16, 128000, 0} : NodeShape{8, 64000, 4});
      std::vector<Sub> subs;
      std::int64_t t = 0;
      for (int i = 0; i < 200; ++i) {
        t += static_cast<std::int64_t>(rng() % 10);
        const bool gpu = rng() % 2;
        const NodeShape ask{1 + static_cast<std::int64_t>(rng() % 8), static_cast<std::int64_t>(rng() % 64000),
                            gpu ? 1 + static_cast<std::int64_t>(rng() % 4) : 0};
        const std::int64_t k = 1 + static_cast<std::int64_t>(rng() % (gpu ? 3 : 6));
        const std::int64_t run_time = 1 + static_cast<std::int64_t>(rng() % 100);
        subs.push_back({t, njob(i, k, ask, run_time, run_time + static_cast<std::int64_t>(rng() % 100))});
      }
      const auto r = run(nodes, policy, subs);
      ASSERT_EQ(r.size(), subs.size());
      std::map<std::int64_t, std::vector<NodeShape>> delta;  // time -> per-node change
      std::int64_t last_start = 0;
      for (const auto& s : subs) {
        const Placed& x = r.at(s.job.id);
        EXPECT_GE(x.start, s.at);
        ASSERT_EQ(static_cast<std::int64_t>(x.nodes.size()), s.job.nodes);
        EXPECT_TRUE(std::is_sorted(x.nodes.begin(), x.nodes.end()) &&
                    std::adjacent_find(x.nodes.begin(), x.nodes.end()) == x.nodes.end());
        for (auto when : {x.start, x.end}) delta[when].resize(nodes.size());
        for (std::size_t n : x.nodes) {
          auto& up = delta[x.start][n];
          auto& down = delta[x.end][n];
          up.cpus += s.job.per_node.cpus, up.mem_mb += s.job.per_node.mem_mb, up.gpus += s.job.per_node.gpus;
          down.cpus -= s.job.per_node.cpus, down.mem_mb -= s.job.per_node.mem_mb, down.gpus -= s.job.per_node.gpus;
        }
        if (policy == PartitionPolicy::Fcfs) {
          EXPECT_GE(x.start, last_start);
          last_start = x.start;
        }
      }
      std::vector<NodeShape> used(nodes.size());
      for (const auto& [when, d] : delta)
        for (std::size_t n = 0; n < nodes.size(); ++n) {
          used[n].cpus += d[n].cpus, used[n].mem_mb += d[n].mem_mb, used[n].gpus += d[n].gpus;
          ASSERT_TRUE(used[n].cpus <= nodes[n].cpus && used[n].mem_mb <= nodes[n].mem_mb &&
                      used[n].gpus <= nodes[n].gpus)
              << "seed " << seed << " node " << n << " at " << when;
        }
      EXPECT_EQ(run(nodes, policy, subs), r);
    }
  }
}
