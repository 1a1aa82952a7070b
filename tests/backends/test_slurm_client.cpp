// SlurmClient and cleanup_run against the real single-node SLURM of
// slurm-harness.sh (the `slurm` CTest fixture; VRAMSIM_SLURM_HARNESS names
// its folder), plus the parsing and retry rules that need no controller.
#include "backends/slurm/slurm_client.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "backends/slurm/cleanup.hpp"
#include "backends/slurm/job_journal.hpp"

namespace vramsim::slurm {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---- no controller needed -------------------------------------------------

TEST(SlurmParse, SbatchParsableOutput) {
  EXPECT_EQ(parse_sbatch_output("123\n"), "123");
  EXPECT_EQ(parse_sbatch_output("456;cluster-a\n"), "456");
  EXPECT_EQ(parse_sbatch_output("\n  789 \n"), "789");
  EXPECT_EQ(parse_sbatch_output("Submitted batch job 5\n"), std::nullopt);
  EXPECT_EQ(parse_sbatch_output(""), std::nullopt);
}

TEST(SlurmParse, SqueueLines) {
  std::string err;
  const std::string out = std::string("12\x1fvramsim-w\x1fRUNNING\x1fNone\x1fnode1\x1frun-1 | with bar\n") +
                          "13\x1fother\x1f" + "CONFIGURING\x1f" + "Resources\x1f\x1f(null)\n";
  const auto jobs = parse_squeue_output(out, err);
  ASSERT_TRUE(jobs) << err;
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, "12");
  EXPECT_EQ((*jobs)[0].name, "vramsim-w");
  EXPECT_EQ((*jobs)[0].job_state, JobState::Running);
  EXPECT_EQ((*jobs)[0].nodes, "node1");
  EXPECT_EQ((*jobs)[0].comment, "run-1 | with bar");
  EXPECT_EQ((*jobs)[1].job_state, JobState::Pending);
  EXPECT_EQ((*jobs)[1].reason, "Resources");
  EXPECT_EQ((*jobs)[1].comment, "");

  EXPECT_FALSE(parse_squeue_output("12\x1fname\x1fRUNNING\n", err));
  EXPECT_EQ(err, "squeue output line 1: expected 6 fields, got \"12\x1fname\x1fRUNNING\"");
  EXPECT_FALSE(parse_squeue_output("\n1\x1fn\x1fWEIRD\x1f\x1f\x1f\n", err));
  EXPECT_EQ(err, "squeue output line 2: unknown job state \"WEIRD\"");
}

TEST(SlurmParse, StateMapping) {
  EXPECT_EQ(job_state_from_squeue("PENDING"), JobState::Pending);
  EXPECT_EQ(job_state_from_squeue("COMPLETING"), JobState::Completing);
  EXPECT_EQ(job_state_from_squeue("CANCELLED"), JobState::Cancelled);
  EXPECT_EQ(job_state_from_squeue("NODE_FAIL"), JobState::Failed);
  EXPECT_EQ(job_state_from_squeue("TIMEOUT"), JobState::Timeout);
  EXPECT_EQ(job_state_from_squeue("pending"), std::nullopt);
}

TEST(SlurmParse, CommentsNameTheRunAndTheSubmission) {
  EXPECT_EQ(job_comment("run-1", 3), "run-1#3");
  EXPECT_TRUE(comment_of_run("run-1#3", "run-1"));
  EXPECT_TRUE(comment_of_run("run-1", "run-1"));
  EXPECT_FALSE(comment_of_run("run-10#1", "run-1")) << "another run whose id starts the same";
  EXPECT_FALSE(comment_of_run("run-1-x", "run-1"));
  EXPECT_FALSE(comment_of_run("run", "run-1"));
  EXPECT_FALSE(comment_of_run("", "run-1"));
}

TEST(SlurmParse, TransientOrPermanent) {
  CommandResult r;
  r.exit_code = 1;
  r.err = "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n";
  EXPECT_TRUE(is_transient(r));
  r.err = "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n";
  EXPECT_FALSE(is_transient(r));
  r.err = "slurm_load_jobs error: Socket timed out on send/recv operation";
  EXPECT_TRUE(is_transient(r));
  r = CommandResult{};
  r.timed_out = true;
  EXPECT_TRUE(is_transient(r));
  r = CommandResult{};
  r.spawn_error = "not found on PATH";
  EXPECT_FALSE(is_transient(r));
}

