// Replaying an SWF trace: which jobs are replayed or skipped, the
// processors and reservation times taken from the fields, and the CSV.
#include <gtest/gtest.h>

#include <sstream>

#include "workload/replay.hpp"

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
                           row(9, 2, 0, 0, 4, 4, 10) +    // zero run time
                           row(10, 3, 0, 10, -1, -1, 10) + // no processors
                           row(11, 4, 0, 10, -1, 9, 10) +  // requested 9 > 8
                           row(12, 5, 5, 10, -1, 8, 10);   // requested 8 (allocated unknown)
  const ReplayResult r = replay_swf(parse_swf(text, "t.swf"), 8, PartitionPolicy::Fcfs);
  EXPECT_EQ(r.skipped_no_run_time, 2u);
  EXPECT_EQ(r.skipped_no_procs, 1u);
  EXPECT_EQ(r.skipped_too_wide, 1u);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].id, 7);
  EXPECT_EQ(r.jobs[1].id, 12);
  EXPECT_EQ(r.jobs[1].procs, 8);
  EXPECT_EQ(r.jobs[1].start, 10) << "8 processors: waits for job 7";
  EXPECT_EQ(r.jobs[1].end, 20);
  std::ostringstream csv;
  write_jobs_csv(r, csv);
  EXPECT_EQ(csv.str(), "job_id,submit,start,end\n7,0,0,10\n12,5,10,20\n");
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
