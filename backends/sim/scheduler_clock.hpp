#pragma once
// The clock both partition schedulers share: completions ordered by (time,
// submission), a pending scheduling pass, and the order in which time moves
// (docs/workloads.md): at each time, every completion first, then one pass
// that sees them all, before time moves on. `Derived` supplies pass(),
// finish(seq, outcome) and ending_outcome(seq).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

namespace vramsim {

template <class Derived>
class SchedulerClock {
 public:
  std::int64_t now() const { return now_; }
  // The earliest pending completion, if any job runs.
  std::optional<std::int64_t> next_completion() const {
    if (ends_.empty()) return std::nullopt;
    return ends_.begin()->first;
  }
  // Processes every event up to `until` (>= now()); the pass at `until`
  // itself waits for flush() or a later advance.
  void advance(std::int64_t until) {
    if (until < now_) throw std::invalid_argument("partition: advance into the past");
    move_to(until);
  }
  // Runs the pending pass at now(), if any.
  void flush() {
    if (pass_pending_) self().pass();
  }
  // Advances until no job is queued or running.
  void drain() {
    for (;;) {
      flush();
      const auto next = next_completion();
      if (!next) break;
      move_to(*next);
    }
  }

 protected:
  // (time, seq): seq numbers submissions, so no two keys are equal.
  using Key = std::pair<std::int64_t, std::uint64_t>;

  void move_to(std::int64_t t) {
    for (;;) {
      if (!ends_.empty() && ends_.begin()->first <= t) {
        const std::int64_t e = ends_.begin()->first;
        // The pass at now sees all of now's events before time moves on.
        if (e > now_ && pass_pending_) {
          self().pass();
          continue;
        }
        now_ = e;
        while (!ends_.empty() && ends_.begin()->first == e) {
          const std::uint64_t seq = ends_.begin()->second;
          self().finish(seq, self().ending_outcome(seq));
        }
        pass_pending_ = true;
        continue;
      }
      if (t > now_ && pass_pending_) {
        self().pass();
        continue;
      }
      break;
    }
    now_ = std::max(now_, t);
  }

  std::int64_t now_ = 0;
  bool pass_pending_ = false;
  std::set<Key> ends_;  // real ends of running jobs

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace vramsim
