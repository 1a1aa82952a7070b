// Replaying an SWF trace: which jobs are replayed or skipped, the
// processors and reservation times taken from the fields, and the CSV.
#include <gtest/gtest.h>

#include <sstream>

#include "backends/sim/batch_replay.hpp"

using namespace vramsim;

namespace {

// id submit wait run alloc cpu mem req_procs req_time ...
std::string row(int id, int submit, int wait, int run, int alloc, int req_procs, int req_time) {
  std::ostringstream s;
  s << id << " " << submit << " " << wait << " " << run << " " << alloc << " -1 -1 " << req_procs << " "
    << req_time << " -1 1 1 1 -1 -1 -1 -1 -1\n";
  return s.str();
}

}  // namespace

TEST(Replay, SkipsJobsItCannotReplayAndCountsThem) {
  const std::string text = row(7, 0, 0, 10, 4, 4, 10) +   // replayed
                           row(8, 1, 0, -1, 4, 4, 10) +   // no run time
                           row(9, 2, 0, 0, 4, 4, 10) +    // ran for 0 s: replayed
                           row(10, 3, 0, 10, -1, -1, 10) + // no processors
                           row(11, 4, 0, 10, -1, 9, 10) +  // requested 9 > 8
                           row(12, 5, 5, 10, -1, 8, 10);   // requested 8 (allocated unknown)
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 8, PartitionPolicy::Fcfs);
  EXPECT_EQ(r.skipped_no_run_time, 1u) << "only -1 is no run time";
  EXPECT_EQ(r.skipped_no_procs, 1u);
  EXPECT_EQ(r.skipped_too_wide, 1u);
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].id, 7);
  EXPECT_EQ(r.jobs[1].id, 9);
  EXPECT_EQ(r.jobs[1].start, 2) << "a job of 0 s is a job: 4 processors are free beside job 7";
  EXPECT_EQ(r.jobs[1].end, 2);
  EXPECT_EQ(r.jobs[2].id, 12);
  EXPECT_EQ(r.jobs[2].procs, 8);
  EXPECT_EQ(r.jobs[2].start, 10) << "8 processors: waits for job 7";
  EXPECT_EQ(r.jobs[2].end, 20);
  std::ostringstream csv;
  write_jobs_csv(r, csv);
  EXPECT_EQ(csv.str(), "job_id,submit,start,end\n7,0,0,10\n9,2,2,2\n12,5,10,20\n");
}

TEST(Replay, SubmitOrderIsByTimeThenFileOrderAndOutputKeepsFileOrder) {
  // Job 2 is listed first but submitted later; jobs 3 and 4 tie at 0.
  const std::string text = row(2, 5, 0, 10, 2, 2, 10) + row(3, 0, 0, 10, 2, 2, 10) + row(4, 0, 0, 10, 1, 1, 10);
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 2, PartitionPolicy::Fcfs);
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].id, 2);
  EXPECT_EQ(r.jobs[1].start, 0);   // 3 first
  EXPECT_EQ(r.jobs[2].start, 10);  // then 4
  EXPECT_EQ(r.jobs[0].start, 20);  // then 2 (FCFS: not before 4)
}

TEST(Replay, EasyReservationFallsBackToTheRunTime) {
  // Job 1 has no requested time: its reservation end is its run time (10),
  // so job 3 (requested 100) may not backfill before the head (job 2).
  const std::string text = row(1, 0, 0, 10, 1, 1, -1) + row(2, 1, 0, 5, 2, 2, 5) + row(3, 2, 0, 50, 1, 1, 100);
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 2, PartitionPolicy::Easy);
  EXPECT_EQ(r.jobs[1].start, 10);
  EXPECT_EQ(r.jobs[2].start, 15);
  // With job 1 asking for 1000 s, the reservation moves to 1000 and job 3
  // backfills at 2 (ending at 52 <= 1000).
  const std::string text2 = row(1, 0, 0, 10, 1, 1, 1000) + row(2, 1, 0, 5, 2, 2, 5) + row(3, 2, 0, 50, 1, 1, 100);
  const ReplayResult r2 = replay_swf(parse_swf(text2, "t.swf"), 2, PartitionPolicy::Easy);
  EXPECT_EQ(r2.jobs[2].start, 2);
  EXPECT_EQ(r2.jobs[1].start, 52);
}

