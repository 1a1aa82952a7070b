// The head's wall-clock executor: scenario time runs `1/scale` times as fast
// as the wall clock; timers fire in time order, never early; cancel works;
// periodic timers run through the shared Executor::every.
#include "live/wall_clock_executor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace vramsim {
namespace {

TEST(WallClockExecutor, RefusesAScaleOutsideItsRange) {
  boost::asio::io_context io;
  EXPECT_THROW(WallClockExecutor(io, 0), std::invalid_argument);
  EXPECT_THROW(WallClockExecutor(io, -1), std::invalid_argument);
  EXPECT_THROW(WallClockExecutor(io, 1001), std::invalid_argument);
}

TEST(WallClockExecutor, ScenarioSecondsShrinkByTheScale) {
  boost::asio::io_context io;
  WallClockExecutor exec(io, 0.01);  // 1 scenario second = 10 ms
  EXPECT_EQ(exec.to_wall(kSecond), std::chrono::milliseconds(10));
  SimTime fired_at = -1;
  const auto wall0 = std::chrono::steady_clock::now();
  exec.after(3 * kSecond, [&] { fired_at = exec.now(); });
  io.run();
  const auto wall = std::chrono::steady_clock::now() - wall0;
  ASSERT_GE(fired_at, 3 * kSecond) << "never early, in scenario time";
  EXPECT_GE(wall, std::chrono::milliseconds(30)) << "never early, in wall time";
  EXPECT_EQ(exec.fired(), 1u);
  EXPECT_EQ(exec.pending(), 0u);
}

TEST(WallClockExecutor, FiresInTimeOrderWhateverTheInsertionOrder) {
  boost::asio::io_context io;
  WallClockExecutor exec(io, 0.001);
  std::vector<int> order;
  exec.at(30 * kSecond, [&] { order.push_back(3); });
  exec.at(10 * kSecond, [&] { order.push_back(1); });
  exec.at(20 * kSecond, [&] { order.push_back(2); });
  exec.at(-5, [&] { order.push_back(0); });  // the past: as soon as possible
  io.run();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(WallClockExecutor, CancelledTimersNeverFire) {
  boost::asio::io_context io;
  WallClockExecutor exec(io, 0.001);
  bool a = false, b = false;
  const TimerId ta = exec.after(5 * kSecond, [&] { a = true; });
  exec.after(10 * kSecond, [&] { b = true; });
  EXPECT_TRUE(exec.cancel(ta));
  EXPECT_FALSE(exec.cancel(ta)) << "twice";
  EXPECT_FALSE(exec.cancel(9999));
  io.run();
  EXPECT_FALSE(a);
  EXPECT_TRUE(b);
}

TEST(WallClockExecutor, CallbacksMayScheduleAndCancelOthers) {
  boost::asio::io_context io;
  WallClockExecutor exec(io, 0.001);
  bool late = false;
  int chain = 0;
  TimerId victim = exec.after(50 * kSecond, [&] { late = true; });
  std::function<void()> step = [&] {
    if (++chain < 5) exec.after(kSecond, step);
    else exec.cancel(victim);
  };
  exec.after(kSecond, step);
  io.run();
  EXPECT_EQ(chain, 5);
  EXPECT_FALSE(late);
}

TEST(WallClockExecutor, PeriodicTimersTickUntilCancelled) {
  boost::asio::io_context io;
  WallClockExecutor exec(io, 0.001);
  std::vector<SimTime> ticks;
  Executor::Periodic p;
  p = exec.every(10 * kSecond, [&] {
    ticks.push_back(exec.now());
    if (ticks.size() == 4) p.cancel();
  });
  io.run();
  ASSERT_EQ(ticks.size(), 4u);
  for (std::size_t i = 0; i < ticks.size(); ++i) EXPECT_GE(ticks[i], static_cast<SimTime>(i + 1) * 10 * kSecond);
  EXPECT_EQ(exec.pending(), 0u);
}

}  // namespace
}  // namespace vramsim
