// Input that must be refused at load with a one-line error naming the JSON
// path and quoting the value as written: numbers out of their documented
// range, malformed or ambiguous JSON, warm workers that fit nowhere.
#include <gtest/gtest.h>

#include <string>

#include "scenario/scenario.hpp"

using namespace vramsim;

namespace {

ScenarioError text_error(const std::string& text) {
  try {
    parse_scenario_text(text, "case.json");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << text;
  return ScenarioError("", "", "");
}

bool has(const ScenarioError& e, const std::string& s) { return e.problem().find(s) != std::string::npos; }

}  // namespace

TEST(JsonInput, DuplicateKeysAreRefusedWithTheirPath) {
  auto top = text_error(R"({"seed": 1, "seed": 2})");
  EXPECT_EQ(top.path(), "$.seed");
  EXPECT_TRUE(has(top, "duplicate key \"seed\"")) << top.problem();
  auto nested = text_error(R"({"apps": [{"id": "a"}, {"id": "b", "cpus": 1, "cpus": 2}]})");
  EXPECT_EQ(nested.path(), "$.apps[1].cpus");
  // The same key in sibling objects is fine.
  EXPECT_NO_THROW(parse_scenario_text(R"({"apps": [{"id": "a"}, {"id": "b"}]})", "case.json"));
}

TEST(JsonInput, DeepNestingIsRefusedBeforeItIsBuilt) {
  const int depth = 100000;  // would overflow the stack in a recursive copy
  std::string text = R"({"apps": [{"id": "a"}], "expect": [{"event": "x", "match": )";
  for (int i = 0; i < depth; ++i) text += "{\"k\":";
  text += "1";
  for (int i = 0; i < depth; ++i) text += "}";
  text += "}]}";
  auto e = text_error(text);
  EXPECT_TRUE(has(e, "nesting deeper than " + std::to_string(limits::kMaxDepth))) << e.problem();
  EXPECT_EQ(e.path().rfind("$.expect[0].match.k", 0), 0u) << e.path();
  // Nesting up to the limit is accepted by the reader.
  std::string ok = "{\"description\": \"\"";
  for (int i = 1; i < limits::kMaxDepth; ++i) ok += i == 1 ? ", \"apps\": [" : "[";
  EXPECT_TRUE(has(text_error(ok), "invalid JSON"));  // truncated, but not too deep
}

TEST(JsonInput, NothingMayFollowTheDocument) {
  auto tail = text_error(R"({"seed": 1} {"seed": 2})");
  EXPECT_TRUE(has(tail, "invalid JSON at line 1, column 13")) << tail.problem();
  EXPECT_TRUE(has(tail, "expected end of input")) << tail.problem();
  std::string with_nul = R"({"seed": 1})";
  with_nul += '\0';
  with_nul += R"(garbage)";
  auto nul = text_error(with_nul);
  EXPECT_TRUE(has(nul, "NUL byte at offset 11")) << nul.problem();
}

TEST(JsonInput, SyntaxErrorsCarryTheParsersReason) {
  auto e = text_error("{\n  \"seed\": tru\n}");
  EXPECT_TRUE(has(e, "invalid JSON at line 3")) << e.problem();  // after the newline it read
  EXPECT_TRUE(has(e, "invalid literal")) << e.problem();
  // Bytes the parser quotes are made printable: the message stays one line.
  auto bin = text_error(std::string("{\"seed\": \x01\n}"));
  EXPECT_EQ(bin.problem().find('\n'), std::string::npos) << bin.problem();
  EXPECT_EQ(bin.problem().find('\x01'), std::string::npos) << bin.problem();
  auto utf = text_error("{\"name\": \"\xff\"}");
  EXPECT_TRUE(has(utf, "invalid JSON")) << utf.problem();
}

TEST(JsonInput, NumbersBeyondDoubleAreAnErrorNotAnAbort) {
  auto e = text_error(R"({"seed": 1e400})");
  EXPECT_TRUE(has(e, "1e400")) << e.problem();
}

TEST(NumericFields, OutOfRangeIntegersQuoteTheValueAsWritten) {
  auto big = text_error(R"({"cluster": {"max_workers": 4294967297}})");
  EXPECT_EQ(big.path(), "$.cluster.max_workers");
  EXPECT_TRUE(has(big, "got 4294967297")) << big.problem();
  auto huge = text_error(R"({"cluster": {"max_workers": 18446744073709551615}})");
  EXPECT_TRUE(has(huge, "got 18446744073709551615")) << huge.problem();
  auto neg = text_error(R"({"cluster": {"partition": [{"count": -1}]}})");
  EXPECT_EQ(neg.path(), "$.cluster.partition[0].count");
  EXPECT_TRUE(has(neg, "got -1")) << neg.problem();
  auto count = text_error(R"({"cluster": {"partition": [{"count": 2147483647}]}})");
  EXPECT_TRUE(has(count, "got 2147483647")) << count.problem();
  // Many entries within their own bound still exceed the partition's.
  auto total = text_error(R"({"cluster": {"partition": [{"count": 40000}, {"count": 40000}]}})");
  EXPECT_EQ(total.path(), "$.cluster.partition[1].count");
}

TEST(NumericFields, MegabytesAreBoundedBeforeTheyBecomeBytes) {
  auto vram = text_error(R"({"apps": [{"id": "a", "gpu_memory_mb": 1000000000000000}]})");
  EXPECT_EQ(vram.path(), "$.apps[0].gpu_memory_mb");
  EXPECT_TRUE(has(vram, "got 1000000000000000")) << vram.problem();
  auto host = text_error(R"({"apps": [{"id": "a", "memory_mb": 9000000000000000}]})");
  EXPECT_EQ(host.path(), "$.apps[0].memory_mb");
  auto below = text_error(R"({"apps": [{"id": "a", "gpu_memory_mb": -2}]})");
  EXPECT_TRUE(has(below, "got -2")) << below.problem();
  auto s = parse_scenario_text(R"({"apps": [{"id": "a", "gpu_memory_mb": -1, "memory_mb": 16777216}]})",
                               "case.json");
  EXPECT_EQ(*s.apps[0].gpu_memory_mb, -1);
  EXPECT_EQ(s.apps[0].memory_bytes, std::int64_t{16777216} * 1024 * 1024);
}

TEST(NumericFields, NumericDurationsAreBoundedBeforeConversion) {
  auto h = text_error(R"({"horizon": 1e300})");
  EXPECT_EQ(h.path(), "$.horizon");
  EXPECT_TRUE(has(h, "up to 720h")) << h.problem();
  EXPECT_TRUE(has(h, "got 1e+300")) << h.problem();
  auto deploy = text_error(R"({"apps": [{"id": "a", "deploy_at": 1e13}]})");
  EXPECT_EQ(deploy.path(), "$.apps[0].deploy_at");
  auto text = text_error(R"({"horizon": "99999999h"})");
  EXPECT_TRUE(has(text, "got \"99999999h\"")) << text.problem();
  // The bounds themselves are accepted.
  auto s = parse_scenario_text(R"({"horizon": "720h", "apps": [{"id": "a", "deploy_at": "365d"}]})", "case.json");
  EXPECT_EQ(s.horizon, limits::kMaxHorizon);
  EXPECT_EQ(s.actions[0].at, limits::kMaxDuration);
}

TEST(NumericFields, PeriodsKeepARunFinite) {
  auto tick = text_error(R"({"cluster": {"autoscaler": {"tick": "1us"}}})");
  EXPECT_EQ(tick.path(), "$.cluster.autoscaler.tick");
  EXPECT_TRUE(has(tick, "at least 1s")) << tick.problem();
  auto poll = text_error(R"({"cluster": {"autoscaler": {"creation_poll": "999ms"}}})");
  EXPECT_EQ(poll.path(), "$.cluster.autoscaler.creation_poll");
  EXPECT_NO_THROW(parse_scenario_text(R"({"cluster": {"autoscaler": {"tick": "1s"}}})", "case.json"));
}

TEST(NumericFields, SeedTakesTheUnsignedRangeOnly) {
  auto s = parse_scenario_text(R"({"seed": 18446744073709551615})", "case.json");
  EXPECT_EQ(s.seed, UINT64_MAX);
  auto neg = text_error(R"({"seed": -1})");
  EXPECT_EQ(neg.path(), "$.seed");
  EXPECT_TRUE(has(neg, "got -1")) << neg.problem();
  auto frac = text_error(R"({"seed": 1.5})");
  EXPECT_TRUE(has(frac, "got 1.5")) << frac.problem();
}

TEST(NumericFields, SigmaAndCpusAreBounded) {
  auto sigma = text_error(R"({"cluster": {"latency": {"node_boot": {"dist": "lognormal", "median": "1s", "sigma": 1e6}}}})");
  EXPECT_EQ(sigma.path(), "$.cluster.latency.node_boot.sigma");
  auto cpus = text_error(R"({"apps": [{"id": "a", "cpus": 1e20}]})");
  EXPECT_EQ(cpus.path(), "$.apps[0].cpus");
  EXPECT_TRUE(has(cpus, "got 1e+20")) << cpus.problem();
}

TEST(WorkerFields, ZeroTimeLimitIsRefused) {
  auto e = text_error(R"({"cluster": {"worker_defaults": {"time_limit": "0s"}}})");
  EXPECT_EQ(e.path(), "$.cluster.worker_defaults.time_limit");
  EXPECT_TRUE(has(e, "positive")) << e.problem();
}

TEST(WorkerFields, MoreWarmWorkersThanMaxWorkersIsRefused) {
  auto e = text_error(R"({"cluster": {"max_workers": 1, "initial_workers": 2,
                          "partition": [{"count": 2}]}})");
  EXPECT_EQ(e.path(), "$.cluster.initial_workers");
  EXPECT_TRUE(has(e, "at most max_workers (1)")) << e.problem();
}

TEST(WorkerFields, AWarmWorkerThatFitsNoNodeIsAnInputError) {
  // 2 GPUs asked of one-GPU nodes: refused at load, not thrown from the run.
  auto gpus = text_error(R"({"cluster": {"max_workers": 1, "initial_workers": {"count": 1, "gpus": 2},
                             "partition": [{"count": 3, "gpus": 1}]}})");
  EXPECT_EQ(gpus.path(), "$.cluster.initial_workers");
  EXPECT_TRUE(has(gpus, "only 0 partition node(s) fit one")) << gpus.problem();
  // Fits one node type of two, but only one such node for two workers.
  auto count = text_error(R"({"cluster": {"max_workers": 2, "initial_workers": {"count": 2, "cpus": 32},
                              "partition": [{"count": 1, "cpus": 64}, {"count": 4, "cpus": 16}]}})");
  EXPECT_TRUE(has(count, "only 1 partition node(s) fit one")) << count.problem();
  EXPECT_NO_THROW(parse_scenario_text(R"({"cluster": {"max_workers": 2, "initial_workers": {"count": 1, "cpus": 32},
                              "partition": [{"count": 4, "cpus": 16}, {"count": 1, "cpus": 64}]}})", "case.json"));
}
