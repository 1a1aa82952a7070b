#pragma once
// The head's clock in live mode: an Executor on the wall clock, built on the
// Boost.Asio loop that also serves the node agents and the SLURM commands,
// single-threaded like the simulation.
//
// Times are scenario times: now() is the wall time since construction divided
// by the time scale, and a timer due at scenario time t fires at wall time
// t * scale. With scale 0.05 a 10 s monitor tick takes 0.5 s of wall time, so
// every timer and drawn latency of the scenario shrinks by the same factor
// while the control plane keeps reasoning in the scenario's own units.
// Cost: one steady_timer per pending callback (O(log n) insert in Asio's heap).
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>

#include "engine/executor.hpp"

namespace vramsim {

class WallClockExecutor final : public Executor {
 public:
  // scale: wall seconds per scenario second, in (0, 1000].
  WallClockExecutor(boost::asio::io_context& io, double time_scale);
  ~WallClockExecutor() override;

  SimTime now() const override;
  TimerId at(SimTime t, Callback fn) override;
  bool cancel(TimerId id) override;

  double time_scale() const { return scale_; }
  // A scenario duration as wall time.
  std::chrono::nanoseconds to_wall(Duration d) const;
  std::size_t pending() const { return timers_.size(); }
  std::uint64_t fired() const { return fired_; }

 private:
  boost::asio::io_context& io_;
  double scale_;
  std::chrono::steady_clock::time_point start_;
  std::map<TimerId, std::unique_ptr<boost::asio::steady_timer>> timers_;
  TimerId next_ = 1;
  std::uint64_t fired_ = 0;
};

}  // namespace vramsim
