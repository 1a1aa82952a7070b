// The partition scheduler on hand-worked cases: strict FCFS, EASY backfills
// that must and must not happen, time limits, cancellation, same-time
// events; then invariants over random workloads, and EASY against its
// rules applied literally.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "backends/sim/partition_scheduler.hpp"

using namespace vramsim;

namespace {

struct Span {
  std::int64_t start = -1, end = -1;
  PartitionOutcome outcome = PartitionOutcome::Completed;
  bool operator==(const Span& o) const = default;
};

struct Sub {
  std::int64_t at;
  PartitionJob job;
};

PartitionJob job(std::int64_t id, std::int64_t procs, std::int64_t run, std::int64_t estimate = -1) {
  PartitionJob j;
  j.id = id;
  j.procs = procs;
  j.run_time = run;
  j.estimate = estimate < 0 ? run : estimate;
  return j;
}

// Runs the submissions (in order) to the end; start and end of each job.
std::map<std::int64_t, Span> run(std::int64_t procs, PartitionPolicy p, const std::vector<Sub>& subs) {
  std::map<std::int64_t, Span> out;
  PartitionScheduler::Callbacks cb;
  cb.on_start = [&](const PartitionJob& j, std::int64_t t) { out[j.id].start = t; };
  cb.on_end = [&](const PartitionJob& j, std::int64_t t, PartitionOutcome o) {
    out[j.id].end = t;
    out[j.id].outcome = o;
  };
  PartitionScheduler s(procs, p, cb);
  for (const auto& x : subs) s.submit(x.at, x.job);
  s.drain();
  EXPECT_EQ(s.free_procs(), procs);
  EXPECT_EQ(s.queued(), 0u);
  EXPECT_EQ(s.running(), 0u);
  return out;
}

// 10 processors. A holds 6 until 10. B (8) is the blocked head: its
// reservation is at 10, when 4 + 6 = 10 are free, 2 more than it needs.
//  C (3, ends at 22 > 10) would use 3 > 2 spare: must not backfill.
//  D (2, ends at 23 > 10) fits in the 2 spare: backfills at 3.
//  E (1, ends at 9 <= 10) ends before the reservation: backfills at 4.
//  F (1, ends past 10) finds no spare left (D took it): must not backfill.
const std::vector<Sub> kMix = {
    {0, job(1, 6, 10)}, {1, job(2, 8, 5)}, {2, job(3, 3, 20)},
    {3, job(4, 2, 20)}, {4, job(5, 1, 5)}, {5, job(6, 1, 100)},
};

}  // namespace

TEST(PartitionScheduler, FcfsNeverStartsAJobBeforeAnEarlierOne) {
  const auto r = run(10, PartitionPolicy::Fcfs, kMix);
  EXPECT_EQ(r.at(1), (Span{0, 10}));
  EXPECT_EQ(r.at(2), (Span{10, 15}));
  // C..F fit at 2..5 beside A, but B waits: they wait behind it.
  EXPECT_EQ(r.at(3), (Span{15, 35}));
  EXPECT_EQ(r.at(4), (Span{15, 35}));
  EXPECT_EQ(r.at(5), (Span{15, 20}));
  EXPECT_EQ(r.at(6), (Span{15, 115}));
}

TEST(PartitionScheduler, EasyBackfillsOnlyWhatCannotDelayTheHead) {
  const auto r = run(10, PartitionPolicy::Easy, kMix);
  EXPECT_EQ(r.at(1), (Span{0, 10}));
  EXPECT_EQ(r.at(2), (Span{10, 15})) << "the head starts at its reservation";
  EXPECT_EQ(r.at(3), (Span{15, 35})) << "C would take more than the spare processors";
  EXPECT_EQ(r.at(4), (Span{3, 23})) << "D fits in the spare processors";
  EXPECT_EQ(r.at(5), (Span{4, 9})) << "E ends before the reservation";
  EXPECT_EQ(r.at(6), (Span{15, 115})) << "D used up the spare processors";
}