TEST(SlurmParse, HowAJobEndedFromScontrolAndSacct) {
  auto e = parse_scontrol_job(
      "JobId=42 JobName=ray_worker UserId=u(1000) GroupId=u(1000) MCS_label=N/A Priority=1 Nice=0 Account=(null) "
      "QOS=(null) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 "
      "ExitCode=0:15 RunTime=00:01:02 TimeLimit=00:01:00 Comment=run#1 two words\n");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->slurm_state, "TIMEOUT");
  EXPECT_EQ(e->state, JobState::Timeout);
  EXPECT_EQ(e->reason, "TimeLimit");
  EXPECT_EQ(e->exit_code, "0:15");
  EXPECT_EQ(e->source, "scontrol");
  e = parse_scontrol_job("JobId=7 JobState=NODE_FAIL Reason=NodeDown ExitCode=0:0\n");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, JobState::Failed);
  EXPECT_EQ(e->slurm_state, "NODE_FAIL");
  // A job still running has not ended; a line without JobState says nothing.
  EXPECT_FALSE(parse_scontrol_job("JobId=7 JobState=RUNNING Reason=None\n"));
  EXPECT_FALSE(parse_scontrol_job("slurm_load_jobs error: Invalid job id specified\n"));
  EXPECT_FALSE(parse_scontrol_job("JobId=7 OldJobState=TIMEOUT\n")) << "only the JobState key itself";

  e = parse_sacct_job("41|COMPLETED|0:0|None\n42|CANCELLED by 1000|0:15|None\n", "42");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->slurm_state, "CANCELLED");
  EXPECT_EQ(e->state, JobState::Cancelled);
  EXPECT_EQ(e->reason, "by 1000");
  EXPECT_EQ(e->source, "sacct");
  e = parse_sacct_job("43|OUT_OF_MEMORY|0:125|None\n", "43");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, JobState::Failed);
  EXPECT_EQ(e->exit_code, "0:125");
  EXPECT_FALSE(parse_sacct_job("44|RUNNING|0:0|None\n", "44"));
  EXPECT_FALSE(parse_sacct_job("45|COMPLETED|0:0|None\n", "44"));
  EXPECT_FALSE(parse_sacct_job("garbage\n", "44"));
}

// ---- against the harness SLURM ---------------------------------------------

std::string harness_dir() {
  const char* d = std::getenv("VRAMSIM_SLURM_HARNESS");
  return d != nullptr ? d : "";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SlurmLive : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = harness_dir();
    if (dir.empty() || !fs::exists(fs::path(dir) / "etc" / "slurm.conf"))
      GTEST_FAIL() << "no SLURM harness: run through ctest (fixture `slurm`) or set VRAMSIM_SLURM_HARNESS "
                      "to a folder started with " VRAMSIM_SLURM_HARNESS_SCRIPT " start DIR";
    const char* path = std::getenv("PATH");
    cfg.env = {{"SLURM_CONF", dir + "/etc/slurm.conf"},
               {"PATH", dir + "/bin:" + std::string(path != nullptr ? path : "/usr/bin:/bin")}};
    tag = "vramsim-test-" + std::to_string(::getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    // Leave nothing behind for the next test, whatever happened here.
    if (!submitted.empty()) {
      asio::io_context io;
      ProcessRunner runner(io);
      SlurmClient client(io, runner, cfg);
      client.cancel(submitted, [](bool, std::string) {});
      io.run();
      wait_until_gone(submitted, 30s);
    }
  }

  std::string script(const std::string& body, const std::string& extra = "") {
    return "#!/bin/sh\n#SBATCH --job-name=" + tag + "\n#SBATCH --output=" + dir + "/job-%j.out\n" + extra + body +
           "\n";
  }

  std::pair<std::optional<std::string>, std::string> submit(const std::string& s, const std::string& comment,
                                                            const SlurmClientConfig* c = nullptr) {
    asio::io_context io;
    ProcessRunner runner(io);
    SlurmClient client(io, runner, c != nullptr ? *c : cfg);
    std::pair<std::optional<std::string>, std::string> got;
    client.submit(s, comment, [&](std::optional<std::string> id, std::string err) {
      got = {std::move(id), std::move(err)};
    });
    io.run();
    if (got.first) submitted.push_back(*got.first);
    return got;
  }

  std::pair<std::optional<std::vector<SqueueJob>>, std::string> list(const SlurmClientConfig* c = nullptr) {
    asio::io_context io;
    ProcessRunner runner(io);
    SlurmClient client(io, runner, c != nullptr ? *c : cfg);
    std::pair<std::optional<std::vector<SqueueJob>>, std::string> got;
    client.list([&](std::optional<std::vector<SqueueJob>> jobs, std::string err) {
      got = {std::move(jobs), std::move(err)};
    });
    io.run();
    return got;
  }

  std::optional<SqueueJob> find(const std::string& id) {
    auto [jobs, err] = list();
    EXPECT_TRUE(jobs) << err;
    if (jobs)
      for (const auto& j : *jobs)
        if (j.id == id) return j;
    return std::nullopt;
  }

  // Polls until `pred(job or nullopt)` holds; false after `limit`.
  template <typename Pred>
  bool wait_for(const std::string& id, Pred pred, std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      if (pred(find(id))) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }

  void wait_until_gone(const std::vector<std::string>& ids, std::chrono::milliseconds limit) {
    for (const auto& id : ids)
      wait_for(id, [](const std::optional<SqueueJob>& j) { return !j; }, limit);
  }

  std::string dir, tag;
  SlurmClientConfig cfg;
  std::vector<std::string> submitted;
};

