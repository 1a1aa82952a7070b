#include "tests/support/test_dir.hpp"
#include "engine/trace.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vramsim {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(TraceEvent, ToJsonPutsTimeAndKindFirst) {
  TraceEvent ev{1500, "job_state", Json::object()};
  ev.fields["job"] = "17";
  ev.fields["state"] = "RUNNING";
  EXPECT_EQ(ev.to_json().dump(), R"({"t":1500,"kind":"job_state","job":"17","state":"RUNNING"})");
  EXPECT_EQ(ev["job"], "17");
  EXPECT_TRUE(ev["missing"].is_null());
}

TEST(JsonLinesSink, OneLinePerEventFieldsInInsertionOrder) {
  std::ostringstream out;
  TraceRecorder rec;
  rec.add_sink(std::make_shared<JsonLinesSink>(out));
  // Field names deliberately out of alphabetical order.
  rec.record(0, "node_up", Json{{"node", "head"}, {"ip", "10.0.0.1"}});
  Json f = Json::object();
  f["zeta"] = 1;
  f["alpha"] = 2.5;
  f["mid"] = Json::array({1, 2});
  rec.record(2 * kSecond, "custom", f);
  rec.record(3 * kSecond, "empty");
  rec.flush();
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], R"({"t":0,"kind":"node_up","node":"head","ip":"10.0.0.1"})");
  EXPECT_EQ(lines[1], R"({"t":2000000,"kind":"custom","zeta":1,"alpha":2.5,"mid":[1,2]})");
  EXPECT_EQ(lines[2], R"({"t":3000000,"kind":"empty"})");
  EXPECT_EQ(out.str().back(), '\n');
  for (const auto& line : lines) {
    auto j = Json::parse(line);
    ASSERT_GE(j.size(), 2u);
    EXPECT_EQ(j.begin().key(), "t");
    EXPECT_EQ(std::next(j.begin()).key(), "kind");
  }
  EXPECT_EQ(rec.count(), 3u);
}

TEST(JsonLinesSink, WritesAFile) {
  const testing_support::TestDir dir;
  const std::string path = dir.file("trace.jsonl");
  {
    TraceRecorder rec;
    rec.add_sink(std::make_shared<JsonLinesSink>(path));
    rec.record(1, "a", Json{{"x", 1}});
    rec.record(2, "b");
    rec.flush();
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "{\"t\":1,\"kind\":\"a\",\"x\":1}\n{\"t\":2,\"kind\":\"b\"}\n");
  std::remove(path.c_str());
}

TEST(JsonLinesSink, UnwritablePathThrows) {
  EXPECT_THROW(JsonLinesSink("/nonexistent-dir/for/sure/trace.jsonl"), std::runtime_error);
}

TEST(MemorySink, KeepsOrderAndFiltersByKind) {
  auto mem = std::make_shared<MemorySink>();
  TraceRecorder rec;
  rec.add_sink(mem);
  rec.record(1, "job_state", Json{{"job", "1"}, {"state", "PENDING"}});
  rec.record(2, "node_up", Json{{"node", "node-1"}});
  rec.record(3, "job_state", Json{{"job", "1"}, {"state", "RUNNING"}});
  ASSERT_EQ(mem->events.size(), 3u);
  EXPECT_EQ(mem->events[1].kind, "node_up");
  auto jobs = mem->of_kind("job_state");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].t, 1);
  EXPECT_EQ(jobs[0]["state"], "PENDING");
  EXPECT_EQ(jobs[1].t, 3);
  EXPECT_EQ(jobs[1]["state"], "RUNNING");
  EXPECT_TRUE(mem->of_kind("nothing").empty());
}

TEST(TraceRecorder, FansOutToEverySink) {
  auto a = std::make_shared<MemorySink>();
  auto b = std::make_shared<MemorySink>();
  TraceRecorder rec;
  rec.record(0, "before_sinks");  // counted, written nowhere
  rec.add_sink(a);
  rec.add_sink(b);
  rec.record(5, "x", Json{{"k", 1}});
  EXPECT_EQ(a->events.size(), 1u);
  EXPECT_EQ(b->events.size(), 1u);
  EXPECT_EQ(b->events[0]["k"], 1);
  EXPECT_EQ(rec.count(), 2u);
}

// Every sink but the last gets write(event); the last gets keep(event), the
// event to keep, whose default is write: each sees the whole event.
TEST(TraceRecorder, TheLastSinkIsHandedTheEventToKeep) {
  struct Counting final : TraceSink {
    int writes = 0, keeps = 0;
    TraceEvent last;
    void write(const TraceEvent& ev) override {
      ++writes;
      last = ev;
    }
    void keep(TraceEvent&& ev) override {
      ++keeps;
      last = std::move(ev);
    }
  };
  auto first = std::make_shared<Counting>(), second = std::make_shared<Counting>();
  auto mem = std::make_shared<MemorySink>();
  TraceRecorder rec;
  rec.add_sink(first);
  rec.add_sink(second);
  rec.record(1, "x", Json{{"k", "a long string that no small-string buffer holds"}});
  EXPECT_EQ(first->writes, 1);
  EXPECT_EQ(first->keeps, 0);
  EXPECT_EQ(second->writes, 0);
  EXPECT_EQ(second->keeps, 1);
  EXPECT_EQ(first->last.to_json(), second->last.to_json());
  rec.add_sink(mem);  // now last: keeps its own, the others write
  rec.record(2, "y", Json{{"k", 2}});
  EXPECT_EQ(second->writes, 1);
  ASSERT_EQ(mem->events.size(), 1u);
  EXPECT_EQ(mem->events[0].kind, "y");
  EXPECT_EQ(mem->events[0]["k"], 2);
  EXPECT_EQ(second->last.to_json(), mem->events[0].to_json());
}

