// Hold-model benchmark of the pending-event set: P events are pending; each
// operation pops the earliest and inserts one at (its time + random
// increment), so the queue size stays at P. Reported per case:
//   items_per_second   events processed (one pop + one insert each)
//   bytes_per_pending  EventQueue::memory_bytes() / P after reserve(P) + fill
// Targets: >= 10M events/s at P = 1e3, >= 3M events/s at P = 1e6, <= 64
// bytes per pending event (see tools/bench-engine).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "engine/event_loop.hpp"
#include "engine/event_queue.hpp"

namespace vramsim {
namespace {

// xorshift64: a few cycles per draw, so the generator does not dominate.
struct XorShift {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// Uniform increment in [1, 2 s] of simulated time: mean 1 s, so that ties are
// rare even at 1e6 pending. Multiply-shift instead of % keeps it division-free.
constexpr std::uint64_t kSpan = 2 * kSecond;
inline Duration increment(XorShift& r) {
  return 1 + static_cast<Duration>(((r.next() >> 32) * kSpan) >> 32);
}

constexpr std::uint64_t kSeed = 0x9E3779B97F4A7C15ull;

void set_common_counters(benchmark::State& state, std::size_t pending, std::size_t bytes) {
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["bytes_per_pending"] = static_cast<double>(bytes) / static_cast<double>(pending);
}

// The queue used directly: its concrete (final) type lets calls devirtualise.
template <class Q>
void BM_HoldQueue(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  Q q;
  q.reserve(pending);
  XorShift rng{kSeed};
  for (std::size_t i = 0; i < pending; ++i) q.insert(increment(rng), [] {});
  set_common_counters(state, pending, q.memory_bytes());
  for (auto _ : state) {
    Event ev = q.pop();
    q.insert(ev.time + increment(rng), std::move(ev.fn));
  }
  state.SetItemsProcessed(state.iterations());
}

// The bare heap the event loop is measured against: std::priority_queue of
// (time, seq) pairs, no callback, nothing to cancel. What the loop adds on
// top of it (a callback per event, cancellation, the Executor interface)
// must cost less than its 4-ary layout saves.
void BM_HoldBareHeap(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  using Entry = std::pair<SimTime, std::uint64_t>;
  std::vector<Entry> storage;
  storage.reserve(pending + 1);
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> q(std::greater<>{}, std::move(storage));
  XorShift rng{kSeed};
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < pending; ++i) q.emplace(increment(rng), seq++);
  set_common_counters(state, pending, pending * sizeof(Entry));
  for (auto _ : state) {
    const SimTime t = q.top().first;
    q.pop();
    q.emplace(t + increment(rng), seq++);
  }
  state.SetItemsProcessed(state.iterations());
}

// Through the EventLoop on its own queue (DefaultEventQueue): every callback
// reschedules itself, as a simulated process does. Two pointers: small and trivially copyable, so std::function
// holds it inline and no allocation happens per event.
struct Rescheduler {
  EventLoop* loop;
  XorShift* rng;
  void operator()() const { loop->after(increment(*rng), *this); }
};

void BM_HoldEventLoop(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  auto queue = std::make_unique<DefaultEventQueue>();
  queue->reserve(pending);
  EventLoop loop(std::move(queue));
  XorShift rng{kSeed};
  for (std::size_t i = 0; i < pending; ++i) loop.at(increment(rng), Rescheduler{&loop, &rng});
  set_common_counters(state, pending, loop.queue().memory_bytes());
  for (auto _ : state) loop.step();
  state.SetItemsProcessed(state.iterations());
}

void pending_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("pending")->Arg(1000)->Arg(100000)->Arg(1000000);
}

BENCHMARK(BM_HoldBareHeap)->Name("hold/bare_std_priority_queue")->Apply(pending_sizes);
BENCHMARK_TEMPLATE(BM_HoldQueue, BinaryHeapQueue)->Name("hold/binary_heap")->Apply(pending_sizes);
BENCHMARK_TEMPLATE(BM_HoldQueue, QuaternaryHeapQueue)->Name("hold/quaternary_heap")->Apply(pending_sizes);
BENCHMARK_TEMPLATE(BM_HoldQueue, RadixHeapQueue)->Name("hold/radix_heap")->Apply(pending_sizes);
BENCHMARK(BM_HoldEventLoop)->Name("hold/event_loop")->Apply(pending_sizes);

}  // namespace
}  // namespace vramsim

BENCHMARK_MAIN();
