#pragma once
// The head's side of the node agent protocol (docs/live-protocol.md): a TCP
// server on the head's single-threaded io_context that authenticates
// vramsim-agent connections both ways, checks the MAC and sequence of every
// later message, reports registrations, heartbeats, replica
// starts, call results and lost agents to a listener, and sends the head's
// commands to a connected agent. Every refusal is reported and never stops
// the server.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "backends/slurm/protocol.hpp"

namespace vramsim::slurm {

class AgentServerListener {
 public:
  virtual ~AgentServerListener() = default;
  // Whether `job_id` is a job of this run; others are refused.
  virtual bool known_job(const std::string& job_id) = 0;
  virtual void agent_registered(const AgentRegistration& r) = 0;
  virtual void agent_heartbeat(const std::string& job_id, const std::vector<DeviceUsage>& devices) = 0;
  // A replica's start, with what it holds (ReplicaStarted::memory).
  virtual void replica_started(const std::string& job_id, const ReplicaStarted& r) = 0;
  virtual void call_result(const std::string& job_id, std::uint64_t call_id, const Json& result) = 0;
  // "drained", "connection closed", "heartbeat timeout", "protocol error: ...".
  virtual void agent_gone(const std::string& job_id, const std::string& reason) = 0;
  // A refused connection or message; the server keeps running.
  virtual void refused(const std::string& peer, const std::string& reason) = 0;
};

struct AgentServerConfig {
  std::string bind = "127.0.0.1";
  unsigned short port = 0;  // 0: any free port, see AgentServer::port()
  std::string secret;
  // This run's id: an agent saying another in its hello is refused.
  std::string run_id;
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  std::chrono::milliseconds auth_timeout{5000};
  std::chrono::milliseconds heartbeat_timeout{15000};
  // Sent to every registered agent this often ({"type":"ping"}), so that an
  // agent knows its head is there (vramsim-agent --head-timeout). 0: never.
  std::chrono::milliseconds ping_interval{5000};
  // Connections not yet registered, at most; one over it is closed at once.
  std::size_t max_unauthenticated = 64;
  // After an accept error (out of descriptors, say), the next accept waits
  // this long, doubling up to accept_backoff_max, so the loop never spins.
  std::chrono::milliseconds accept_backoff{10};
  std::chrono::milliseconds accept_backoff_max{1000};
};

namespace detail {
class AgentConnection;
struct AgentServerState;
}  // namespace detail

class AgentServer {
 public:
  // Binds and starts accepting; throws std::runtime_error (naming the
  // address) when the address cannot be bound, std::invalid_argument for an
  // empty secret or run id.
  AgentServer(boost::asio::io_context& io, AgentServerConfig cfg, AgentServerListener& listener);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  unsigned short port() const;
  // Each returns false when no registered agent of `job_id` is connected.
  bool start_replica(const std::string& job_id, const ReplicaLaunch& r);
  bool stop_replica(const std::string& job_id, const std::string& replica);
  bool call(const std::string& job_id, const std::string& replica, std::uint64_t call_id, const Json& payload);
  bool drain(const std::string& job_id);
  // Registered agents, by job id.
  std::vector<std::string> connected_jobs() const;
  // Stops accepting and closes every connection; no listener calls follow.
  void close();

 private:
  std::shared_ptr<detail::AgentServerState> state_;
};

}  // namespace vramsim::slurm