// "t" and "kind" head every line: a field of either name is refused, and
// a field that only starts like one is not.
TEST(TraceRecorder, ReservedFieldNamesAreRefused) {
  TraceRecorder rec;
  EXPECT_THROW(rec.record(0, "x", Json{{"a", 1}, {"t", 2}}), std::logic_error);
  EXPECT_THROW(rec.record(0, "x", Json{{"kind", "y"}}), std::logic_error);
  EXPECT_NO_THROW(rec.record(0, "x", Json{{"tt", 1}, {"kinds", 2}, {"k", 3}}));
  EXPECT_EQ(rec.count(), 1u);
}

// Fields written in place, record(t, kind, {{name, value}, ...}), make the
// event a braced Json makes: the same order, the same types, nested values
// kept, the first of two fields of one name kept, reserved names refused.
TEST(TraceRecorder, FieldsWrittenInPlaceMakeTheEventABracedJsonMakes) {
  auto mem = std::make_shared<MemorySink>();
  TraceRecorder rec;
  rec.add_sink(mem);
  const std::string id = "a long application id that no small-string buffer holds";
  const std::size_t count = 18446744073709551615u;
  const std::vector<std::string> nodes{"n1", "n2"};
  rec.record(7, "in_place",
             {{"zeta", id}, {"alpha", -3}, {"count", count}, {"ratio", 0.25}, {"ok", true}, {"none", nullptr},
              {"nested", {{"b", 1}, {"a", "x"}}}, {"nodes", nodes}, {"alpha", 99}});
  rec.record(7, "braced",
             Json{{"zeta", id}, {"alpha", -3}, {"count", count}, {"ratio", 0.25}, {"ok", true}, {"none", nullptr},
                  {"nested", {{"b", 1}, {"a", "x"}}}, {"nodes", nodes}, {"alpha", 99}});
  ASSERT_EQ(mem->events.size(), 2u);
  // Written out by hand: insertion order, the first "alpha", an unsigned count.
  const std::string want =
      R"({"zeta":"a long application id that no small-string buffer holds","alpha":-3,)"
      R"("count":18446744073709551615,"ratio":0.25,"ok":true,"none":null,"nested":{"b":1,"a":"x"},)"
      R"("nodes":["n1","n2"]})";
  EXPECT_EQ(mem->events[0].fields.dump(), want);
  EXPECT_EQ(mem->events[1].fields.dump(), want);
  EXPECT_TRUE(mem->events[0]["count"].is_number_unsigned());
  EXPECT_TRUE(mem->events[0]["alpha"].is_number_integer());
  EXPECT_EQ(mem->events[0].kind, "in_place");
  EXPECT_EQ(mem->events[0].t, 7);

  EXPECT_THROW(rec.record(0, "x", {{"a", 1}, {"t", 2}}), std::logic_error);
  EXPECT_THROW(rec.record(0, "x", {{"kind", "y"}}), std::logic_error);
  EXPECT_EQ(mem->events.size(), 2u);
}

TEST(JsonLinesSink, BufferedLinesAreTheEventsJson) {
  std::ostringstream out;
  std::vector<TraceEvent> events = {
      {5, "no_fields", Json()},           // null fields, as record(t, kind, {}) gives
      {6, "empty", Json::object()},
      {-7, "nested", Json{{"a", 1}, {"b", Json::array({1, "x\"y"})}, {"c", Json{{"d", nullptr}}}}},
      {8, "we\u00efrd \"kind\"", Json{{"v", 0.25}}}};
  {
    JsonLinesSink sink(out);
    for (const auto& ev : events) sink.write(ev);
    EXPECT_EQ(out.str(), "") << "held in the buffer until flushed";
    sink.flush();
  }
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(lines[i], events[i].to_json().dump());
  EXPECT_EQ(lines[0], R"({"t":5,"kind":"no_fields"})");
}

TEST(JsonLinesSink, LargeOutputGoesOutBeforeFlushAndAFailedWriteThrows) {
  std::ostringstream out;
  JsonLinesSink sink(out);
  const TraceEvent ev{1, "big", Json{{"pad", std::string(1000, 'x')}}};
  for (std::size_t n = 0; n * 1000 < 2 * JsonLinesSink::kBufferBytes; ++n) sink.write(ev);
  EXPECT_GE(out.str().size(), JsonLinesSink::kBufferBytes) << "a full buffer is written out";
  out.setstate(std::ios::badbit);
  EXPECT_THROW(sink.flush(), std::runtime_error);
}

TEST(JsonLinesSink, DestructionWritesWhatIsLeft) {
  std::ostringstream out;
  {
    JsonLinesSink sink(out);
    sink.write(TraceEvent{1, "k", Json::object()});
  }
  EXPECT_EQ(out.str(), "{\"t\":1,\"kind\":\"k\"}\n");
}
}  // namespace
}  // namespace vramsim
