#pragma once
// A table of values addressed by a slot number that stays valid until the
// value is erased: insertion and erasure O(1) amortised, no allocation per
// value once the table has grown to its peak, memory O(peak size). Erased
// slots are reused, most recently freed first. A value is held only while
// in the table; what an erased slot held is destroyed at once.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace vramsim {

template <class T>
class SlotTable {
 public:
  using Slot = std::uint32_t;

  // Stores v; returns its slot.
  Slot insert(T v) {
    if (free_.empty()) {
      if (cells_.size() > kMaxSlot) throw std::length_error("slot table: more than 2^32 values");
      cells_.emplace_back(std::move(v));
      return static_cast<Slot>(cells_.size() - 1);
    }
    const Slot s = free_.back();
    free_.pop_back();
    cells_[s].emplace(std::move(v));
    return s;
  }
  // Removes the value at s and returns it (s must hold one).
  T take(Slot s) {
    T v = std::move(*cells_[s]);
    cells_[s].reset();
    free_.push_back(s);
    return v;
  }
  bool holds(Slot s) const { return s < cells_.size() && cells_[s].has_value(); }
  T& operator[](Slot s) { return *cells_[s]; }
  const T& operator[](Slot s) const { return *cells_[s]; }
  // Every slot holds a value or is on the free list.
  std::size_t size() const { return cells_.size() - free_.size(); }
  bool empty() const { return size() == 0; }
  // The first slot in slot order whose value satisfies pred: O(peak size).
  template <class Pred>
  std::optional<Slot> find_if(Pred&& pred) const {
    for (std::size_t s = 0; s < cells_.size(); ++s)
      if (cells_[s] && pred(*cells_[s])) return static_cast<Slot>(s);
    return std::nullopt;
  }

 private:
  static constexpr std::size_t kMaxSlot = 0xFFFFFFFFu;
  std::vector<std::optional<T>> cells_;
  std::vector<Slot> free_;
};

}  // namespace vramsim