TEST_F(SlurmLive, SubmitListCancelGone) {
  const std::string comment = tag + "-run";
  auto [id, err] = submit(script("sleep 120"), comment);
  ASSERT_TRUE(id) << err;
  EXPECT_TRUE(std::all_of(id->begin(), id->end(), [](char ch) { return ch >= '0' && ch <= '9'; })) << *id;

  auto job = find(*id);
  ASSERT_TRUE(job) << "job " << *id << " not listed";
  EXPECT_EQ(job->name, tag);
  EXPECT_EQ(job->comment, comment);
  EXPECT_TRUE(job->job_state == JobState::Pending || job->job_state == JobState::Running) << job->state;
  EXPECT_TRUE(wait_for(*id, [](const std::optional<SqueueJob>& j) { return j && j->job_state == JobState::Running; },
                       30s));
  // squeue settings in the environment do not change what list() sees.
  SlurmClientConfig odd = cfg;
  odd.env.push_back({"SQUEUE_STATES", "COMPLETED"});
  odd.env.push_back({"SQUEUE_FORMAT", "%i"});
  auto [jobs, list_err] = list(&odd);
  ASSERT_TRUE(jobs) << list_err;
  const std::string job_id = *id;  // clang 14 cannot capture a structured binding in a lambda
  EXPECT_TRUE(std::any_of(jobs->begin(), jobs->end(), [&](const SqueueJob& j) { return j.id == job_id; }));

  asio::io_context io;
  ProcessRunner runner(io);
  SlurmClient client(io, runner, cfg);
  std::optional<bool> ok;
  std::string cancel_err;
  client.cancel({*id}, [&](bool o, std::string e) {
    ok = o;
    cancel_err = std::move(e);
  });
  io.run();
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(*ok) << cancel_err;
  EXPECT_TRUE(wait_for(*id, [](const std::optional<SqueueJob>& j) { return !j; }, 30s))
      << "job " << *id << " still listed after scancel";

  // Cancelling a job SLURM has forgotten is not an error.
  ok.reset();
  client.cancel({*id, "999999"}, [&](bool o, std::string e) {
    ok = o;
    cancel_err = std::move(e);
  });
  io.restart();
  io.run();
  EXPECT_TRUE(ok.value_or(false)) << cancel_err;
}