TEST(Replay, SummaryComparesWithRecordedWaits) {
  const std::string text = row(1, 0, 0, 10, 2, 2, 10) + row(2, 0, 40, 10, 2, 2, 10) + row(3, 0, -1, 10, 2, 2, 10);
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 2, PartitionPolicy::Fcfs);
  std::ostringstream out;
  print_replay_summary(r, "t.swf", out);
  const std::string s = out.str();
  EXPECT_NE(s.find("replay: t.swf on 2 processors, fcfs\n"), std::string::npos) << s;
  EXPECT_NE(s.find("jobs: 3 replayed, 0 skipped"), std::string::npos) << s;
  // Jobs 1 and 2 have recorded waits 0 and 40; simulated 0 and 10.
  EXPECT_NE(s.find("  mean                      5.0         20.0\n"), std::string::npos) << s;
  EXPECT_NE(s.find("(over the 2 jobs with a recorded wait)"), std::string::npos) << s;
  // 3 jobs x 2 procs x 10 s over 2 procs x 30 s: fully used.
  EXPECT_NE(s.find("utilisation: 1.0000 (2 processors over 30 s"), std::string::npos) << s;
}

// A job of 0 s waits its turn like any other: behind a job that holds the
// processors, FCFS starts it when they are free, and its wait counts.
TEST(Replay, AJobOfZeroSecondsWaitsItsTurn) {
  const std::string text = row(1, 0, 0, 10, 8, 8, 10) + row(2, 1, 9, 0, 8, 8, 10);
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 8, PartitionPolicy::Fcfs);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.skipped_no_run_time, 0u);
  EXPECT_EQ(r.jobs[1].start, 10);
  EXPECT_EQ(r.jobs[1].end, 10);
  std::ostringstream out;
  print_replay_summary(r, "t.swf", out);
  EXPECT_NE(out.str().find("2 replayed, 0 skipped"), std::string::npos) << out.str();
}

// The summary says what the log's header says of its machine, and when the
// replay's processors differ from it (the recorded waits are then another
// machine's); partial-execution lines are counted, not replayed.
TEST(Replay, SummaryNamesTheLogsMachineAndTheFoldedPartialLines) {
  const std::string text = "; MaxNodes: 4 (one of them login)\n; MaxProcs: 16\n" + row(1, 0, 0, 10, 4, 4, 10) +
                           "1 0 0 5 4 -1 -1 4 10 -1 2 1 1 -1 -1 -1 -1 -1\n";
  const SwfTrace t = parse_swf(text, "t.swf");
  std::ostringstream same, other;
  print_replay_summary(replay_swf(t, 16, PartitionPolicy::Easy), "t.swf", same);
  print_replay_summary(replay_swf(t, 8, PartitionPolicy::Easy), "t.swf", other);
  EXPECT_NE(same.str().find("log machine: MaxProcs 16, MaxNodes 4\n"), std::string::npos) << same.str();
  EXPECT_EQ(same.str().find("another machine"), std::string::npos) << same.str();
  EXPECT_NE(other.str().find("note: 8 processors here, 16 in the log: the recorded waits belong to another machine"),
            std::string::npos)
      << other.str();
  EXPECT_NE(same.str().find("partial executions: 1 line(s) of status 2, 3 or 4"), std::string::npos) << same.str();
}

// Job by job against the log: |simulated - recorded| averaged, the
// correlation of the two waits, and each side's bounded slowdown.
TEST(Replay, ComparisonWithTheLogIsPerJob) {
  // One processor: jobs 1, 2, 3 of 10 s each, submitted at 0; FCFS waits
  // 0, 10, 20. The log recorded 0, 20, 40.
  const std::string text = row(1, 0, 0, 10, 1, 1, 10) + row(2, 0, 20, 10, 1, 1, 10) + row(3, 0, 40, 10, 1, 1, 10);
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 1, PartitionPolicy::Fcfs);
  const LogComparison c = compare_with_log(r);
  EXPECT_EQ(c.jobs, 3u);
  EXPECT_DOUBLE_EQ(c.mean_abs_error_s, (0.0 + 10 + 20) / 3);
  ASSERT_TRUE(c.correlation);
  EXPECT_NEAR(*c.correlation, 1.0, 1e-12) << "the log's waits are the replay's doubled";
  EXPECT_DOUBLE_EQ(c.bounded_slowdown_sim, (1.0 + 2 + 3) / 3);
  EXPECT_DOUBLE_EQ(c.bounded_slowdown_log, (1.0 + 3 + 5) / 3);
  // A log whose waits do not vary has no correlation to give.
  const std::string flat = row(1, 0, 5, 10, 1, 1, 10) + row(2, 0, 5, 10, 1, 1, 10);
  EXPECT_FALSE(compare_with_log(replay_swf(parse_swf(flat, "t.swf"), 1, PartitionPolicy::Fcfs)).correlation);
}