TEST(PartitionScheduler, EasyReservationUsesTheEstimateNotTheRunTime) {
  // A runs 10 but announced 100: B's reservation is at 100, so C (ends at
  // 52, over the 0 spare) backfills at 2 although it delays B past 10.
  const std::vector<Sub> subs = {{0, job(1, 6, 10, 100)}, {1, job(2, 10, 5)}, {2, job(3, 4, 50)}};
  const auto r = run(10, PartitionPolicy::Easy, subs);
  EXPECT_EQ(r.at(3), (Span{2, 52}));
  EXPECT_EQ(r.at(2), (Span{52, 57}));
  // With an honest estimate the reservation is at 10 and C waits.
  const auto honest = run(10, PartitionPolicy::Easy, {{0, job(1, 6, 10, 10)}, subs[1], subs[2]});
  EXPECT_EQ(honest.at(2), (Span{10, 15}));
  EXPECT_EQ(honest.at(3), (Span{15, 65}));
}

TEST(PartitionScheduler, JobPastItsEstimateIsExpectedToEndNow) {
  // A announced 10 but runs 30. At 12, B (10) waits for A, which is
  // expected to end now: the reservation is at 12, not in the past at 10.
  // So C, announced to end now, backfills; D, ending later, does not.
  const std::vector<Sub> subs = {
      {0, job(1, 6, 30, 10)}, {12, job(2, 10, 5)}, {12, job(3, 4, 1, 0)}, {12, job(4, 4, 1, 1)}};
  const auto r = run(10, PartitionPolicy::Easy, subs);
  EXPECT_EQ(r.at(3), (Span{12, 13}));
  EXPECT_EQ(r.at(2), (Span{30, 35}));
  EXPECT_EQ(r.at(4), (Span{35, 36})) << "12 + 1 > 12: D would delay B's reservation";
}

TEST(PartitionScheduler, TimeLimitKillsTheJob) {
  PartitionJob a = job(1, 4, 100);
  a.time_limit = 30;
  PartitionJob b = job(2, 4, 20);
  b.time_limit = 20;  // exactly its limit: completes
  const auto r = run(4, PartitionPolicy::Fcfs, {{0, a}, {1, b}});
  EXPECT_EQ(r.at(1), (Span{0, 30, PartitionOutcome::Timeout}));
  EXPECT_EQ(r.at(2), (Span{30, 50, PartitionOutcome::Completed}));
}

TEST(PartitionScheduler, CompletionsAndSubmissionsAtOneTimeShareOnePass) {
  // A ends at 10 and B arrives at 10: B starts at 10. C and D arrive
  // together: FCFS takes them in submit order even though D is smaller.
  const auto r = run(4, PartitionPolicy::Fcfs,
                     {{0, job(1, 4, 10)}, {10, job(2, 4, 5)}, {10, job(3, 3, 1)}, {10, job(4, 1, 1)}});
  EXPECT_EQ(r.at(2), (Span{10, 15}));
  EXPECT_EQ(r.at(3), (Span{15, 16}));
  EXPECT_EQ(r.at(4), (Span{15, 16}));
}

TEST(PartitionScheduler, CancelQueuedAndRunning) {
  std::map<std::int64_t, Span> out;
  PartitionScheduler::Callbacks cb;
  cb.on_start = [&](const PartitionJob& j, std::int64_t t) { out[j.id].start = t; };
  cb.on_end = [&](const PartitionJob& j, std::int64_t t, PartitionOutcome o) {
    out[j.id].end = t;
    out[j.id].outcome = o;
  };
  PartitionScheduler s(4, PartitionPolicy::Easy, cb);
  s.submit(0, job(1, 4, 100));
  s.submit(1, job(2, 4, 10));
  s.submit(2, job(3, 2, 10));
  EXPECT_TRUE(s.cancel(5, 2));  // the queued head
  EXPECT_FALSE(s.cancel(5, 2)) << "already gone";
  EXPECT_EQ(s.queued(), 1u);
  EXPECT_TRUE(s.cancel(7, 1));  // the running job frees its processors at 7
  s.drain();
  EXPECT_EQ(out.at(1), (Span{0, 7, PartitionOutcome::Cancelled}));
  EXPECT_EQ(out.at(2), (Span{-1, 5, PartitionOutcome::Cancelled}));
  EXPECT_EQ(out.at(3), (Span{7, 17, PartitionOutcome::Completed}));
  EXPECT_FALSE(s.cancel(20, 3));
}