// A user's SQUEUE_*/SBATCH_* settings never reach the commands: with
// SQUEUE_PARTITION naming another partition and SBATCH_TIMELIMIT a bad
// value in the head's own environment, the job is submitted and listed.
TEST_F(SlurmLive, TheUsersSqueueAndSbatchSettingsDoNotReachTheCommands) {
  struct Restore {
    ~Restore() {
      unsetenv("SQUEUE_PARTITION");
      unsetenv("SBATCH_TIMELIMIT");
      unsetenv("SQUEUE_USERS");
    }
  } restore;
  setenv("SQUEUE_PARTITION", "no-such-partition", 1);
  setenv("SQUEUE_USERS", "nobody", 1);
  setenv("SBATCH_TIMELIMIT", "not-a-time", 1);
  auto [id, err] = submit(script("sleep 60"), tag + "-env");
  ASSERT_TRUE(id) << err;
  EXPECT_TRUE(find(*id).has_value()) << "job " << *id << " hidden by the user's SQUEUE_* settings";
}

// How a job ended, from SLURM's records: a failing batch script is FAILED
// with its exit code, a cancelled one CANCELLED (this harness keeps no
// accounting: scontrol answers, sacct is tried once and then left alone).
TEST_F(SlurmLive, EndingsComeFromSlurmsRecords) {
  auto [failing, err] = submit(script("exit 3"), tag + "-fail");
  ASSERT_TRUE(failing) << err;
  auto [sleeping, err2] = submit(script("sleep 120"), tag + "-sleep");
  ASSERT_TRUE(sleeping) << err2;
  ASSERT_TRUE(wait_for(*failing, [](const std::optional<SqueueJob>& j) { return !j; }, 30s));

  asio::io_context io;
  ProcessRunner runner(io);
  SlurmClient client(io, runner, cfg);
  std::optional<JobEnding> ending;
  std::string why;
  auto ask = [&](const std::string& id) {
    ending.reset();
    why.clear();
    client.ending(id, [&](std::optional<JobEnding> e, std::string w) {
      ending = std::move(e);
      why = std::move(w);
    });
    io.restart();
    io.run();
  };
  ask(*failing);
  ASSERT_TRUE(ending) << why;
  EXPECT_EQ(ending->slurm_state, "FAILED");
  EXPECT_EQ(ending->state, JobState::Failed);
  EXPECT_EQ(ending->exit_code, "3:0");
  EXPECT_EQ(ending->source, "scontrol");

  client.cancel({*sleeping}, [](bool, std::string) {});
  io.restart();
  io.run();
  ASSERT_TRUE(wait_for(*sleeping, [](const std::optional<SqueueJob>& j) { return !j; }, 30s));
  ask(*sleeping);
  ASSERT_TRUE(ending) << why;
  EXPECT_EQ(ending->state, JobState::Cancelled);

  // A job SLURM never had: no ending, and the reason says which command said so.
  ask("999999");
  EXPECT_FALSE(ending);
  EXPECT_NE(why.find("scontrol"), std::string::npos) << why;
}

TEST_F(SlurmLive, GpuJobStartsOnTheStandInGpu) {
  auto [id, err] = submit(script("echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"\n"
                                 "nvidia-smi --query-gpu=name,memory.total,mig.mode.current "
                                 "--format=csv,noheader,nounits\nsleep 120",
                                 "#SBATCH --gpus=1\n"),
                          tag);
  ASSERT_TRUE(id) << err;
  EXPECT_TRUE(wait_for(*id, [](const std::optional<SqueueJob>& j) { return j && j->job_state == JobState::Running; },
                       30s))
      << "a --gpus=1 job did not start";
  const fs::path out = fs::path(dir) / ("job-" + *id + ".out");
  std::string text;
  for (int i = 0; i < 100 && text.find("A100") == std::string::npos; ++i) {
    std::this_thread::sleep_for(100ms);
    text = slurp(out);
  }
  EXPECT_NE(text.find("CUDA_VISIBLE_DEVICES=0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA A100-SXM4-40GB, 40960, Disabled\n"), std::string::npos) << text;
  fs::remove(out);
}

TEST_F(SlurmLive, SecondGpuJobWaitsForTheOneGpu) {
  auto [first, e1] = submit(script("sleep 120", "#SBATCH --gpus=1\n"), tag);
  ASSERT_TRUE(first) << e1;
  ASSERT_TRUE(wait_for(*first, [](const std::optional<SqueueJob>& j) { return j && j->job_state == JobState::Running; },
                       30s));
  auto [second, e2] = submit(script("sleep 120", "#SBATCH --gpus=1\n"), tag);
  ASSERT_TRUE(second) << e2;
  std::this_thread::sleep_for(3s);  // longer than the scheduler's batch delay
  auto job = find(*second);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_state, JobState::Pending);
  EXPECT_EQ(job->nodes, "");
}

