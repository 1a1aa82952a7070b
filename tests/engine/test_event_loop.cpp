#include "engine/event_loop.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace vramsim {
namespace {

using Log = std::vector<std::pair<SimTime, int>>;

TEST(EventLoop, StartsAtZeroAndEmpty) {
  EventLoop loop;
  EXPECT_EQ(loop.now(), 0);
  EXPECT_TRUE(loop.empty());
  EXPECT_FALSE(loop.step());
  loop.run();
  EXPECT_EQ(loop.now(), 0);
  EXPECT_EQ(loop.events_run(), 0u);
}

TEST(EventLoop, AtRunsInTimeOrderAndAdvancesClock) {
  EventLoop loop;
  Log log;
  loop.at(30, [&] { log.push_back({loop.now(), 3}); });
  loop.at(10, [&] { log.push_back({loop.now(), 1}); });
  loop.at(20, [&] { log.push_back({loop.now(), 2}); });
  loop.at(10, [&] { log.push_back({loop.now(), 4}); });  // tie: after the first at 10
  loop.run();
  EXPECT_EQ(log, (Log{{10, 1}, {10, 4}, {20, 2}, {30, 3}}));
  EXPECT_EQ(loop.now(), 30);
  EXPECT_EQ(loop.events_run(), 4u);
  EXPECT_TRUE(loop.empty());
}

TEST(EventLoop, AfterIsRelativeToNow) {
  EventLoop loop;
  Log log;
  loop.at(100, [&] {
    loop.after(5 * kSecond, [&] { log.push_back({loop.now(), 1}); });
    loop.after(-7, [&] { log.push_back({loop.now(), 2}); });  // negative delay: now
  });
  loop.run();
  EXPECT_EQ(log, (Log{{100, 2}, {100 + 5 * kSecond, 1}}));
}

TEST(EventLoop, StepRunsExactlyOneEvent) {
  EventLoop loop;
  int n = 0;
  loop.at(5, [&] { ++n; });
  loop.at(6, [&] { ++n; });
  EXPECT_TRUE(loop.step());
  EXPECT_EQ(n, 1);
  EXPECT_EQ(loop.now(), 5);
  EXPECT_TRUE(loop.step());
  EXPECT_FALSE(loop.step());
  EXPECT_EQ(n, 2);
}

TEST(EventLoop, CancelPreventsTheCallback) {
  EventLoop loop;
  Log log;
  loop.at(10, [&] { log.push_back({loop.now(), 1}); });
  TimerId id = loop.at(20, [&] { log.push_back({loop.now(), 2}); });
  loop.at(30, [&] { log.push_back({loop.now(), 3}); });
  EXPECT_NE(id, 0u);
  EXPECT_TRUE(loop.cancel(id));
  EXPECT_FALSE(loop.cancel(id));
  EXPECT_FALSE(loop.cancel(0));
  loop.run();
  EXPECT_EQ(log, (Log{{10, 1}, {30, 3}}));
  EXPECT_EQ(loop.events_run(), 2u);
}

TEST(EventLoop, CancelFromAnEarlierCallback) {
  EventLoop loop;
  bool ran = false;
  TimerId later = loop.at(20, [&] { ran = true; });
  loop.at(10, [&] { EXPECT_TRUE(loop.cancel(later)); });
  loop.run();
  EXPECT_FALSE(ran);
  EXPECT_EQ(loop.now(), 10);
}

TEST(EventLoop, CancelOfAnEventThatRanReturnsFalse) {
  EventLoop loop;
  TimerId id = loop.at(10, [] {});
  loop.run();
  EXPECT_FALSE(loop.cancel(id));
  // A new event reusing the queue slot must not be reachable through `id`.
  bool ran = false;
  loop.at(20, [&] { ran = true; });
  EXPECT_FALSE(loop.cancel(id));
  loop.run();
  EXPECT_TRUE(ran);
}

TEST(EventLoop, CancelOwnTimerInsideItsCallbackReturnsFalse) {
  EventLoop loop;
  TimerId self = 0;
  bool result = true;
  self = loop.at(10, [&] { result = loop.cancel(self); });
  loop.run();
  EXPECT_FALSE(result);
}

TEST(EventLoop, SchedulingInThePastRunsAtNow) {
  EventLoop loop;
  Log log;
  loop.at(100, [&] {
    loop.at(50, [&] { log.push_back({loop.now(), 1}); });
  });
  loop.at(101, [&] { log.push_back({loop.now(), 2}); });
  loop.run();
  EXPECT_EQ(log, (Log{{100, 1}, {101, 2}}));
}

TEST(EventLoop, RunUntilStopsBeforeLaterEventsAndLeavesClockAtUntil) {
  EventLoop loop;
  Log log;
  loop.at(10, [&] { log.push_back({loop.now(), 1}); });
  loop.at(30, [&] { log.push_back({loop.now(), 3}); });  // exactly at `until`: runs
  loop.at(50, [&] { log.push_back({loop.now(), 5}); });
  loop.run(30);
  EXPECT_EQ(log, (Log{{10, 1}, {30, 3}}));
  EXPECT_EQ(loop.now(), 30);
  loop.run(40);
  EXPECT_EQ(loop.now(), 40);
  EXPECT_EQ(log.size(), 2u);
  // Scheduling relative to the new clock works from `until`.
  loop.after(5, [&] { log.push_back({loop.now(), 4}); });
  loop.run();
  EXPECT_EQ(log, (Log{{10, 1}, {30, 3}, {45, 4}, {50, 5}}));
  EXPECT_EQ(loop.now(), 50);
}

// Documented in event_loop.hpp: when the queue drains before `until`, the
// clock stays at the last event that ran.
TEST(EventLoop, RunUntilAfterTheLastEventLeavesClockAtLastEvent) {
  EventLoop loop;
  loop.at(10, [] {});
  loop.run(1000);
  EXPECT_EQ(loop.now(), 10);
}

// Time never runs backwards: run(until) with `until` before now() must leave
// the clock where it is, or later events could be scheduled before ones that
// already ran.
TEST(EventLoop, RunUntilInThePastDoesNotMoveClockBackwards) {
  EventLoop loop;
  loop.at(100, [] {});
  loop.at(500, [] {});
  loop.run(200);
  ASSERT_EQ(loop.now(), 200);
  loop.run(50);
  EXPECT_EQ(loop.now(), 200);
  SimTime ran_at = -1;
  loop.after(0, [&] { ran_at = loop.now(); });
  loop.run(300);
  EXPECT_GE(ran_at, 200);
}

TEST(EventLoop, StopEndsRunAfterTheCurrentEvent) {
  EventLoop loop;
  Log log;
  loop.at(1, [&] { log.push_back({loop.now(), 1}); });
  loop.at(2, [&] {
    log.push_back({loop.now(), 2});
    loop.stop();
  });
  loop.at(2, [&] { log.push_back({loop.now(), 22}); });
  loop.at(3, [&] { log.push_back({loop.now(), 3}); });
  loop.run();
  EXPECT_EQ(log, (Log{{1, 1}, {2, 2}}));
  EXPECT_EQ(loop.now(), 2);
  EXPECT_FALSE(loop.empty());
  loop.run();  // a new run() clears the stop
  EXPECT_EQ(log, (Log{{1, 1}, {2, 2}, {2, 22}, {3, 3}}));
}

TEST(EventLoop, ExceptionFromCallbackPropagatesAndLoopContinues) {
  EventLoop loop;
  int n = 0;
  loop.at(1, [] { throw std::runtime_error("boom"); });
  loop.at(2, [&] { ++n; });
  EXPECT_THROW(loop.run(), std::runtime_error);
  EXPECT_EQ(loop.now(), 1);
  loop.run();
  EXPECT_EQ(n, 1);
  EXPECT_EQ(loop.events_run(), 2u);
}

TEST(EventLoop, AcceptsAnotherQueueImplementation) {
  EventLoop loop(std::make_unique<BinaryHeapQueue>());
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) loop.at(100 - i, [&order, i] { order.push_back(i); });
  loop.run();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], 99 - i);
}