// EASY's estimate where a job states no requested time, by rule; the
// summary counts where each estimate came from.
TEST(Replay, EstimateRulesAndTheirCounts) {
  // User 1: jobs of 100 s and 300 s with no requested time, then a third
  // with none; user 2: one job with a requested time of 50 s.
  auto job = [](int id, int submit, int run, int req_time, int user) {
    std::ostringstream s;
    s << id << " " << submit << " -1 " << run << " 1 -1 -1 1 " << req_time << " -1 1 " << user
      << " 1 -1 -1 -1 -1 -1\n";
    return s.str();
  };
  const SwfTrace t = parse_swf(job(1, 0, 100, -1, 1) + job(2, 1, 300, -1, 1) + job(3, 2, 40, -1, 1) +
                                   job(4, 3, 20, 50, 2),
                               "t.swf");
  std::string err;
  const auto requested = replay_swf(t, 4, PartitionPolicy::Easy, *parse_estimate_rule("requested", err));
  EXPECT_EQ(requested.estimates.requested, 1u);
  EXPECT_EQ(requested.estimates.run_time, 3u) << "perfect foresight, counted";
  const auto runtime = replay_swf(t, 4, PartitionPolicy::Easy, *parse_estimate_rule("runtime", err));
  EXPECT_EQ(runtime.estimates.run_time, 4u);
  const auto median = replay_swf(t, 4, PartitionPolicy::Easy, *parse_estimate_rule("user-median:2", err));
  EXPECT_EQ(median.estimates.run_time, 1u) << "the user's first job has no history";
  EXPECT_EQ(median.estimates.user_median, 2u);
  EXPECT_EQ(median.estimates.requested, 1u);
  const auto limit = replay_swf(t, 4, PartitionPolicy::Easy, *parse_estimate_rule("limit:4h", err));
  EXPECT_EQ(limit.estimates.limit, 3u);
  std::ostringstream out;
  print_replay_summary(median, "t.swf", out);
  EXPECT_NE(out.str().find("estimates: 1 requested time, 1 run time (perfect foresight), 2 user median"),
            std::string::npos)
      << out.str();
  for (const std::string bad : {"", "median", "user-median:0", "user-median:x", "limit:0s", "limit:soon", "runtime:2"}) {
    err.clear();
    EXPECT_FALSE(parse_estimate_rule(bad, err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

// The estimate shapes EASY's decisions: the waiting head's reservation
// starts at the running job's estimated end, and a job behind it backfills
// only if it ends by then. Known to run 100 s, the running job leaves room
// for a 50 s job to backfill; estimated at a 30 s limit, it does not.
TEST(Replay, TheEstimateChangesWhatEasyBackfills) {
  auto job = [](int id, int submit, int run, int procs, int user) {
    std::ostringstream s;
    s << id << " " << submit << " -1 " << run << " " << procs << " -1 -1 " << procs << " -1 -1 1 " << user
      << " 1 -1 -1 -1 -1 -1\n";
    return s.str();
  };
  // 2 processors. Job 1 (1 proc, 100 s) runs; job 2 (2 procs) waits at the
  // head; job 3 (1 proc, 50 s) may backfill if it ends before job 1's
  // estimated end, the head's reservation.
  const SwfTrace t = parse_swf(job(1, 0, 100, 1, 7) + job(2, 1, 10, 2, 8) + job(3, 2, 50, 1, 9), "t.swf");
  std::string err;
  const auto foresight = replay_swf(t, 2, PartitionPolicy::Easy, *parse_estimate_rule("runtime", err));
  EXPECT_EQ(foresight.jobs[2].start, 2) << "job 1 is known to end at 100: job 3 (2..52) backfills";
  const auto blind = replay_swf(t, 2, PartitionPolicy::Easy, *parse_estimate_rule("limit:30s", err));
  EXPECT_EQ(blind.jobs[2].start, 110) << "job 1 is expected at 30: job 3 would delay job 2, so it waits";
}