// A wrapper around a real command that counts its calls in a file.
std::string counting_wrapper(const fs::path& dir, const std::string& real) {
  const fs::path p = dir / ("count-" + real);
  std::ofstream(p) << "#!/bin/sh\necho x >> '" << (dir / ("calls-" + real)).string() << "'\nexec " << real
                   << " \"$@\"\n";
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

// `text` with the line starting with `key` given the value `value`.
std::string set_line(const std::string& text, const std::string& key, const std::string& value) {
  std::istringstream in(text);
  std::string out;
  bool found = false;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(key, 0) == 0) {
      l = key + value;
      found = true;
    }
    out += l + "\n";
  }
  EXPECT_TRUE(found) << key;
  return out;
}

int lines_in(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

TEST_F(SlurmLive, PermanentErrorFailsAtOnce) {
  const fs::path work = fs::path(dir) / tag;
  fs::create_directories(work);
  SlurmClientConfig c = cfg;
  c.sbatch = counting_wrapper(work, "sbatch");
  const auto start = Clock::now();
  auto [id, err] = submit(script("true", "#SBATCH --gres=nosuchgres:1\n"), tag, &c);
  EXPECT_FALSE(id);
  EXPECT_NE(err.find("Invalid generic resource"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_EQ(err.rfind(c.sbatch + ": exit 1: ", 0), 0u) << err;
  EXPECT_EQ(lines_in(work / "calls-sbatch"), 1) << "a permanent error was retried";
  EXPECT_LT(Clock::now() - start, 5s);
  fs::remove_all(work);
}

TEST_F(SlurmLive, UnreachableControllerIsOneClearLineAfterBoundedRetries) {
  // The harness's own config, pointed at a port nothing listens on.
  const fs::path work = fs::path(dir) / tag;
  fs::create_directories(work);
  std::string conf = slurp(fs::path(dir) / "etc" / "slurm.conf");
  conf = set_line(conf, "SlurmctldPort=", "9");
  conf = set_line(conf, "MessageTimeout=", "2");
  std::ofstream(work / "dead.conf") << conf;

  SlurmClientConfig c = cfg;
  c.env[0].second = (work / "dead.conf").string();
  c.squeue = counting_wrapper(work, "squeue");
  c.sbatch = counting_wrapper(work, "sbatch");
  c.attempts = 3;
  c.backoff = 100ms;

  auto start = Clock::now();
  auto [jobs, err] = list(&c);
  auto took = Clock::now() - start;
  EXPECT_FALSE(jobs);
  EXPECT_EQ(err.rfind("slurm controller unreachable: " + c.squeue + ": ", 0), 0u) << err;
  EXPECT_NE(err.find("Unable to contact slurm controller"), std::string::npos) << err;
  EXPECT_NE(err.find("(3 attempts)"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_EQ(lines_in(work / "calls-squeue"), 3);
  EXPECT_LT(took, 20s);

  // A controller that never answers within the timeout: the sbatch attempt
  // is killed at the timeout. It may have queued the job, and squeue cannot
  // tell either, so it is not sent again: one line that says so.
  c.timeout = 500ms;
  start = Clock::now();
  auto [id, err2] = submit(script("true"), tag + "#1", &c);
  took = Clock::now() - start;
  EXPECT_FALSE(id);
  EXPECT_EQ(err2.rfind("slurm controller unreachable: " + c.sbatch + ": timed out after 500ms; squeue could not "
                       "tell whether the job was queued (slurm controller unreachable: ",
                       0),
            0u)
      << err2;
  EXPECT_NE(err2.find("so it was not sent again: look for --comment=" + tag + "#1"), std::string::npos) << err2;
  EXPECT_EQ(err2.find('\n'), std::string::npos) << err2;
  EXPECT_EQ(lines_in(work / "calls-sbatch"), 1) << "a submission that may have been queued was sent again";
  EXPECT_LT(took, 10s);
  fs::remove_all(work);
}

// An sbatch that queues its job, then loses the answer (killed at the
// timeout): the job is found by its comment and is the answer; no second
// sbatch, one job.
TEST_F(SlurmLive, ATimedOutSbatchThatQueuedItsJobIsNotSentAgain) {
  const fs::path work = fs::path(dir) / tag;
  fs::create_directories(work);
  const fs::path slow = work / "slow-sbatch";
  std::ofstream(slow) << "#!/bin/sh\necho x >> '" << (work / "calls-sbatch").string()
                      << "'\nsbatch \"$@\" > '" << (work / "first-answer").string() << "'\nexec sleep 30\n";
  fs::permissions(slow, fs::perms::owner_all);
  SlurmClientConfig c = cfg;
  c.sbatch = slow.string();
  c.timeout = 1500ms;
  const std::string comment = tag + "#1";
  auto [id, err] = submit(script("sleep 120"), comment, &c);
  ASSERT_TRUE(id) << err;
  EXPECT_EQ(lines_in(work / "calls-sbatch"), 1);
  const std::string first = slurp(work / "first-answer");
  EXPECT_EQ(first.substr(0, first.find_first_of(";\n")), *id) << "the job the lost answer would have named";
  auto [jobs, list_err] = list();
  ASSERT_TRUE(jobs) << list_err;
  EXPECT_EQ(std::count_if(jobs->begin(), jobs->end(), [&](const SqueueJob& j) { return j.comment == comment; }), 1);
  fs::remove_all(work);
}

TEST_F(SlurmLive, CleanupFindsJobsByCommentAndByJournal) {
  const std::string run = tag + "-run";
  const std::string journal = (fs::path(dir) / (tag + ".journal")).string();
  // Two jobs of the run by comment (the second waits for the GPU), one found
  // only through the journal, one of another run that must survive.
  auto [a, ea] = submit(script("sleep 120", "#SBATCH --gpus=1\n"), run);
  auto [b, eb] = submit(script("sleep 120", "#SBATCH --gpus=1\n"), run);
  auto [c, ec] = submit(script("sleep 120"), "renamed-by-hand");
  auto [other, eo] = submit(script("sleep 120"), tag + "-other-run");
  ASSERT_TRUE(a && b && c && other) << ea << eb << ec << eo;
  {
    JobJournal j(journal);
    j.record(run, *c);
    j.record(run, "999999");  // long gone: not listed, so not "found"
    j.record(tag + "-other-run", *other);
  }

  const auto report = cleanup_run(run, journal, cfg, 30s);
  EXPECT_EQ(report.error, "");
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(report.found), sorted({*a, *b, *c}));
  EXPECT_EQ(sorted(report.cancelled), sorted({*a, *b, *c}));
  EXPECT_TRUE(report.still_listed.empty());
  EXPECT_TRUE(report.ok());
  for (const auto& id : {*a, *b, *c}) EXPECT_FALSE(find(id)) << id << " still listed";
  EXPECT_TRUE(find(*other)) << "a job of another run was cancelled";

  // Nothing left of the run: a second cleanup finds nothing, and a missing
  // journal is not an error.
  const auto again = cleanup_run(run, journal + ".missing", cfg, 5s);
  EXPECT_EQ(again.error, "");
  EXPECT_TRUE(again.found.empty());
  fs::remove(journal);
}

TEST_F(SlurmLive, CleanupReportsAMalformedJournalAndStillCancelsByComment) {
  const std::string run = tag + "-run";
  const std::string journal = (fs::path(dir) / (tag + ".journal")).string();
  std::ofstream(journal) << "garbage\n";
  auto [a, ea] = submit(script("sleep 120"), run);
  ASSERT_TRUE(a) << ea;
  const auto report = cleanup_run(run, journal, cfg, 30s);
  EXPECT_EQ(report.error, journal + ":1: expected \"<run_id><TAB><job_id>\", got \"garbage\"");
  EXPECT_EQ(report.cancelled, std::vector<std::string>{*a});
  EXPECT_FALSE(find(*a));
  fs::remove(journal);
}

TEST_F(SlurmLive, CleanupReportsAFailingSqueue) {
  SlurmClientConfig c = cfg;
  c.sbatch = c.squeue = c.scancel = "/bin/false";
  c.attempts = 2;
  const auto report = cleanup_run("some-run", "", c, 5s);
  EXPECT_EQ(report.error, "/bin/false: exit 1");
  EXPECT_FALSE(report.ok());
}

}  // namespace
}  // namespace vramsim::slurm
