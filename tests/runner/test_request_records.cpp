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

#include "runner/run_outputs.hpp"
#include "runner/simulation.hpp"
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
  o.keep_requests = true;
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
  o.requests_csv_path = dir.file("requests.csv");
  const RunResult r = run_scenario(parse_scenario(doc, "records-test.json"), o);
  std::ifstream in(o.requests_csv_path);
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
  r.metrics.for_each([&](const char* n, std::optional<double>) { names.emplace_back(n); });
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

}  // namespace
}  // namespace vramsim
