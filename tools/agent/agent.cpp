#include "tools/agent/agent.hpp"

#include <csignal>
#include <iostream>
#include <optional>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tools/agent/gpu_facts.hpp"
#include "tools/agent/head_connection.hpp"
#include "tools/agent/replica_host.hpp"

namespace vramsim::agent {

namespace asio = boost::asio;
using vramsim::Json;

namespace {

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

}  // namespace

// The protocol: what the head's messages do, heartbeats, and leaving. The
// connection, the replicas and the memory figures are their own units.
struct Agent::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, AgentOptions o, slurm::AgentRegistration r)
      : io(io),
        o(std::move(o)),
        reg(std::move(r)),
        head(io, this->o.head_host, this->o.head_port, this->o.max_message_bytes),
        replicas(io, ReplicaHost::Options{this->o.self_exe, this->o.max_message_bytes, reg.devices.size()}),
        memory(io, this->o.nvidia_smi),
        heartbeat_timer(io),
        silence_timer(io),
        term_signals(io, SIGTERM, SIGINT) {}

  asio::io_context& io;
  AgentOptions o;
  slurm::AgentRegistration reg;
  HeadConnection head;
  ReplicaHost replicas;
  MemoryUsage memory;
  asio::steady_timer heartbeat_timer;
  asio::steady_timer silence_timer;  // head_timeout_s after the head's last line
  bool registered = false;
  asio::signal_set term_signals;
  bool stopping = false, finished = false;
  int exit = 1;
  std::optional<std::string> goodbye;

  void start() {
    auto self = shared_from_this();
    replicas.on_sigchld = [this] { memory.child_exited(); };
    replicas.watch([this](const Json& m) { head.send(m); }, [this] { finish(); }, self);
    term_signals.async_wait([self](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      std::cerr << "vramsim-agent: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
                << ": stopping replicas and leaving" << std::endl;
      self->stop_all(0, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    });
    HeadConnection::Handlers on;
    on.connected = [this] { reg.ip = head.local_address(); };
    on.line = [this](const std::string& line) { handle(line); };
    on.lost = [this](const std::string& why) {
      std::cerr << "vramsim-agent: lost the connection to the head at " << head.head() << " (" << why
                << "); stopping replicas" << std::endl;
      stop_all(1, std::nullopt);
    };
    on.unreachable = [this](const std::string& why) {
      std::cerr << "vramsim-agent: cannot reach the head at " << head.head() << ": " << why << std::endl;
      stop_all(1, std::nullopt);
    };
    head.connect(millis(o.connect_timeout_s), std::move(on), self);
  }

  // ---- the head's messages -------------------------------------------------

  void protocol_error(const std::string& reason) {
    std::cerr << "vramsim-agent: from the head: " << reason << std::endl;
    head.send(slurm::to_message(slurm::ErrorMessage{reason}));
  }

  // Every line from the head after registration proves it is there.
  void heard_from_head() {
    if (!registered || stopping || o.head_timeout_s <= 0) return;
    silence_timer.expires_after(millis(o.head_timeout_s));
    silence_timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->stopping) return;
      std::cerr << "vramsim-agent: nothing from the head at " << self->head.head() << " for "
                << self->o.head_timeout_s << " s; stopping replicas and leaving" << std::endl;
      self->head.drop();
      self->stop_all(1, std::nullopt);
    });
  }

  void handle(const std::string& line) {
    heard_from_head();
    auto parsed = slurm::parse_line(line);
    if (!parsed) return protocol_error(parsed.error);
    const Json& m = parsed.value;
    const std::string type = slurm::message_type(m);
    if (type == "challenge") {
      auto c = slurm::parse_challenge(m);
      if (!c) return protocol_error(c.error);
      head.send(slurm::to_message(
          slurm::Hello{o.job_id, o.run_id, slurm::handshake_hmac(o.secret, c.value.nonce, o.job_id)}));
      head.send(slurm::to_message(reg));
    } else if (type == "registered") {
      std::cerr << "vramsim-agent: registered job " << o.job_id << " with the head at " << head.head() << std::endl;
      registered = true;
      heard_from_head();
      heartbeat_tick();
    } else if (type == "ping") {
      // The head's liveness: heard_from_head() above is all it asks.
    } else if (type == "start_replica") {
      auto s = slurm::parse_start_replica(m);
      if (!s) return protocol_error(s.error);
      replicas.start(s.value);
    } else if (type == "stop_replica") {
      auto s = slurm::parse_stop_replica(m);
      if (!s) return protocol_error(s.error);
      replicas.stop(s.value.replica);
    } else if (type == "call") {
      auto c = slurm::parse_call(m);
      if (!c) return protocol_error(c.error);
      replicas.call(c.value);
    } else if (type == "drain") {
      std::cerr << "vramsim-agent: drain: stopping replicas and leaving" << std::endl;
      stop_all(0, "drain");
    } else if (type == "error") {
      auto e = slurm::parse_error(m);
      std::cerr << "vramsim-agent: the head refused this agent: " << (e ? e.value.reason : e.error) << std::endl;
      head.drop();
      stop_all(1, std::nullopt);
    } else {
      protocol_error("malformed message: unknown type '" + type + "'");
    }
  }

  // ---- heartbeats ----------------------------------------------------------

  // A query still running (a slow nvidia-smi) never delays the heartbeat;
  // the query's timeout, two intervals, kills a hung one.
  void heartbeat_tick() {
    if (stopping) return;
    if (memory.querying()) {
      send_heartbeat();
    } else {
      memory.query(2 * millis(o.heartbeat_s), [this] {
        if (!stopping) send_heartbeat();
      });
    }
    auto self = shared_from_this();
    heartbeat_timer.expires_after(millis(o.heartbeat_s));
    heartbeat_timer.async_wait([self](const boost::system::error_code& ec) {
      if (!ec) self->heartbeat_tick();
    });
  }

  void send_heartbeat() {
    slurm::Heartbeat h;
    h.devices = memory.last();
    h.replicas = replicas.states();
    head.send(slurm::to_message(h));
  }

  // ---- leaving -------------------------------------------------------------

  void stop_all(int code, std::optional<std::string> goodbye_reason) {
    if (stopping) return;
    stopping = true;
    exit = code;
    goodbye = std::move(goodbye_reason);
    heartbeat_timer.cancel();
    silence_timer.cancel();
    head.stop();
    boost::system::error_code ignored;
    term_signals.cancel(ignored);
    memory.stop();
    if (replicas.stop_all()) finish();
  }

  void finish() {
    if (finished) return;
    auto self = shared_from_this();
    auto done = [self] {
      if (self->finished) return;
      self->finished = true;
      self->head.close();
      self->replicas.close();
      self->io.stop();
    };
    if (head.connected() && goodbye) {
      head.leave(*goodbye, done);
    } else {
      done();
    }
  }
};

Agent::Agent(asio::io_context& io, AgentOptions options, slurm::AgentRegistration registration)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(registration))) {}

Agent::~Agent() = default;

void Agent::start() { impl_->start(); }

int Agent::exit_code() const { return impl_->exit; }

}  // namespace vramsim::agent
