#include "tests/support/test_dir.hpp"
#include "engine/trace.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
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
  TraceEvent ev{1500, TraceKind::job_ended, Json::object()};
  ev.fields["job"] = "17";
  ev.fields["state"] = "RUNNING";
  EXPECT_EQ(ev.to_json().dump(), R"({"t":1500,"kind":"job_ended","job":"17","state":"RUNNING"})");
  EXPECT_EQ(ev["job"], "17");
  EXPECT_TRUE(ev["missing"].is_null());
}

TEST(JsonLinesSink, OneLinePerEventFieldsInInsertionOrder) {
  std::ostringstream out;
  TraceRecorder rec;
  rec.add_sink(std::make_shared<JsonLinesSink>(out));
  // Field names deliberately out of alphabetical order.
  rec.record(0, TraceKind::node_registered, Json{{"node", "head"}, {"ip", "10.0.0.1"}});
  Json f = Json::object();
  f["vram_mb"] = 1;
  f["app"] = 2.5;
  f["replica"] = Json::array({1, 2});
  rec.record(2 * kSecond, TraceKind::replica_placed, f);
  rec.record(3 * kSecond, TraceKind::shutdown_started);
  rec.flush();
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], R"({"t":0,"kind":"node_registered","node":"head","ip":"10.0.0.1"})");
  EXPECT_EQ(lines[1], R"({"t":2000000,"kind":"replica_placed","vram_mb":1,"app":2.5,"replica":[1,2]})");
  EXPECT_EQ(lines[2], R"({"t":3000000,"kind":"shutdown_started"})");
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
    rec.record(1, TraceKind::signal, Json{{"count", 1}});
    rec.record(2, TraceKind::run_ended);
    rec.flush();
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "{\"t\":1,\"kind\":\"signal\",\"count\":1}\n{\"t\":2,\"kind\":\"run_ended\"}\n");
  std::remove(path.c_str());
}

TEST(JsonLinesSink, UnwritablePathThrows) {
  EXPECT_THROW(JsonLinesSink("/nonexistent-dir/for/sure/trace.jsonl"), std::runtime_error);
}

TEST(MemorySink, KeepsOrderAndFiltersByKind) {
  auto mem = std::make_shared<MemorySink>();
  TraceRecorder rec;
  rec.add_sink(mem);
  rec.record(1, TraceKind::job_ended, Json{{"job", "1"}, {"state", "PENDING"}});
  rec.record(2, TraceKind::node_registered, Json{{"node", "node-1"}});
  rec.record(3, TraceKind::job_ended, Json{{"job", "1"}, {"state", "RUNNING"}});
  ASSERT_EQ(mem->events.size(), 3u);
  EXPECT_EQ(mem->events[1].kind, TraceKind::node_registered);
  auto jobs = mem->of_kind(TraceKind::job_ended);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].t, 1);
  EXPECT_EQ(jobs[0]["state"], "PENDING");
  EXPECT_EQ(jobs[1].t, 3);
  EXPECT_EQ(jobs[1]["state"], "RUNNING");
  EXPECT_TRUE(mem->of_kind(TraceKind::admission).empty());
}

TEST(TraceRecorder, FansOutToEverySink) {
  auto a = std::make_shared<MemorySink>();
  auto b = std::make_shared<MemorySink>();
  TraceRecorder rec;
  rec.record(0, TraceKind::run_started);  // counted, written nowhere
  rec.add_sink(a);
  rec.add_sink(b);
  rec.record(5, TraceKind::signal, Json{{"count", 1}});
  EXPECT_EQ(a->events.size(), 1u);
  EXPECT_EQ(b->events.size(), 1u);
  EXPECT_EQ(b->events[0]["count"], 1);
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
  rec.record(1, TraceKind::signal, Json{{"signal", "a long string that no small-string buffer holds"}});
  EXPECT_EQ(first->writes, 1);
  EXPECT_EQ(first->keeps, 0);
  EXPECT_EQ(second->writes, 0);
  EXPECT_EQ(second->keeps, 1);
  EXPECT_EQ(first->last.to_json(), second->last.to_json());
  rec.add_sink(mem);  // now last: keeps its own, the others write
  rec.record(2, TraceKind::run_ended, Json{{"events", 2}});
  EXPECT_EQ(second->writes, 1);
  ASSERT_EQ(mem->events.size(), 1u);
  EXPECT_EQ(mem->events[0].kind, TraceKind::run_ended);
  EXPECT_EQ(mem->events[0]["events"], 2);
  EXPECT_EQ(second->last.to_json(), mem->events[0].to_json());
}

