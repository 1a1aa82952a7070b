// Every request's path (RunResult::requests, run --requests-csv), checked
// against a single-server FIFO queue worked by hand from the recorded
// arrivals (Lindley's recursion with Ray Serve's queue limit), the request
// timeout, a node lost under its requests, and the run's own counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "runner/plan.hpp"
#include "observers/requests_csv.hpp"
#include "observers/summary_json.hpp"
#include "runner/simulation.hpp"
#include "runner/sweep.hpp"
#include "scenario/scenario.hpp"
#include "tests/support/serving_scenarios.hpp"
#include "tests/support/test_dir.hpp"

namespace vramsim {
namespace {

using testing_support::TestDir;

// One whole-GPU replica with max_ongoing_requests 1 on a static cluster: a
// single FIFO server once it runs.
Json one_server(double rate, const std::string& service, std::uint64_t requests) {
  Json doc = testing_support::queue_scenario(1, rate, service, requests);
  doc["horizon"] = "2h";
  return doc;
}

RunResult run_kept(const Json& doc) {
  RunOptions o;
  o.outputs.keep_requests = true;
  return run_scenario(parse_scenario(doc, "records-test.json"), o);
}

std::size_t count(const RequestRecords& r, RequestOutcome o) {
  return static_cast<std::size_t>(std::count(r.outcome.begin(), r.outcome.end(), o));
}

TEST(RequestRecords, FollowLindleysRecursionWithTheQueueLimit) {
  // 2 requests a second on one 1 s server with at most 3 waiting: about
  // half are refused. By hand from the arrivals: a request is refused when
  // 3 accepted requests have not started yet; else it starts when it
  // arrives or when the one before it ends, and ends 1 s later.
  Json doc = one_server(2, "1s", 400);
  doc["apps"][0]["serve"]["max_queued_requests"] = 3;
  const RunResult r = run_kept(doc);
  const RequestRecords& rec = r.requests;
  ASSERT_EQ(rec.size(), 400u);
  std::vector<SimTime> accepted_starts;
  SimTime last_end = 0;
  std::size_t refused = 0;
  for (std::size_t i = 0; i < rec.size(); ++i) {
    const SimTime a = rec.arrival[i];
    if (i > 0) {
      ASSERT_GE(a, rec.arrival[i - 1]) << "arrival order";
    }
    const auto waiting = std::count_if(accepted_starts.begin(), accepted_starts.end(), [&](SimTime s) { return s > a; });
    if (waiting >= 3) {
      EXPECT_EQ(rec.outcome[i], RequestOutcome::Refused) << "request " << i;
      EXPECT_EQ(rec.end[i], a) << "refused at once";
      EXPECT_EQ(rec.start[i], -1);
      EXPECT_EQ(rec.replica[i], -1);
      ++refused;
      continue;
    }
    const SimTime start = std::max(a, last_end);
    last_end = start + kSecond;
    accepted_starts.push_back(start);
    EXPECT_EQ(rec.outcome[i], RequestOutcome::Completed) << "request " << i;
    EXPECT_EQ(rec.start[i], start) << "request " << i;
    EXPECT_EQ(rec.end[i], start + kSecond) << "request " << i;
    EXPECT_EQ(rec.replica[i], 0);
    EXPECT_EQ(rec.cold[i], 0) << "the replica ran before the traffic started";
  }
  EXPECT_GT(refused, 100u);
  const ServeOutcome& o = r.serving.at(0);
  EXPECT_EQ(count(rec, RequestOutcome::Refused), o.refused);
  EXPECT_EQ(count(rec, RequestOutcome::Completed), o.completed);
  ASSERT_EQ(rec.app_names, std::vector<std::string>{"m"});
}

TEST(RequestRecords, ATimedOutRequestEndsAtItsDeadlineAndTheNextStartsThen) {
  // Every request needs 2 s, the timeout is 1.5 s: each ends 1.5 s after it
  // arrived, its work cancelled on the replica. By hand: one slot, FIFO, one
  // deadline for all, so the next waiting request's deadline is always later
  // than the one now ending: each starts when the one before it ends (or
  // when it arrives, on an idle slot), and none expires while waiting.
  Json doc = one_server(10, "2s", 100);
  doc["apps"][0]["serve"]["request_timeout_s"] = 1.5;
  const RunResult r = run_kept(doc);
  const RequestRecords& rec = r.requests;
  ASSERT_EQ(rec.size(), 100u);
  std::size_t waited = 0;
  for (std::size_t i = 0; i < rec.size(); ++i) {
    EXPECT_EQ(rec.outcome[i], RequestOutcome::TimedOut) << i;
    EXPECT_EQ(rec.end[i], rec.arrival[i] + 1500 * kMillisecond) << i;
    const SimTime free_at = i == 0 ? rec.arrival[0] : std::max(rec.arrival[i], rec.end[i - 1]);
    EXPECT_EQ(rec.start[i], free_at) << i;
    waited += rec.start[i] > rec.arrival[i];
  }
  EXPECT_GT(waited, 80u) << "10 a second on a slot held 1.5 s each: nearly all wait";
  EXPECT_EQ(count(rec, RequestOutcome::TimedOut), r.serving.at(0).timed_out);
}

TEST(RequestRecords, RequestsOnALostNodeFailWhenItIsLostAndTheRestAreUnfinished) {
  // The worker job's time limit ends its node at 10 min with a request in
  // service (each takes 100 s, one every 10 s): that one fails then; the
  // queue is still waiting at the horizon.
  Json doc = one_server(0.1, "100s", 200);
  doc["cluster"]["worker_defaults"]["time_limit"] = "10m";
  doc["horizon"] = "20m";
  const RunResult r = run_kept(doc);
  const RequestRecords& rec = r.requests;
  const ServeOutcome& o = r.serving.at(0);
  ASSERT_EQ(count(rec, RequestOutcome::Failed), o.failed);
  ASSERT_EQ(o.failed, 1u);
  EXPECT_EQ(count(rec, RequestOutcome::Unfinished), o.unfinished);
  EXPECT_GT(o.unfinished, 0u);
  for (std::size_t i = 0; i < rec.size(); ++i) {
    if (rec.outcome[i] == RequestOutcome::Failed) {
      EXPECT_GE(rec.start[i], 0);
      EXPECT_GT(rec.end[i], rec.start[i]);
      EXPECT_LT(rec.end[i] - rec.start[i], 100 * kSecond) << "lost before its work was done";
      EXPECT_GE(rec.end[i], 10 * kMinute) << "the time limit counts from the job's start";
    }
    if (rec.outcome[i] == RequestOutcome::Unfinished) {
      EXPECT_EQ(rec.end[i], -1);
    }
  }
}

TEST(RequestRecords, TheCsvHoldsEveryRecordInSecondsAndEmptyCellsForNone) {
  TestDir dir;
  Json doc = one_server(2, "1s", 50);
  doc["apps"][0]["serve"]["max_queued_requests"] = 1;
  RunOptions o;
  o.outputs.requests_csv_path = dir.file("requests.csv");
  const RunResult r = run_scenario(parse_scenario(doc, "records-test.json"), o);
  std::ifstream in(o.outputs.requests_csv_path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line + "\n", kRequestsCsvHeader);
  std::size_t rows = 0;
  for (; std::getline(in, line); ++rows) {
    ASSERT_LT(rows, r.requests.size());
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (line.back() == ',') cells.emplace_back();
    ASSERT_EQ(cells.size(), 7u) << line;
    EXPECT_EQ(cells[0], "m");
    EXPECT_DOUBLE_EQ(std::stod(cells[1]), to_seconds(r.requests.arrival[rows]));
    EXPECT_EQ(cells[6], to_string(r.requests.outcome[rows]));
    if (r.requests.outcome[rows] == RequestOutcome::Refused) {
      EXPECT_EQ(cells[2], "") << "never started";
      EXPECT_EQ(cells[4], "") << "no replica";
    } else {
      EXPECT_DOUBLE_EQ(std::stod(cells[3]) - std::stod(cells[2]), 1.0) << line;
    }
  }
  EXPECT_EQ(rows, 50u);
}

TEST(RunSummary, HoldsEverySweepColumnAndSpellsNeverAsAnOverflowingNumber) {
  Json doc = one_server(50, "1s", 20);
  // 20 requests in about 0.4 s on one 1 s slot with one waiting place: the
  // first and the one waiting are served, the rest refused; p99 is never.
  doc["apps"][0]["serve"]["max_queued_requests"] = 1;
  const RunResult r = run_kept(doc);
  const Json s = run_summary(r);
  std::vector<std::string> names;
  r.metrics.for_each([&](std::string_view n, std::optional<double>) { names.emplace_back(n); });
  for (const auto& n : names) EXPECT_TRUE(s.contains(n)) << n;
  EXPECT_EQ(s["seed"], r.seed);
  EXPECT_EQ(s["req_refused"], 18.0);
  const std::string text = summary_json_text(s);
  EXPECT_NE(text.find("\"req_latency_p99_s\": 1e999"), std::string::npos) << text;
  // 1e999 reads back as infinity (strtod; Python's json.load alike).
  const auto at = text.find("1e999");
  EXPECT_TRUE(std::isinf(std::strtod(text.c_str() + at, nullptr)));
  // The rest is plain JSON: with never spelled null it parses, every figure kept.
  std::string as_null = text;
  for (auto p = as_null.find("1e999"); p != std::string::npos; p = as_null.find("1e999")) as_null.replace(p, 5, "null");
  const Json back = Json::parse(as_null);
  EXPECT_TRUE(back["req_latency_p99_s"].is_null());
  EXPECT_EQ(back["req_completed"], 2.0);
  EXPECT_EQ(back["events"], s["events"]);
}

// The worker job's time limit (10 min) ends the only node with a request in
// service (one every 10 s, 100 s each): by hand, one job, one replica and one
// request lost. The static cluster submits no job after it, so nothing else
// is lost before the 20 min horizon.
Json timed_out_while_serving(const std::string& limit) {
  Json doc = one_server(0.1, "100s", 200);
  doc["cluster"]["worker_defaults"]["time_limit"] = limit;
  doc["horizon"] = "20m";
  return doc;
}

TEST(TimeLimit, AJobEndedWhileServingIsCountedWithTheReplicaAndRequestsItTook) {
  const RunResult r = run_kept(timed_out_while_serving("10m"));
  const RunMetrics& m = r.metrics;
  EXPECT_EQ(m.jobs_timeout, 1);
  ASSERT_TRUE(m.jobs_timeout_serving && m.replicas_lost_time_limit && m.req_failed_time_limit);
  EXPECT_EQ(*m.jobs_timeout_serving, 1);
  EXPECT_EQ(*m.replicas_lost_time_limit, 1);
  EXPECT_EQ(*m.req_failed_time_limit, static_cast<double>(r.serving.at(0).failed));
  EXPECT_EQ(*m.req_failed_time_limit, 1);
  std::ostringstream out;
  print_summary(r, out);
  EXPECT_NE(out.str().find("time limit: 1 worker job(s) reached their time_limit while serving; 1 replica(s) lost "
                           "with their nodes (a replacement is a cold start) and 1 request(s) lost with them"),
            std::string::npos)
      << out.str();
  const Json s = run_summary(r);
  EXPECT_EQ(s["jobs_timeout_serving"], 1.0);
}

TEST(TimeLimit, NoLineWhenNoJobReachesItAndNoFigureWithoutServing) {
  const RunResult r = run_kept(timed_out_while_serving("365d"));
  EXPECT_EQ(r.metrics.jobs_timeout, 0);
  EXPECT_EQ(r.metrics.jobs_timeout_serving, 0.0);
  std::ostringstream out;
  print_summary(r, out);
  EXPECT_EQ(out.str().find("time limit:"), std::string::npos) << out.str();
  // Without traffic nothing serves: not measured.
  Json quiet = timed_out_while_serving("10m");
  quiet["apps"][0].erase("serve");
  const RunResult q = run_kept(quiet);
  EXPECT_EQ(q.metrics.jobs_timeout, 1);
  EXPECT_FALSE(q.metrics.jobs_timeout_serving);
}

TEST(TimeLimit, TheSweepSaysInHowManyRunsAndWhatWasLost) {
  SweepGrid g;
  g.params.push_back(parse_set(R"(cluster.worker_defaults.time_limit="10m","365d")"));
  g.seeds = {1, 2};
  const auto scenarios = expand_scenarios(timed_out_while_serving("10m"), "records-test.json", g);
  std::string csv = sweep_csv_header(g);
  for (const auto& row : run_sweep(g, scenarios, 0, g.size(), 1)) csv += row;
  // Two seeds at 10 min, each one job, one replica, one request (above).
  EXPECT_EQ(sweep_time_limit_line(csv),
            "sweep: time limit: in 2 of 4 runs worker jobs reached their time_limit while serving (2 job(s) in all; "
            "2 replica(s) lost, each replacement a cold start, 2 request(s) lost); see the columns "
            "jobs_timeout_serving, replicas_lost_time_limit and req_failed_time_limit of a sweep, and "
            "docs/serving.md, \"Worker time limits\"\n");
  SweepGrid none = g;
  none.params[0] = parse_set(R"(cluster.worker_defaults.time_limit="365d")");
  std::string quiet = sweep_csv_header(none);
  for (const auto& row : run_sweep(none, expand_scenarios(timed_out_while_serving("10m"), "records-test.json", none),
                                   0, none.size(), 1))
    quiet += row;
  EXPECT_EQ(sweep_time_limit_line(quiet), "");
}

// A plan counts them over every run of its search, and says so in the same
// line: every configuration, every seed (exhaustive), two of four runs at
// 10 min with one job, one replica and one request lost each (above).
TEST(TimeLimit, ThePlanSaysInHowManyOfItsRunsAndWhatWasLost) {
  PlanSpec spec;
  spec.grid.params.push_back(parse_vary(R"(cluster.worker_defaults.time_limit="10m","365d")"));
  spec.grid.seeds = {1, 2};
  spec.monotone = {false};
  spec.slos.push_back(parse_slo_arg("req_latency_p99_s <= 1000000"));
  spec.objective = "replica_seconds";
  spec.exhaustive = true;
  const PlanResult r =
      run_plan(spec, local_plan_evaluator(timed_out_while_serving("10m"), "records-test.json", spec, 1));
  EXPECT_EQ(r.runs, 4u);
  EXPECT_EQ(r.time_limit.runs, 4u);
  EXPECT_EQ(r.time_limit.hit, 2u);
  EXPECT_EQ(r.time_limit.jobs, 2);
  EXPECT_EQ(r.time_limit.replicas, 2);
  EXPECT_EQ(r.time_limit.requests, 2);
  EXPECT_EQ(time_limit_line("plan", r.time_limit).rfind("plan: time limit: in 2 of 4 runs worker jobs reached their "
                                                        "time_limit while serving (2 job(s) in all; 2 replica(s) lost",
                                                        0),
            0u)
      << time_limit_line("plan", r.time_limit);
  spec.grid.params[0] = parse_vary(R"(cluster.worker_defaults.time_limit="365d")");
  const PlanResult quiet =
      run_plan(spec, local_plan_evaluator(timed_out_while_serving("10m"), "records-test.json", spec, 1));
  EXPECT_EQ(quiet.time_limit.hit, 0u);
  EXPECT_EQ(time_limit_line("plan", quiet.time_limit), "");
}

}  // namespace
}  // namespace vramsim
