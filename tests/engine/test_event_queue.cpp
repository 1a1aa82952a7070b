#include "engine/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace vramsim {
namespace {

template <typename Q>
class EventQueueTest : public ::testing::Test {
 protected:
  Q q;
  std::vector<int> ran;
  // Inserts an event whose callback records `id` when run.
  EventHandle add(SimTime t, int id) {
    return q.insert(t, [this, id] { ran.push_back(id); });
  }
  // Pops one event, runs it, returns its time.
  SimTime run_one() {
    Event ev = q.pop();
    ev.fn();
    return ev.time;
  }
  void drain() {
    while (!q.empty()) run_one();
  }
};

using QueueTypes = ::testing::Types<BinaryHeapQueue, QuaternaryHeapQueue, RadixHeapQueue>;
TYPED_TEST_SUITE(EventQueueTest, QueueTypes);

TYPED_TEST(EventQueueTest, EmptyQueue) {
  EXPECT_TRUE(this->q.empty());
  EXPECT_EQ(this->q.size(), 0u);
  EXPECT_EQ(this->q.peek_time(), kTimeMax);
  EXPECT_THROW(this->q.pop(), std::logic_error);
}

TYPED_TEST(EventQueueTest, OrdersByTime) {
  const SimTime times[] = {50, 10, 40, -5, 30, 20, 0, 1000000, 7};
  for (int i = 0; i < 9; ++i) this->add(times[i], static_cast<int>(times[i]));
  EXPECT_EQ(this->q.size(), 9u);
  EXPECT_EQ(this->q.peek_time(), -5);
  std::vector<SimTime> popped;
  while (!this->q.empty()) popped.push_back(this->run_one());
  EXPECT_EQ(popped, (std::vector<SimTime>{-5, 0, 7, 10, 20, 30, 40, 50, 1000000}));
  EXPECT_EQ(this->ran, (std::vector<int>{-5, 0, 7, 10, 20, 30, 40, 50, 1000000}));
}

TYPED_TEST(EventQueueTest, FifoOnEqualTimesAcrossManyEvents) {
  // Three time buckets, inserted interleaved, enough events to exercise
  // several heap levels: within a bucket, insertion order must hold.
  constexpr int kN = 3000;
  for (int i = 0; i < kN; ++i) this->add((i % 3) * 100, i);
  this->drain();
  ASSERT_EQ(this->ran.size(), static_cast<std::size_t>(kN));
  std::vector<int> expected;
  for (int bucket = 0; bucket < 3; ++bucket)
    for (int i = bucket; i < kN; i += 3) expected.push_back(i);
  EXPECT_EQ(this->ran, expected);
}

TYPED_TEST(EventQueueTest, SeqIncreasesWithInsertion) {
  auto a = this->add(10, 0);
  auto b = this->add(5, 1);
  EXPECT_TRUE(a.valid());
  EXPECT_LT(a.seq, b.seq);
  Event first = this->q.pop();
  EXPECT_EQ(first.seq, b.seq);
  EXPECT_EQ(first.time, 5);
}

TYPED_TEST(EventQueueTest, CancelBeforePop) {
  this->add(10, 1);
  auto h = this->add(20, 2);
  this->add(30, 3);
  EXPECT_TRUE(this->q.cancel(h));
  EXPECT_EQ(this->q.size(), 2u);
  EXPECT_FALSE(this->q.cancel(h)) << "second cancel of the same event";
  this->drain();
  EXPECT_EQ(this->ran, (std::vector<int>{1, 3}));
}

TYPED_TEST(EventQueueTest, CancelOfTheEarliestSkipsIt) {
  auto h = this->add(10, 1);
  this->add(20, 2);
  EXPECT_TRUE(this->q.cancel(h));
  EXPECT_EQ(this->q.peek_time(), 20);
  this->drain();
  EXPECT_EQ(this->ran, (std::vector<int>{2}));
}

TYPED_TEST(EventQueueTest, CancelAllLeavesEmpty) {
  std::vector<EventHandle> hs;
  for (int i = 0; i < 100; ++i) hs.push_back(this->add(i, i));
  for (auto h : hs) EXPECT_TRUE(this->q.cancel(h));
  EXPECT_TRUE(this->q.empty());
  EXPECT_EQ(this->q.peek_time(), kTimeMax);
  EXPECT_THROW(this->q.pop(), std::logic_error);
}

TYPED_TEST(EventQueueTest, CancelOfPoppedEventReturnsFalse) {
  auto h = this->add(10, 1);
  this->add(20, 2);
  EXPECT_EQ(this->run_one(), 10);
  EXPECT_FALSE(this->q.cancel(h));
  EXPECT_EQ(this->q.size(), 1u);
  EXPECT_EQ(this->q.counters().cancelled, 0u);
}

TYPED_TEST(EventQueueTest, InvalidHandlesAreRefused) {
  this->add(10, 1);
  EXPECT_FALSE(this->q.cancel(EventHandle{}));
  EXPECT_FALSE(this->q.cancel(EventHandle{12345, 1}));  // slot out of range
  EXPECT_FALSE(this->q.cancel(EventHandle{0, 999}));    // seq never issued
  EXPECT_EQ(this->q.size(), 1u);
}

TYPED_TEST(EventQueueTest, ReusedSlotAfterCancelDoesNotResurrectOldEvent) {
  auto old = this->add(10, 1);
  ASSERT_TRUE(this->q.cancel(old));
  auto fresh = this->add(20, 2);
  EXPECT_EQ(fresh.slot, old.slot) << "the freed slot is expected to be reused";
  // The old handle must not reach the new occupant of its slot.
  EXPECT_FALSE(this->q.cancel(old));
  EXPECT_EQ(this->q.size(), 1u);
  // The stale heap entry at t=10 must be skipped, not run with the new callback.
  EXPECT_EQ(this->q.peek_time(), 20);
  this->drain();
  EXPECT_EQ(this->ran, (std::vector<int>{2}));
}

TYPED_TEST(EventQueueTest, ReusedSlotAfterPopDoesNotResurrectOldEvent) {
  auto old = this->add(10, 1);
  EXPECT_EQ(this->run_one(), 10);
  auto fresh = this->add(20, 2);
  EXPECT_EQ(fresh.slot, old.slot);
  EXPECT_FALSE(this->q.cancel(old));
  this->drain();
  EXPECT_EQ(this->ran, (std::vector<int>{1, 2}));
}

TYPED_TEST(EventQueueTest, CountersBalanceAfterDrain) {
  std::vector<EventHandle> hs;
  for (int i = 0; i < 500; ++i) hs.push_back(this->add((i * 37) % 101, i));
  for (int i = 0; i < 500; i += 7) this->q.cancel(hs[i]);
  for (int i = 0; i < 100; ++i) this->run_one();
  for (int i = 0; i < 50; ++i) this->add(1000 + i, i);
  this->drain();
  const auto& c = this->q.counters();
  EXPECT_EQ(c.inserted, 550u);
  EXPECT_EQ(c.cancelled, 72u);
  EXPECT_EQ(c.popped, 550u - 72u);
  EXPECT_EQ(c.inserted, c.popped + c.cancelled);
  EXPECT_EQ(this->q.size(), 0u);
}

// reserve(n) holds n callbacks (40 bytes each) and, in a heap, n entries:
// the radix heap's entries go to buckets that fill as time moves, so there
// only the entries (16 bytes each, twice that with a vector's slack) grow.
TYPED_TEST(EventQueueTest, ReserveAvoidsGrowth) {
  this->q.reserve(1000);
  const std::size_t bytes = this->q.memory_bytes();
  EXPECT_GE(bytes, 1000u * 40);
  for (int i = 0; i < 1000; ++i) this->add(i, i);
  if constexpr (std::is_same_v<TypeParam, RadixHeapQueue>)
    EXPECT_LE(this->q.memory_bytes(), bytes + 2 * 1000 * sizeof(QueueEntry));
  else
    EXPECT_EQ(this->q.memory_bytes(), bytes);
}

// A peek may line up the earliest event (the radix heap spreads a bucket
// around it); an event then added before it, and one at an equal time,
// still run in (time, seq) order.
TYPED_TEST(EventQueueTest, AnEventAddedBeforeAPeekedOneRunsFirst) {
  this->add(1000, 1);
  this->add(5000, 2);
  EXPECT_EQ(this->q.peek_time(), 1000);
  this->add(500, 3);
  this->add(1000, 4);
  this->add(500, 5);
  EXPECT_EQ(this->q.peek_time(), 500);
  this->drain();
  EXPECT_EQ(this->ran, (std::vector<int>{3, 5, 1, 4, 2}));
}

// The whole range of times, negative ones included, in order; equal
// extreme times first-in first-out.
TYPED_TEST(EventQueueTest, ExtremeTimesInOrder) {
  this->add(kTimeMax, 1);
  this->add(0, 2);
  this->add(-5, 3);
  this->add(kTimeMax - 1, 4);
  this->add(std::numeric_limits<SimTime>::min(), 5);
  this->add(kTimeMax, 6);
  this->add(SimTime{1} << 62, 7);
  std::vector<SimTime> times;
  while (!this->q.empty()) times.push_back(this->run_one());
  EXPECT_EQ(this->ran, (std::vector<int>{5, 3, 2, 7, 4, 1, 6}));
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

// Differential test against a reference: a multimap keeps equal keys in
// insertion order, which is exactly the (time, seq) contract.
TYPED_TEST(EventQueueTest, RandomizedAgainstReference) {
  for (std::uint64_t seed : {1u, 2u, 3u, 42u}) {
    TypeParam q;
    std::multimap<SimTime, int> ref;
    std::map<int, std::pair<EventHandle, std::multimap<SimTime, int>::iterator>> live;
    std::vector<EventHandle> dead;  // handles of popped or cancelled events
    std::mt19937_64 rng(seed);
    int next_id = 0;
    int got = -1;
    SimTime now = 0;
    for (int step = 0; step < 20000; ++step) {
      const auto op = rng() % 10;
      if (op < 5) {
        // Small time range so that ties are frequent; never before `now`
        // except now and then, which the queue must also order correctly.
        SimTime t = now + static_cast<SimTime>(rng() % 50) - (rng() % 20 == 0 ? 30 : 0);
        int id = next_id++;
        auto h = q.insert(t, [&got, id] { got = id; });
        live[id] = {h, ref.emplace(t, id)};
      } else if (op < 8) {
        ASSERT_EQ(q.empty(), ref.empty());
        if (ref.empty()) continue;
        ASSERT_EQ(q.peek_time(), ref.begin()->first);
        Event ev = q.pop();
        ev.fn();
        ASSERT_EQ(ev.time, ref.begin()->first);
        ASSERT_EQ(got, ref.begin()->second) << "seed " << seed << " step " << step;
        dead.push_back(live.at(got).first);
        live.erase(got);
        ref.erase(ref.begin());
        now = ev.time;
      } else if (op < 9) {
        if (live.empty()) continue;
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        ASSERT_TRUE(q.cancel(it->second.first));
        ref.erase(it->second.second);
        dead.push_back(it->second.first);
        live.erase(it);
      } else {
        if (dead.empty()) continue;
        ASSERT_FALSE(q.cancel(dead[rng() % dead.size()]));
      }
      ASSERT_EQ(q.size(), ref.size());
    }
    while (!ref.empty()) {
      Event ev = q.pop();
      ev.fn();
      ASSERT_EQ(got, ref.begin()->second);
      ref.erase(ref.begin());
    }
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.peek_time(), kTimeMax);
    const auto& c = q.counters();
    EXPECT_EQ(c.inserted, c.popped + c.cancelled);
  }
}

}  // namespace
}  // namespace vramsim