TEST(EventLoop, CountersBalanceAfterRun) {
  EventLoop loop;
  std::vector<TimerId> ids;
  for (int i = 0; i < 50; ++i) ids.push_back(loop.at(i, [] {}));
  for (int i = 0; i < 50; i += 5) loop.cancel(ids[i]);
  loop.run();
  const auto& c = loop.queue().counters();
  EXPECT_EQ(c.inserted, 50u);
  EXPECT_EQ(c.cancelled, 10u);
  EXPECT_EQ(c.popped, 40u);
}

// --- every() ----------------------------------------------------------------

TEST(Periodic, FiresEveryPeriod) {
  EventLoop loop;
  std::vector<SimTime> at;
  auto p = loop.every(10, [&] { at.push_back(loop.now()); });
  EXPECT_TRUE(p.active());
  loop.run(35);
  EXPECT_EQ(at, (std::vector<SimTime>{10, 20, 30}));
  EXPECT_EQ(loop.now(), 35);
  p.cancel();
  EXPECT_FALSE(p.active());
  loop.run();
  EXPECT_EQ(at.size(), 3u);
  EXPECT_TRUE(loop.empty());
}

TEST(Periodic, FirstDelay) {
  EventLoop loop;
  std::vector<SimTime> a, b;
  auto pa = loop.every(10, [&] { a.push_back(loop.now()); }, 0);
  auto pb = loop.every(10, [&] { b.push_back(loop.now()); }, 3);
  loop.run(25);
  EXPECT_EQ(a, (std::vector<SimTime>{0, 10, 20}));
  EXPECT_EQ(b, (std::vector<SimTime>{3, 13, 23}));
  pa.cancel();
  pb.cancel();
}

