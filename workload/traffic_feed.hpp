#pragma once
// A run's request traffic as an input: each serving app's arrivals
// (TrafficSource) put on the executor's clock one at a time, each handed to
// `serve` as it arrives. A traffic with a start begins then; one without
// begins at its app's first deploy (deployed()). Arrivals past the
// traffic's end or the horizon are not drawn.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "engine/executor.hpp"
#include "engine/random.hpp"
#include "workload/traffic.hpp"

namespace vramsim {

class TrafficFeed {
 public:
  using Serve = std::function<void(const std::string& app, Duration service)>;
  // `traffic`, by app id, must outlive the feed; draws come from streams
  // "serve.<app>.arrivals" of `seed`.
  TrafficFeed(const std::map<std::string, TrafficSpec>& traffic, Executor& exec, std::uint64_t seed,
              SimTime horizon, Serve serve);
  // Schedules the traffics that state a start.
  void schedule();
  // The app was deployed: a traffic without a start that has not begun
  // begins now.
  void deployed(const std::string& app);

 private:
  struct Traffic {
    std::unique_ptr<TrafficSource> source;
    SimTime origin = 0;
    std::optional<SimTime> end;
    bool started = false;
  };
  void start(const std::string& app, SimTime origin);
  void next_arrival(const std::string& app);

  const std::map<std::string, TrafficSpec>& specs_;
  Executor& exec_;
  RandomStreams rng_;
  SimTime horizon_;
  Serve serve_;
  std::map<std::string, Traffic> traffic_;
};

}  // namespace vramsim
