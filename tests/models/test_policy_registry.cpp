#include "models/policy_set.hpp"
#include "models/registry.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace vramsim {
namespace {

using Strings = std::vector<std::string>;

bool throws_naming(const std::function<void()>& f, const std::string& name) {
  try {
    f();
  } catch (const UnknownPolicyError& e) {
    return std::string(e.what()).find("'" + name + "'") != std::string::npos;
  }
  return false;
}

TEST(PolicyRegistry, ListsTheFiveControlPlaneModelsAndReplicaAutoscaling) {
  EXPECT_EQ(PolicyRegistry::instance().models(), (Strings{"admission", "advertisement", "autoscaler", "pending",
                                                          "placement", "replica_autoscaling", "shutdown", "sizing"}));
  EXPECT_EQ(PolicyRegistry::instance().variants("pending"), (Strings{"counts-installing", "excludes-installing"}));
  EXPECT_EQ(PolicyRegistry::instance().variants("replica_autoscaling"), (Strings{"ray"}));
  EXPECT_EQ(PolicyRegistry::instance().variants("placement"), (Strings{"best-fit", "best-fit-gpu", "fgd", "first-fit", "ray"}));
  EXPECT_EQ(policy_models(), (Strings{"advertisement", "sizing", "admission", "autoscaler", "shutdown"}));
}

TEST(PolicyRegistry, ListsLegacyAndFixedForEveryModelAndUngatedForAdvertisement) {
  auto& reg = PolicyRegistry::instance();
  for (const std::string m : {"sizing", "admission", "autoscaler", "shutdown"})
    EXPECT_EQ(reg.variants(m), (Strings{"fixed", "legacy"})) << m;
  EXPECT_EQ(reg.variants("advertisement"), (Strings{"fixed", "legacy", "ungated"}));
  EXPECT_TRUE(reg.has("advertisement", "ungated"));
  EXPECT_FALSE(reg.has("sizing", "ungated"));
  EXPECT_FALSE(reg.has("nope", "legacy"));
  EXPECT_TRUE(reg.variants("nope").empty());
}

TEST(PolicyRegistry, MakeGivesAFreshInstanceOfTheVariant) {
  auto& reg = PolicyRegistry::instance();
  const auto legacy = reg.make<SizingPolicy>("legacy");
  const auto fixed = reg.make<SizingPolicy>("fixed");
  ASSERT_TRUE(legacy && fixed);
  const ClusterGpuView cold{false, std::nullopt, true};
  EXPECT_EQ(legacy->size({"a", 8000, false}, cold).branch, "whole_gpu_fallback");
  EXPECT_EQ(fixed->size({"a", 8000, false}, cold).branch, "vram");
}

TEST(PolicyRegistry, UnknownVariantThrowsNamingIt) {
  EXPECT_TRUE(throws_naming([] { PolicyRegistry::instance().make<SizingPolicy>("bogus"); }, "bogus"));
  EXPECT_TRUE(throws_naming([] { PolicyRegistry::instance().make<SizingPolicy>("bogus"); }, "sizing"));
}

TEST(PolicySet, PresetsResolveAllFiveModels) {
  for (const std::string preset : {"legacy", "fixed"}) {
    const PolicySet p = resolve_policies(preset);
    EXPECT_TRUE(p.advertisement && p.sizing && p.admission && p.autoscaler && p.shutdown) << preset;
    EXPECT_EQ(p.label, preset);
    ASSERT_EQ(p.names.size(), 5u);
    for (const auto& [model, variant] : p.names) EXPECT_EQ(variant, preset) << model;
  }
}

TEST(PolicySet, PresetsBehaveAsTheirVariant) {
  const AppDemand app{"app", 1, 0.01, 0, 0};
  AdmissionSnapshot in_flight;
  in_flight.max_workers = 1;
  in_flight.worker_jobs = 1;
  in_flight.unregistered_jobs = 1;
  EXPECT_FALSE(resolve_policies("legacy").admission->check(app, in_flight).admitted);
  EXPECT_TRUE(resolve_policies("fixed").admission->check(app, in_flight).admitted);
  EXPECT_TRUE(resolve_policies("legacy").shutdown->plan({}).return_early);
  EXPECT_FALSE(resolve_policies("fixed").shutdown->plan({}).return_early);
}

TEST(PolicySet, MixSetsOnlyTheNamedModel) {
  const PolicySet p = parse_policy_spec("fixed,admission=legacy");
  EXPECT_EQ(p.names.at("admission"), "legacy");
  for (const std::string m : {"advertisement", "sizing", "autoscaler", "shutdown"}) EXPECT_EQ(p.names.at(m), "fixed") << m;
  AdmissionSnapshot in_flight;
  in_flight.max_workers = 1;
  in_flight.worker_jobs = 1;
  in_flight.unregistered_jobs = 1;
  EXPECT_FALSE(p.admission->check(AppDemand{"app", 1, 0.01, 0, 0}, in_flight).admitted);
  EXPECT_FALSE(p.shutdown->plan({}).return_early);
  EXPECT_NE(p.label.find("admission=legacy"), std::string::npos) << p.label;
}

TEST(PolicySet, SpecWithoutPresetStartsFromFixed) {
  const PolicySet p = parse_policy_spec("autoscaler=legacy,advertisement=ungated");
  EXPECT_EQ(p.names.at("autoscaler"), "legacy");
  EXPECT_EQ(p.names.at("advertisement"), "ungated");
  EXPECT_EQ(p.names.at("sizing"), "fixed");
  EXPECT_EQ(parse_policy_spec("legacy").names, resolve_policies("legacy").names);
}

TEST(PolicySet, UnknownModelThrowsNamingIt) {
  EXPECT_TRUE(throws_naming([] { resolve_policies("fixed", {{"scheduler", "legacy"}}); }, "scheduler"));
  EXPECT_TRUE(throws_naming([] { parse_policy_spec("fixed,scheduler=legacy"); }, "scheduler"));
}

TEST(PolicySet, UnknownVariantThrowsNamingIt) {
  EXPECT_TRUE(throws_naming([] { resolve_policies("fixed", {{"admission", "strict"}}); }, "strict"));
  EXPECT_TRUE(throws_naming([] { parse_policy_spec("legacy,admission=strict"); }, "strict"));
  EXPECT_TRUE(throws_naming([] { parse_policy_spec("sizing=ungated"); }, "ungated"));
}

TEST(PolicySet, UnknownPresetThrowsNamingIt) {
  EXPECT_TRUE(throws_naming([] { resolve_policies("newest"); }, "newest"));
  EXPECT_TRUE(throws_naming([] { parse_policy_spec("newest"); }, "newest"));
  EXPECT_THROW(parse_policy_spec("admission=legacy,fixed"), UnknownPolicyError) << "preset must come first";
}

}  // namespace
}  // namespace vramsim
