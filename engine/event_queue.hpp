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
// and of RadixHeapQueue (the event loop's): insert O(1), pop and peek O(1)
// amortised (each entry moves at most 63 times, in sequential passes).
// Both: cancel O(1), the slot freed and the entry skipped when it surfaces.
// Memory per pending event: one 16-byte entry + one 40-byte callback slot
// (56 bytes), plus vector slack (the radix heap's buckets keep their
// capacity as they empty); cancelled entries linger until they surface.
// A heap entry packs seq (40 bits) and slot (24 bits) into one word, so four
// 4-ary siblings fill one cache line: the heap is 64-byte aligned and starts
// three entries in, so every group of siblings begins a line. Limits: 2^40
// inserts per queue and 2^24 events pending at once, both checked.
#include <cstdint>
#include <functional>
#include <new>
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

// A pending event in a queue's order: (time, key), where key packs seq (40
// bits) over the event's callback slot (24 bits) and so orders by seq.
struct QueueEntry {
  static constexpr unsigned kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  SimTime time;
  std::uint64_t key;
  std::uint64_t seq() const { return key >> kSlotBits; }
  std::uint32_t slot() const { return static_cast<std::uint32_t>(key & kSlotMask); }
  // (time, key) as one 128-bit number: compared without a branch.
  __int128 rank() const {
    return static_cast<__int128>(static_cast<unsigned __int128>(static_cast<__int128>(time)) << 64 | key);
  }
};

// What both queues share: the callbacks of pending events by slot, each
// owned by the seq of its event, so a cancel frees the slot at once and the
// queue's own entry is skipped when it surfaces (it no longer matches).
class SlottedEventQueue : public EventQueue {
 public:
  bool empty() const final { return size() == 0; }
  bool cancel(EventHandle handle) final;
  std::size_t size() const final {
    return static_cast<std::size_t>(counters_.inserted - counters_.popped - counters_.cancelled);
  }

 protected:
  // A slot for a new event's callback: its entry, at `time`.
  QueueEntry take_slot(SimTime time, Callback fn);
  // The popped event: its callback moved out, its slot freed.
  Event release(const QueueEntry& e);
  bool live(const QueueEntry& e) const { return slots_[e.slot()].seq == e.seq(); }
  void prefetch_slot(const QueueEntry& e) const { __builtin_prefetch(&slots_[e.slot()]); }
  void reserve_slots(std::size_t n) { slots_.reserve(n); }
  std::size_t slot_bytes() const {
    return slots_.capacity() * sizeof(Slot) + free_.capacity() * sizeof(std::uint32_t);
  }

 private:
  struct Slot {
    Callback fn;
    std::uint64_t seq = 0;  // seq of the event that owns it; 0 when free
  };
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::uint64_t next_seq_ = 1;
};

template <unsigned Arity>
class DaryHeapQueue final : public SlottedEventQueue {
  static_assert(Arity >= 2);

 public:
  EventHandle insert(SimTime time, Callback fn) override;
  SimTime peek_time() override;
  Event pop() override;
  void reserve(std::size_t n) override {
    heap_.reserve(n + kPad);
    reserve_slots(n);
  }
  std::size_t memory_bytes() const override { return heap_.capacity() * sizeof(Entry) + slot_bytes(); }

 private:
  using Entry = QueueEntry;
  static bool before(const Entry& a, const Entry& b) { return a.rank() < b.rank(); }
  void sift_up(std::size_t i);
  void pop_top();
  void drop_dead_top();

  // Entries a cache line holds, less one: the heap's first entry (the root)
  // is the last of a line, and each group of siblings fills the next ones.
  static constexpr std::size_t kPad = 64 / sizeof(Entry) - 1;
  template <class T>
  struct LineAligned {
    using value_type = T;
    LineAligned() = default;
    template <class U>
    LineAligned(const LineAligned<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
    template <class U>
    bool operator==(const LineAligned<U>&) const noexcept {
      return true;
    }
  };
  Entry* heap() { return heap_.data() + kPad; }  // the heap proper: heap()[0] is the root
  std::size_t heap_size() const { return heap_.size() - kPad; }

  std::vector<Entry, LineAligned<Entry>> heap_ = std::vector<Entry, LineAligned<Entry>>(kPad);
};

// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) over event times:
// bucket b holds the events whose time first differs from `last_` (the
// earliest time of the bucket spread last) at bit b - 1, and bucket 0 those
// at `last_` itself, in insertion order, which among equal times is seq
// order. A pop takes bucket 0's front; when it is empty, the lowest
// non-empty bucket is spread over the lower ones around its earliest time.
// Each event moves at most 63 times, sequentially through memory: O(1)
// amortised per event however many are pending, where a heap pays
// O(log n) cache misses. A simulation never schedules before its clock, so
// its events come at `last_` or later; one that comes earlier (a caller of
// the queue itself may do so, at a negative time too) waits in a small
// binary heap that is always emptied first, as all of it is earlier than
// every bucket.
class RadixHeapQueue final : public SlottedEventQueue {
 public:
  EventHandle insert(SimTime time, Callback fn) override;
  SimTime peek_time() override;
  Event pop() override;
  // The callbacks' slots only: the buckets fill and empty as time moves,
  // and keep their capacity.
  void reserve(std::size_t n) override { reserve_slots(n); }
  std::size_t memory_bytes() const override;

 private:
  // Times at last_ (>= 0) or later: bit 63 is clear in both.
  int bucket_of(SimTime t) const {
    const auto x = static_cast<std::uint64_t>(t ^ last_);
    return x == 0 ? 0 : 64 - __builtin_clzll(x);
  }
  void put(const QueueEntry& e) {
    const int b = bucket_of(e.time);
    buckets_[b].push_back(e);
    nonempty_ |= std::uint64_t{1} << b;
  }
  // Brings the earliest live event to the front (of early_, else bucket 0);
  // false when none is pending.
  bool settle();
  void spread_lowest();

  std::vector<QueueEntry> buckets_[64];
  std::uint64_t nonempty_ = 0;  // bit b: bucket b holds entries
  std::size_t front_ = 0;       // bucket 0's next entry
  SimTime last_ = 0;
  std::vector<QueueEntry> early_;  // a min-heap of the events before last_
};

using BinaryHeapQueue = DaryHeapQueue<2>;
using QuaternaryHeapQueue = DaryHeapQueue<4>;
// The event loop's queue unless it is given another.
using DefaultEventQueue = RadixHeapQueue;

extern template class DaryHeapQueue<2>;
extern template class DaryHeapQueue<4>;

}  // namespace vramsim
