// Batsim workloads: how the JSON fields map onto the job list, the
// walltime kill, and one message per kind of malformed document.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "workload/batsim.hpp"
#include "backends/sim/batch_replay.hpp"

using namespace vramsim;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_batsim(text, "w.json");
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "";
}

const char* kProfiles = R"("profiles": {"d10": {"type": "delay", "delay": 10},
                                       "d2.5": {"type": "DelayProfile", "delay": 2.5},
                                       "par": {"type": "parallel", "cpu": [1], "com": [0]}})";

std::string doc(const std::string& jobs) {
  return R"({"nb_res": 4, "jobs": [)" + jobs + "], " + kProfiles + "}";
}

}  // namespace

TEST(Batsim, MapsFieldsOntoJobs) {
  const SwfTrace t = parse_batsim(doc(R"({"id": 7, "subtime": 1.5, "res": 2, "walltime": 20.2, "profile": "d10"},
                                         {"id": "12", "subtime": 3.4, "res": 4, "profile": "d2.5"},
                                         {"id": 9, "subtime": 4, "res": 1, "walltime": -1, "profile": "par"})"),
                                  "w.json");
  EXPECT_EQ(t.header.max_procs, 4);
  EXPECT_TRUE(t.kill_at_req_time);
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].id, 7);
  EXPECT_EQ(t.ticks_per_second, 1000) << "Batsim times are real numbers: kept to the millisecond";
  EXPECT_EQ(t.jobs[0].submit, 1500);
  EXPECT_EQ(t.jobs[0].alloc_procs, 2);
  EXPECT_EQ(t.jobs[0].req_time, 20200) << "the walltime as it is";
  EXPECT_EQ(t.jobs[0].run_time, 10000);
  EXPECT_EQ(t.jobs[1].id, 12) << "a string of digits";
  EXPECT_EQ(t.jobs[1].submit, 3400);
  EXPECT_EQ(t.jobs[1].req_time, -1) << "no walltime: no limit";
  EXPECT_EQ(t.jobs[1].run_time, 2500) << "a delay as it is";
  EXPECT_EQ(t.jobs[2].req_time, -1);
  EXPECT_EQ(t.jobs[2].run_time, -1) << "not a delay profile: no run time";
  EXPECT_EQ(parse_batsim(doc(R"({"id": 1, "subtime": 0, "res": 1, "profile": "d10"},
                                {"id": 2, "subtime": 0, "res": 1, "profile": "d10"})"),
                         "w.json", 1)
                .jobs.size(),
            1u);
}

TEST(Batsim, WalltimeKillsTheJob) {
  // 4 resources. Job 1 (delay 10, walltime 5) is killed at 5; job 2 starts
  // then; job 3 (not a delay) is skipped.
  const SwfTrace t = parse_batsim(doc(R"({"id": 1, "subtime": 0, "res": 4, "walltime": 5, "profile": "d10"},
                                         {"id": 2, "subtime": 1, "res": 4, "walltime": 100, "profile": "d10"},
                                         {"id": 3, "subtime": 1, "res": 4, "profile": "par"})"),
                                  "w.json");
  const ReplayResult r = replay_swf(t, 4, PartitionPolicy::Easy);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.skipped_no_run_time, 1u);
  EXPECT_EQ(r.jobs[0].end, 5000);
  EXPECT_TRUE(r.jobs[0].timed_out);
  EXPECT_EQ(r.jobs[1].start, 5000);
  EXPECT_EQ(r.jobs[1].end, 15000);
  EXPECT_FALSE(r.jobs[1].timed_out);
}

TEST(Batsim, MalformedDocuments) {
  EXPECT_EQ(error_of("{"), "w.json: JSON: invalid JSON: parse error at line 1, column 2: syntax error while parsing "
                           "object key - unexpected end of input; expected string literal");
  EXPECT_EQ(error_of(std::string("{}\0", 3)), "w.json: JSON: a NUL byte at offset 2 (expected one JSON document)");
  EXPECT_EQ(error_of(std::string(100, '[') + std::string(100, ']')),
            "w.json: JSON: nested deeper than 64 levels");
  EXPECT_EQ(error_of("[]"), "w.json: $: expected an object with nb_res, jobs and profiles, got []");
  EXPECT_EQ(error_of(R"({"jobs": []})"), "w.json: $.nb_res: missing");
  EXPECT_EQ(error_of(R"({"nb_res": 0, "jobs": []})"), "w.json: nb_res: expected a positive number of resources, got 0");
  EXPECT_EQ(error_of(R"({"nb_res": 2, "jobs": {}})"), "w.json: jobs: expected an array, got {}");
  EXPECT_EQ(error_of(R"({"nb_res": 2, "jobs": [], "profiles": []})"), "w.json: profiles: expected an object, got []");
  EXPECT_EQ(error_of(doc("3")), "w.json: jobs[0]: expected an object, got 3");
  EXPECT_EQ(error_of(doc(R"({"subtime": 0, "res": 1, "profile": "d10"})")), "w.json: jobs[0].id: missing");
  EXPECT_EQ(error_of(doc(R"({"id": "w0!1", "subtime": 0, "res": 1, "profile": "d10"})")),
            "w.json: jobs[0].id: expected an integer id >= 0 (or a string of digits), got \"w0!1\"");
  EXPECT_EQ(error_of(doc(R"({"id": 1.5, "subtime": 0, "res": 1, "profile": "d10"})")),
            "w.json: jobs[0].id: expected an integer id >= 0 (or a string of digits), got 1.5");
  EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": -3, "res": 1, "profile": "d10"})")),
            "w.json: jobs[0].subtime: expected a time in seconds >= 0, got -3");
  EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": 1e13, "res": 1, "profile": "d10"})")),
            "w.json: jobs[0].subtime: expected a time in seconds >= 0, got 10000000000000.0");
  EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": 0, "res": "2", "profile": "d10"})")),
            "w.json: jobs[0].res: expected a positive number of resources, got \"2\"");
  EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": 0, "res": 1, "walltime": 0, "profile": "d10"})")),
            "w.json: jobs[0].walltime: expected a time in seconds > 0, or -1 for none, got 0");
  EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": 0, "res": 1, "profile": 3})")),
            "w.json: jobs[0].profile: expected a profile name, got 3");
  EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": 0, "res": 1, "profile": "nope"})")),
            "w.json: jobs[0].profile: expected the name of a profile in profiles, got \"nope\"");
  EXPECT_EQ(error_of(R"({"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                         "profiles": {"p": {"type": "delay"}}})"),
            "w.json: profiles.p.delay: missing");
  EXPECT_EQ(error_of(R"({"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                         "profiles": {"p": {"type": "delay", "delay": -1}}})"),
            "w.json: profiles.p.delay: expected a delay in seconds >= 0, got -1");
}