TEST(PartitionScheduler, AdvanceStopsAtTheGivenTime) {
  int starts = 0;
  PartitionScheduler::Callbacks cb;
  cb.on_start = [&](const PartitionJob&, std::int64_t) { ++starts; };
  PartitionScheduler s(2, PartitionPolicy::Fcfs, cb);
  s.submit(0, job(1, 2, 10));
  s.submit(0, job(2, 2, 10));
  EXPECT_EQ(starts, 0) << "the pass at 0 waits for every submission at 0";
  s.advance(5);
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(s.next_completion(), 10);
  s.advance(10);
  EXPECT_EQ(starts, 1) << "the pass at 10 is still pending";
  s.flush();
  EXPECT_EQ(starts, 2);
  EXPECT_EQ(s.now(), 10);
}

TEST(PartitionScheduler, RefusesImpossibleInput) {
  EXPECT_THROW(PartitionScheduler(0, PartitionPolicy::Fcfs, {}), std::invalid_argument);
  PartitionScheduler s(4, PartitionPolicy::Fcfs, {});
  EXPECT_THROW(s.submit(0, job(1, 5, 1)), std::invalid_argument);
  EXPECT_THROW(s.submit(0, job(1, 0, 1)), std::invalid_argument);
  EXPECT_THROW(s.submit(0, job(1, 1, -1)), std::invalid_argument);
  s.submit(3, job(1, 1, 10));
  EXPECT_THROW(s.submit(3, job(1, 1, 1)), std::invalid_argument) << "id 1 is queued";
  EXPECT_THROW(s.submit(2, job(2, 1, 1)), std::invalid_argument) << "in the past";
  EXPECT_THROW(s.advance(1), std::invalid_argument);
}

// Random workloads: processors in use never exceed the partition, every job
// starts at or after its submission and runs its run time, FCFS starts in
// submit order, and the same input gives the same schedule.
TEST(PartitionScheduler, InvariantsOnRandomWorkloads) {
  for (const auto policy : {PartitionPolicy::Fcfs, PartitionPolicy::Easy}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      std::mt19937_64 rng(seed);
      const std::int64_t procs = 1 + static_cast<std::int64_t>(rng() % 32);
      std::vector<Sub> subs;
      std::int64_t t = 0;
      for (int i = 0; i < 300; ++i) {
        t += static_cast<std::int64_t>(rng() % 20);
        const std::int64_t run_time = 1 + static_cast<std::int64_t>(rng() % 200);
        const std::int64_t est = run_time / 2 + static_cast<std::int64_t>(rng() % 300);
        subs.push_back({t, job(i, 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(procs)), run_time, est)});
      }
      const auto r = run(procs, policy, subs);
      ASSERT_EQ(r.size(), subs.size());
      std::map<std::int64_t, std::int64_t> delta;  // time -> change in processors used
      std::int64_t last_start = 0;
      for (const auto& s : subs) {
        const Span& x = r.at(s.job.id);
        EXPECT_GE(x.start, s.at);
        EXPECT_EQ(x.end - x.start, s.job.run_time);
        delta[x.start] += s.job.procs;
        delta[x.end] -= s.job.procs;
        if (policy == PartitionPolicy::Fcfs) {
          EXPECT_GE(x.start, last_start) << "seed " << seed;
          last_start = x.start;
        }
      }
      std::int64_t used = 0;
      for (const auto& [when, d] : delta) {
        used += d;
        ASSERT_LE(used, procs) << "seed " << seed << " at " << when;
      }
      EXPECT_EQ(run(procs, policy, subs), r);
    }
  }
}

