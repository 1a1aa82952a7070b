// vramsim gen: the generated document is a valid scenario with the asked
// shape, the same knobs give the same bytes, and bad knobs are named.
#include <gtest/gtest.h>

#include <set>

#include "scenario/generator.hpp"
#include "scenario/scenario.hpp"

using namespace vramsim;

TEST(Generator, ProducesAValidScenarioOfTheAskedShape) {
  GeneratorOptions o;
  o.apps = 40;
  o.nodes = 7;
  o.gpu_models = {"A100-SXM4-80GB", "H100-SXM5-80GB"};
  o.initial_workers = 3;
  o.min_workers = 2;
  o.worker_gpus = 4;
  const Json doc = generate_scenario(o);
  const Scenario sc = parse_scenario(doc, "gen.json");
  ASSERT_EQ(sc.apps.size(), 40u);
  ASSERT_EQ(sc.slurm.nodes.size(), 2u);
  EXPECT_EQ(sc.slurm.nodes[0].count, 4) << "the first model takes the remainder";
  EXPECT_EQ(sc.slurm.nodes[1].count, 3);
  EXPECT_EQ(sc.slurm.nodes[1].gpu_memory_mb, 81559);
  EXPECT_EQ(sc.control.autoscaler.max_workers, 7);
  EXPECT_EQ(sc.control.autoscaler.min_workers, 2);
  EXPECT_EQ(sc.control.autoscaler.defaults.gpus, 4);
  EXPECT_EQ(sc.initial_workers, 3);
  EXPECT_EQ(sc.horizon, 48 * kHour);
  // 40 deploys 2 s apart from 10 s, then the shutdown at 40h.
  ASSERT_EQ(sc.actions.size(), 41u);
  EXPECT_EQ(sc.actions.front().at, 10 * kSecond);
  EXPECT_EQ(sc.actions[39].at, 10 * kSecond + 39 * 2 * kSecond);
  EXPECT_EQ(sc.actions.back().kind, ActionKind::Shutdown);
  EXPECT_EQ(sc.actions.back().at, 40 * kHour);
  std::set<std::int64_t> sizes;
  std::set<int> replicas;
  for (const auto& a : sc.apps) {
    sizes.insert(a.gpu_memory_mb.value_or(0));
    replicas.insert(a.replicas);
  }
  EXPECT_EQ(sizes, (std::set<std::int64_t>{2000, 4000, 8000, 16000, -1})) << "every size drawn in 40 apps";
  EXPECT_EQ(replicas, (std::set<int>{1, 2, 4}));
  EXPECT_EQ(sc.apps.front().id, "app-00");
  EXPECT_EQ(sc.apps.back().id, "app-39");
}

TEST(Generator, SameKnobsSameDocumentOtherSeedOtherDraws) {
  GeneratorOptions o;
  o.apps = 50;
  o.arrival = "poisson";
  o.interval = 30 * kSecond;
  EXPECT_EQ(generate_scenario(o).dump(), generate_scenario(o).dump());
  GeneratorOptions p = o;
  p.seed = 2;
  EXPECT_NE(generate_scenario(o)["apps"].dump(), generate_scenario(p)["apps"].dump());
}

TEST(Generator, PoissonGapsAreDrawnAndRoundTrip) {
  GeneratorOptions o;
  o.apps = 200;
  o.arrival = "poisson";
  o.interval = 10 * kSecond;
  o.shutdown_at.reset();
  const Scenario sc = parse_scenario(generate_scenario(o), "gen.json");
  ASSERT_EQ(sc.actions.size(), 200u) << "no shutdown action";
  std::set<Duration> gaps;
  for (std::size_t i = 1; i < sc.actions.size(); ++i) {
    const Duration gap = sc.actions[i].at - sc.actions[i - 1].at;
    ASSERT_GE(gap, 0);
    EXPECT_EQ(gap % kMillisecond, 0) << "drawn to the millisecond";
    gaps.insert(gap);
  }
  EXPECT_GT(gaps.size(), 150u) << "gaps vary";
  const double mean = to_seconds(sc.actions.back().at - sc.actions.front().at) / 199;
  EXPECT_NEAR(mean, 10.0, 2.5);
}

TEST(Generator, WeightedListsParseAndSteerTheDraws) {
  auto l = parse_weighted_list("2000:3,-1:1");
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[1].value, -1);
  EXPECT_EQ((*l)[0].weight, 3.0);
  EXPECT_FALSE(parse_weighted_list(""));
  EXPECT_FALSE(parse_weighted_list("1,,2"));
  EXPECT_FALSE(parse_weighted_list("1,2,"));
  EXPECT_FALSE(parse_weighted_list("a"));
  EXPECT_FALSE(parse_weighted_list("1:0"));
  EXPECT_FALSE(parse_weighted_list("1:x"));

  GeneratorOptions o;
  o.apps = 400;
  o.sizes = {{2000, 9}, {8000, 1}};
  int small = 0;
  const Json doc = generate_scenario(o);
  for (const auto& a : doc["apps"]) small += a["gpu_memory_mb"] == 2000;
  EXPECT_GT(small, 320);
  EXPECT_LT(small, 400);
}

TEST(Generator, BadKnobsAreNamed) {
  auto err = [](auto edit) {
    GeneratorOptions o;
    edit(o);
    return validate(o);
  };
  EXPECT_EQ(err([](GeneratorOptions&) {}), "");
  EXPECT_EQ(err([](GeneratorOptions& o) { o.apps = 0; }).rfind("--apps:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.arrival = "burst"; }).rfind("--arrival:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.gpu_models = {"B300"}; }).rfind("--gpu: unknown GPU model 'B300'", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.sizes = {{-2, 1}}; }).rfind("--sizes:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.replicas = {{0, 1}}; }).rfind("--replicas:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.initial_workers = 51; }).rfind("--initial-workers:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.worker_gpus = 5; }).rfind("--worker-gpus:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.min_workers = 60; }).rfind("--min-workers:", 0), 0u);
  EXPECT_EQ(err([](GeneratorOptions& o) { o.horizon = 0; }).rfind("--horizon:", 0), 0u);
}