TEST(Batsim, ReadsTheBundledExamples) {
  const std::string dir = std::string(VRAMSIM_TRACE_DIR) + "/batsim/workloads/";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no traces at " << dir;
  const SwfTrace small = load_batsim(dir + "test_delays.json");
  EXPECT_EQ(small.header.max_procs, 2);
  ASSERT_EQ(small.jobs.size(), 10u);
  EXPECT_EQ(small.jobs[9].submit, 27000);
  EXPECT_EQ(small.jobs[9].run_time, 10000);
  // 10 jobs of 10 s on 2 resources, one every 3 s: the two resources take
  // turns, even jobs starting at 0, 10, 20, ... and odd ones at 3, 13, ...
  const ReplayResult r = replay_swf(small, 2, PartitionPolicy::Fcfs);
  for (std::size_t k = 0; k < 10; ++k)
    EXPECT_EQ(r.jobs[k].start, static_cast<std::int64_t>(1000 * (10 * (k / 2) + 3 * (k % 2)))) << "job " << k;
  const SwfTrace hpc = load_batsim(dir + "example_workload_hpc_seed1_jobs250.json");
  EXPECT_EQ(hpc.header.max_procs, 128);
  EXPECT_EQ(hpc.jobs.size(), 250u);
}

// Times below a second keep their order and length: two jobs 0.4 s apart on
// one resource, each 0.25 s long, never overlap and never wait; rounded to
// whole seconds they would (both submits round to 0 s, each delay up to
// 1 s). The CSV writes seconds with three decimals.
TEST(Batsim, SubSecondTimesAreKeptToTheMillisecond) {
  const SwfTrace t = parse_batsim(R"({"nb_res": 1, "jobs": [
      {"id": 1, "subtime": 0.1, "res": 1, "profile": "q"},
      {"id": 2, "subtime": 0.5, "res": 1, "profile": "q"}],
    "profiles": {"q": {"type": "delay", "delay": 0.25}}})",
                                  "w.json");
  const ReplayResult r = replay_swf(t, 1, PartitionPolicy::Fcfs);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].start, 100);
  EXPECT_EQ(r.jobs[0].end, 350);
  EXPECT_EQ(r.jobs[1].start, 500) << "no wait: the first ended at 0.35 s";
  std::ostringstream csv;
  write_jobs_csv(r, csv);
  EXPECT_EQ(csv.str(), "job_id,submit,start,end\n1,0.100,0.100,0.350\n2,0.500,0.500,0.750\n");
}

// vramsim's "gres" extension: GPUs per node as SLURM's --gres=gpu:N.
TEST(Batsim, ReadsTheGresField) {
  const SwfTrace t = parse_batsim(doc(R"({"id": 1, "subtime": 0, "res": 2, "profile": "d10", "gres": "gpu:2"},
                                         {"id": 2, "subtime": 0, "res": 1, "profile": "d10"},
                                         {"id": 3, "subtime": 0, "res": 1, "profile": "d10", "gres": "gpu:0"},
                                         {"id": 4, "subtime": 0, "res": 1, "profile": "d10", "gres": "gpu:64"})"),
                                  "w.json");
  ASSERT_EQ(t.jobs.size(), 4u);
  EXPECT_EQ(t.jobs[0].gpus_per_node, 2);
  EXPECT_EQ(t.jobs[0].alloc_procs, 2) << "the other fields read as without it";
  EXPECT_EQ(t.jobs[1].gpus_per_node, -1) << "absent: none stated";
  EXPECT_EQ(t.jobs[2].gpus_per_node, 0);
  EXPECT_EQ(t.jobs[3].gpus_per_node, 64);
}

TEST(Batsim, BadGresNamesTheJobAndTheField) {
  for (const std::string bad : {R"("gpu:65")", R"("gpu:-1")", R"("gpu:")", R"("gpu:a100:2")", R"("gpu: 2")",
                                R"("GPU:2")", R"("gpu:1.5")", R"("2")", "2", "null"})
    EXPECT_EQ(error_of(doc(R"({"id": 1, "subtime": 0, "res": 1, "profile": "d10"},
                              {"id": 5, "subtime": 0, "res": 1, "profile": "d10", "gres": )" + bad + "}")),
              R"(w.json: jobs[1].gres: expected "gpu:N" with N GPUs per node from 0 to 64, got )" + bad)
        << bad;
}