namespace {

// The rules of docs/workloads.md applied literally, one time at a time:
// every job ending at t frees its processors, every job submitted at t
// joins the queue, then one pass; the reservation from the running jobs
// sorted by expected end. Run times >= 1, no limits or cancels. Start of
// each job.
std::map<std::int64_t, std::int64_t> reference_easy(std::int64_t procs, const std::vector<Sub>& subs) {
  struct Run {
    PartitionJob job;
    std::int64_t start;
  };
  std::map<std::int64_t, std::int64_t> started;
  std::vector<PartitionJob> queue;
  std::vector<Run> running;
  std::int64_t free = procs;
  std::size_t next = 0;
  while (next < subs.size() || !queue.empty() || !running.empty()) {
    std::int64_t t = next < subs.size() ? subs[next].at : std::numeric_limits<std::int64_t>::max();
    for (const auto& r : running) t = std::min(t, r.start + r.job.run_time);
    for (auto it = running.begin(); it != running.end();) {
      if (it->start + it->job.run_time == t) {
        free += it->job.procs;
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    for (; next < subs.size() && subs[next].at == t; ++next) queue.push_back(subs[next].job);
    const auto begin = [&](std::size_t i) {
      started[queue[i].id] = t;
      free -= queue[i].procs;
      running.push_back({queue[i], t});
      queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
    };
    while (!queue.empty() && queue.front().procs <= free) begin(0);
    if (queue.empty()) continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> ends;  // expected end, processors
    for (const auto& r : running) ends.emplace_back(std::max(r.start + r.job.estimate, t), r.job.procs);
    std::sort(ends.begin(), ends.end());
    std::int64_t avail = free, shadow = t;
    for (std::size_t k = 0; avail < queue.front().procs; ++k) {
      shadow = ends[k].first;
      avail += ends[k].second;
      while (k + 1 < ends.size() && ends[k + 1].first == shadow) avail += ends[++k].second;
    }
    std::int64_t spare = avail - queue.front().procs;
    for (std::size_t i = 1; i < queue.size();) {
      const PartitionJob& j = queue[i];
      if (j.procs <= free && t + j.estimate <= shadow) {
        begin(i);
      } else if (j.procs <= free && j.procs <= spare) {
        spare -= j.procs;
        begin(i);
      } else {
        ++i;
      }
    }
  }
  return started;
}

}  // namespace

// EASY against the rules applied literally, on random workloads that mix
// wide and narrow jobs, bursts at one time and estimates on both sides of
// the run time: every start must agree.
TEST(PartitionScheduler, EasyAgreesWithTheRulesAppliedLiterally) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    const std::int64_t procs = 1 + static_cast<std::int64_t>(rng() % 48);
    std::vector<Sub> subs;
    std::int64_t t = 0;
    for (int i = 0; i < 400; ++i) {
      t += rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 15);
      // Half the jobs narrow (1..4 processors), half anything up to the whole partition.
      const auto width = rng() % 2 ? std::min<std::uint64_t>(procs, 4) : static_cast<std::uint64_t>(procs);
      const std::int64_t run_time = 1 + static_cast<std::int64_t>(rng() % 100);
      const std::int64_t est = static_cast<std::int64_t>(rng() % 200);
      subs.push_back({t, job(i, 1 + static_cast<std::int64_t>(rng() % width), run_time, est)});
    }
    const auto r = run(procs, PartitionPolicy::Easy, subs);
    const auto want = reference_easy(procs, subs);
    ASSERT_EQ(want.size(), subs.size());
    for (const auto& [id, start] : want) ASSERT_EQ(r.at(id).start, start) << "seed " << seed << ", job " << id;
  }
}