TEST(Periodic, StartsRelativeToNow) {
  EventLoop loop;
  std::vector<SimTime> at;
  Executor::Periodic p;
  loop.at(100, [&] { p = loop.every(7, [&] { at.push_back(loop.now()); }); });
  loop.run(120);
  EXPECT_EQ(at, (std::vector<SimTime>{107, 114}));
  p.cancel();
}

TEST(Periodic, RejectsNonPositivePeriod) {
  EventLoop loop;
  EXPECT_THROW(static_cast<void>(loop.every(0, [] {})), std::invalid_argument);
  EXPECT_THROW(static_cast<void>(loop.every(-5, [] {})), std::invalid_argument);
  EXPECT_TRUE(loop.empty());
}

TEST(Periodic, CancelsItselfInsideItsCallback) {
  EventLoop loop;
  int fired = 0;
  Executor::Periodic p;
  p = loop.every(10, [&] {
    if (++fired == 3) p.cancel();
  });
  loop.run();  // must terminate: nothing re-arms after the cancel
  EXPECT_EQ(fired, 3);
  EXPECT_FALSE(p.active());
  EXPECT_EQ(loop.now(), 30);
  EXPECT_TRUE(loop.empty());
  p.cancel();  // idempotent
}

TEST(Periodic, CancelledByAnotherEvent) {
  EventLoop loop;
  int fired = 0;
  auto p = loop.every(10, [&] { ++fired; });
  loop.at(25, [&] { p.cancel(); });
  loop.run();
  EXPECT_EQ(fired, 2);
  EXPECT_EQ(loop.now(), 25);
}

TEST(Periodic, DefaultHandleIsInactiveAndCancelIsHarmless) {
  Executor::Periodic p;
  EXPECT_FALSE(p.active());
  p.cancel();
}

}  // namespace
}  // namespace vramsim
