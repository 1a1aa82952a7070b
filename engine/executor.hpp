#pragma once
// The clock/executor that the control plane sees. Two worlds implement it:
// the virtual-time EventLoop (simulation) and a wall-clock executor (live
// mode). Nothing above the engine may assume which one it runs on: there is
// no way to read the pending queue or to jump in time from here.
#include <cstdint>
#include <memory>

#include "engine/event_queue.hpp"
#include "engine/time.hpp"

namespace vramsim {

using TimerId = std::uint64_t;  // 0 = none

class Executor {
 public:
  virtual ~Executor() = default;
  virtual SimTime now() const = 0;
  // Runs fn at time t (never before now()). Returns an id for cancel().
  virtual TimerId at(SimTime t, Callback fn) = 0;
  virtual bool cancel(TimerId id) = 0;

  TimerId after(Duration d, Callback fn) { return at(now() + (d < 0 ? 0 : d), std::move(fn)); }

  // A repeating timer: fn runs at now()+first, then every `period`. The
  // timer lives as long as the returned handle: discarding it stops it.
  class Periodic {
   public:
    Periodic() = default;
    void cancel();
    bool active() const { return state_ && state_->active; }

   private:
    friend class Executor;
    struct State {
      Executor* exec = nullptr;
      Duration period = 0;
      Callback fn;
      TimerId current = 0;
      bool active = true;
    };
    std::shared_ptr<State> state_;
  };
  [[nodiscard]] Periodic every(Duration period, Callback fn, Duration first = -1);

 private:
  static void arm(const std::shared_ptr<Periodic::State>& st, Duration delay);
};

}  // namespace vramsim