// "t" and "kind" head every line: a field of either name is refused, and
// a field that only starts like one is not.
TEST(TraceRecorder, ReservedFieldNamesAreRefused) {
  TraceRecorder rec;
  EXPECT_THROW(rec.record(0, TraceKind::signal, Json{{"count", 1}, {"t", 2}}), std::logic_error);
  EXPECT_THROW(rec.record(0, TraceKind::signal, Json{{"kind", "y"}}), std::logic_error);
  EXPECT_NO_THROW(rec.record(0, TraceKind::signal, Json{{"signal", 1}, {"count", 2}}));
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
  // replica_placed's fields, out of their declared order.
  rec.record(7, TraceKind::replica_placed,
             {{"node", id}, {"app", -3}, {"vram_mb", count}, {"num_gpus", 0.25}, {"device_overbooked", true},
              {"job", nullptr}, {"devices", {{"b", 1}, {"a", "x"}}}, {"replica", nodes}, {"app", 99}});
  rec.record(7, TraceKind::device_vram_overbooked, Json{{"node", id}, {"app", -3}, {"booked_mb", count},
                                                      {"total_mb", 0.25}, {"device", true}});
  rec.record(7, TraceKind::replica_placed,
             Json{{"node", id}, {"app", -3}, {"vram_mb", count}, {"num_gpus", 0.25}, {"device_overbooked", true},
                  {"job", nullptr}, {"devices", {{"b", 1}, {"a", "x"}}}, {"replica", nodes}, {"app", 99}});
  ASSERT_EQ(mem->events.size(), 3u);
  // Written out by hand: insertion order, the first "app", an unsigned count.
  const std::string want =
      R"({"node":"a long application id that no small-string buffer holds","app":-3,)"
      R"("vram_mb":18446744073709551615,"num_gpus":0.25,"device_overbooked":true,"job":null,)"
      R"("devices":{"b":1,"a":"x"},"replica":["n1","n2"]})";
  EXPECT_EQ(mem->events[0].fields.dump(), want);
  EXPECT_EQ(mem->events[2].fields.dump(), want);
  EXPECT_TRUE(mem->events[0]["vram_mb"].is_number_unsigned());
  EXPECT_TRUE(mem->events[0]["app"].is_number_integer());
  EXPECT_EQ(mem->events[0].kind, TraceKind::replica_placed);
  EXPECT_EQ(mem->events[0].t, 7);

  EXPECT_THROW(rec.record(0, TraceKind::signal, {{"count", 1}, {"t", 2}}), std::logic_error);
  EXPECT_THROW(rec.record(0, TraceKind::signal, {{"kind", "y"}}), std::logic_error);
  EXPECT_EQ(mem->events.size(), 3u);
}

TEST(JsonLinesSink, BufferedLinesAreTheEventsJson) {
  std::ostringstream out;
  std::vector<TraceEvent> events = {
      {5, TraceKind::run_ended, Json()},           // null fields, as record(t, kind, {}) gives
      {6, TraceKind::shutdown_started, Json::object()},
      {-7, TraceKind::call_result, Json{{"a", 1}, {"b", Json::array({1, "x\"y"})}, {"c", Json{{"d", nullptr}}}}},
      {8, TraceKind::signal, Json{{"v", 0.25}, {"w", "we\u00efrd \"field\""}}}};
  {
    JsonLinesSink sink(out);
    for (const auto& ev : events) sink.write(ev);
    EXPECT_EQ(out.str(), "") << "held in the buffer until flushed";
    sink.flush();
  }
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(lines[i], events[i].to_json().dump());
  EXPECT_EQ(lines[0], R"({"t":5,"kind":"run_ended"})");
}

TEST(JsonLinesSink, LargeOutputGoesOutBeforeFlushAndAFailedWriteThrows) {
  std::ostringstream out;
  JsonLinesSink sink(out);
  const TraceEvent ev{1, TraceKind::head_warning, Json{{"warning", std::string(1000, 'x')}}};
  for (std::size_t n = 0; n * 1000 < 2 * JsonLinesSink::kBufferBytes; ++n) sink.write(ev);
  EXPECT_GE(out.str().size(), JsonLinesSink::kBufferBytes) << "a full buffer is written out";
  out.setstate(std::ios::badbit);
  EXPECT_THROW(sink.flush(), std::runtime_error);
}

TEST(JsonLinesSink, DestructionWritesWhatIsLeft) {
  std::ostringstream out;
  {
    JsonLinesSink sink(out);
    sink.write(TraceEvent{1, TraceKind::run_ended, Json::object()});
  }
  EXPECT_EQ(out.str(), "{\"t\":1,\"kind\":\"run_ended\"}\n");
}

// Every kind has a unique name that reads back as the kind; a name no kind
// declares reads back as none; each kind's fields are named once.
TEST(TraceKinds, NamesAreUniqueAndReadBack) {
  std::set<std::string_view> names;
  for (TraceKind k : all_trace_kinds()) {
    EXPECT_TRUE(names.insert(name(k)).second) << name(k);
    EXPECT_EQ(trace_kind_named(name(k)), k) << name(k);
    std::set<std::string_view> fields(trace_kind_fields(k).begin(), trace_kind_fields(k).end());
    EXPECT_EQ(fields.size(), trace_kind_fields(k).size()) << name(k);
  }
  EXPECT_EQ(names.size(), kTraceKindCount);
  EXPECT_EQ(trace_kind_named("node_up"), std::nullopt);
  EXPECT_EQ(trace_kind_named(""), std::nullopt);
  EXPECT_TRUE(trace_kind_has_field(TraceKind::replica_placed, "vram_mb"));
  EXPECT_FALSE(trace_kind_has_field(TraceKind::replica_placed, "vram"));
}

// Where the checks are built in (the sanitizer build, which runs the
// tests), a field the kind does not declare is refused; elsewhere the
// recorder takes it as it is.
TEST(TraceKinds, AnUndeclaredFieldIsRefusedWhereChecked) {
  TraceRecorder rec;
#ifdef VRAMSIM_TRACE_CHECKS
  EXPECT_THROW(rec.record(0, TraceKind::signal, {{"count", 1}, {"sgnal", "SIGINT"}}), std::logic_error);
  EXPECT_EQ(rec.count(), 0u);
#else
  EXPECT_NO_THROW(rec.record(0, TraceKind::signal, {{"count", 1}, {"sgnal", "SIGINT"}}));
  EXPECT_EQ(rec.count(), 1u);
#endif
  EXPECT_NO_THROW(rec.record(0, TraceKind::signal, {{"count", 1}, {"signal", "SIGINT"}}));
}
}  // namespace
}  // namespace vramsim
