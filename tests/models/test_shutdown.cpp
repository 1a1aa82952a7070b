#include "models/shutdown.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "models/registry.hpp"

namespace vramsim {
namespace {

std::shared_ptr<const ShutdownPolicy> shutdown(const std::string& variant) {
  return PolicyRegistry::instance().make<ShutdownPolicy>(variant);
}

ShutdownSnapshot queued_only() { return ShutdownSnapshot{{}, {"1000", "1001"}}; }
ShutdownSnapshot with_nodes() {
  return ShutdownSnapshot{{{"node-1", "1000"}, {"node-2", "1001"}}, {"1000", "1001", "1002"}};
}

TEST(Shutdown, LegacyWithNoRegisteredNodeReturnsEarly) {
  const auto p = shutdown("legacy")->plan(queued_only());
  EXPECT_TRUE(p.return_early);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_FALSE(p.cancel_remaining) << "the queued jobs are left to their time limit";
  EXPECT_FALSE(p.note.empty());
}

TEST(Shutdown, LegacyWithNothingAtAllAlsoReturnsEarly) {
  EXPECT_TRUE(shutdown("legacy")->plan(ShutdownSnapshot{}).return_early);
}

TEST(Shutdown, LegacyWithNodesDrainsWithoutAwaitingThenCancels) {
  const auto p = shutdown("legacy")->plan(with_nodes());
  EXPECT_FALSE(p.return_early);
  ASSERT_EQ(p.drain.size(), 2u);
  EXPECT_EQ(p.drain[0].node_id, "node-1");
  EXPECT_EQ(p.drain[1].job_id, "1001");
  EXPECT_FALSE(p.await_drain);
  EXPECT_TRUE(p.cancel_remaining);
}

TEST(Shutdown, FixedWithNoRegisteredNodeStillSweeps) {
  const auto p = shutdown("fixed")->plan(queued_only());
  EXPECT_FALSE(p.return_early);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_TRUE(p.await_drain);
  EXPECT_TRUE(p.cancel_remaining);
}

TEST(Shutdown, FixedWithNodesDrainsAwaitsAndSweeps) {
  const auto p = shutdown("fixed")->plan(with_nodes());
  EXPECT_FALSE(p.return_early);
  ASSERT_EQ(p.drain.size(), 2u);
  EXPECT_EQ(p.drain[0].node_id, "node-1");
  EXPECT_EQ(p.drain[0].job_id, "1000");
  EXPECT_TRUE(p.await_drain);
  EXPECT_TRUE(p.cancel_remaining);
}

TEST(Shutdown, FixedOnEmptyClusterIsANoOpSweep) {
  const auto p = shutdown("fixed")->plan(ShutdownSnapshot{});
  EXPECT_FALSE(p.return_early);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_TRUE(p.cancel_remaining);
}

}  // namespace
}  // namespace vramsim
