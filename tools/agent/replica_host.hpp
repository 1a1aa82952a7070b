#pragma once
// The replicas one agent hosts: each a child process (`vramsim-agent
// replica`, replica.hpp) started in the agent's process group with a
// parent-death signal, spoken to in JSON Lines over its stdin and stdout,
// stopped with SIGTERM and, after a grace, SIGKILL, and reaped on SIGCHLD
// (docs/live-protocol.md, "Replicas"). What it tells the head goes through
// `send`.
#include <sys/types.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "backends/slurm/protocol.hpp"
#include "tools/agent/line_writer.hpp"

namespace vramsim::agent {

class ReplicaHost {
 public:
  struct Options {
    std::string self_exe;  // this binary, run as `<self_exe> replica ...`
    std::size_t max_message_bytes = slurm::kDefaultMaxMessageBytes;
    std::size_t devices = 0;  // devices registered; 0: any index is let through to the replica
  };
  ReplicaHost(boost::asio::io_context& io, Options options);

  // `send`: a message for the head. `all_stopped`: after stop_all(), once the
  // last replica is gone. `owner` is held by every handler in flight.
  void watch(std::function<void(const Json&)> send, std::function<void()> all_stopped, std::weak_ptr<void> owner);
  void start(const slurm::ReplicaLaunch& launch);
  void stop(const std::string& replica);
  void call(const slurm::Call& call);
  // Each replica's name and state ("starting", "running", "stopping").
  std::vector<slurm::ReplicaState> states() const;
  // Stops every replica; nothing more is reported to the head. True when
  // none is left (all_stopped is then not called).
  bool stop_all();
  // Forgets every replica and stops reaping.
  void close();
  // Runs on every SIGCHLD after the replicas are reaped, for the agent's
  // other children (the memory query).
  std::function<void()> on_sigchld;

 private:
  struct Replica;
  void wait_children();
  void reap();
  void read(const std::shared_ptr<Replica>& r);
  void on_line(Replica& r, const std::string& line);
  void stop(Replica& r);
  void exited(const std::shared_ptr<Replica>& r, int status);

  boost::asio::io_context& io_;
  Options o_;
  boost::asio::signal_set child_signals_;
  std::function<void(const Json&)> send_;
  std::function<void()> all_stopped_;
  std::weak_ptr<void> owner_;
  std::map<std::string, std::shared_ptr<Replica>> replicas_;
  std::map<pid_t, std::shared_ptr<Replica>> by_pid_;
  bool stopping_ = false, closed_ = false;
};

}  // namespace vramsim::agent
