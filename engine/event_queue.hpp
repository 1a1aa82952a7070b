#pragma once
// The pending-event set of the simulation kernel, behind a small interface so
// that several implementations can be run through one test body and one
// benchmark.
//
// Ordering: (time, seq). seq is a 64-bit counter bumped on every insert, so
// events at equal times run first-in first-out; no tie is ever broken on a
// pointer or on heap position.
//
// Cost of DaryHeapQueue<D> with n pending events:
//   insert  O(log_D n)        pop  O(D log_D n), bottom-up   peek  O(1) amortised
//   cancel  O(1): the slot is freed and its heap entry skipped when it surfaces
// Memory per pending event: one 16-byte heap entry + one 40-byte callback slot
// (56 bytes), plus vector slack; cancelled entries linger until they surface.
// A heap entry packs seq (40 bits) and slot (24 bits) into one word, so four
// 4-ary siblings share a cache line; limits: 2^40 inserts per queue and 2^24
// events pending at once, both checked.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/time.hpp"

namespace vramsim {

using Callback = std::function<void()>;

struct EventHandle {
  std::uint32_t slot = 0;
  std::uint64_t seq = 0;  // 0 = no event
  bool valid() const { return seq != 0; }
};

struct Event {
  SimTime time = 0;
  std::uint64_t seq = 0;
  Callback fn;
};

struct EventQueueCounters {
  std::uint64_t inserted = 0;
  std::uint64_t popped = 0;
  std::uint64_t cancelled = 0;
};

class EventQueue {
 public:
  virtual ~EventQueue() = default;
  virtual EventHandle insert(SimTime time, Callback fn) = 0;
  // True when no live (uncancelled) event is pending.
  virtual bool empty() const = 0;
  // Time of the earliest live event; kTimeMax when empty.
  virtual SimTime peek_time() = 0;
  // Removes and returns the earliest live event. Precondition: !empty().
  virtual Event pop() = 0;
  // Returns false if the event already ran or was cancelled.
  virtual bool cancel(EventHandle handle) = 0;
  virtual std::size_t size() const = 0;
  virtual void reserve(std::size_t n) = 0;
  // Bytes held by the queue's own storage (capacity, not size).
  virtual std::size_t memory_bytes() const = 0;
  const EventQueueCounters& counters() const { return counters_; }

 protected:
  EventQueueCounters counters_;
};

template <unsigned Arity>
class DaryHeapQueue final : public EventQueue {
  static_assert(Arity >= 2);

 public:
  EventHandle insert(SimTime time, Callback fn) override;
  bool empty() const override { return size() == 0; }
  SimTime peek_time() override;
  Event pop() override;
  bool cancel(EventHandle handle) override;
  std::size_t size() const override {
    return static_cast<std::size_t>(counters_.inserted - counters_.popped - counters_.cancelled);
  }
  void reserve(std::size_t n) override {
    heap_.reserve(n);
    slots_.reserve(n);
  }
  std::size_t memory_bytes() const override {
    return heap_.capacity() * sizeof(Entry) + slots_.capacity() * sizeof(Slot) +
           free_.capacity() * sizeof(std::uint32_t);
  }

 private:
  static constexpr unsigned kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  struct Entry {
    SimTime time;
    std::uint64_t key;  // seq << kSlotBits | slot: orders by seq, as seq is unique
    std::uint64_t seq() const { return key >> kSlotBits; }
    std::uint32_t slot() const { return static_cast<std::uint32_t>(key & kSlotMask); }
  };
  struct Slot {
    Callback fn;
    std::uint64_t seq = 0;  // seq of the event that owns it; 0 when free
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.key < b.key);
  }
  bool live(const Entry& e) const { return slots_[e.slot()].seq == e.seq(); }
  void sift_up(std::size_t i);
  void pop_top();
  void drop_dead_top();

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::uint64_t next_seq_ = 1;
};

using BinaryHeapQueue = DaryHeapQueue<2>;
using QuaternaryHeapQueue = DaryHeapQueue<4>;

extern template class DaryHeapQueue<2>;
extern template class DaryHeapQueue<4>;

}  // namespace vramsim
