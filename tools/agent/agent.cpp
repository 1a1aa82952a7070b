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

// From the connection to the head's proof of the secret.
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);

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
        memory(io, this->o.nvidia_smi, this->o.visible_gpus),
        heartbeat_timer(io),
        silence_timer(io),
        handshake_timer(io),
        term_signals(io, SIGTERM, SIGINT) {}

  asio::io_context& io;
  AgentOptions o;
  slurm::AgentRegistration reg;
  HeadConnection head;
  ReplicaHost replicas;
  MemoryUsage memory;
  asio::steady_timer heartbeat_timer;
  asio::steady_timer silence_timer;  // head_timeout_s after the head's last line
  asio::steady_timer handshake_timer;
  bool registered = false;
  // The handshake: the head's nonce and ours, then the channel's seal once
  // the head proved the secret (docs/live-protocol.md, "Channel").
  std::string head_nonce, agent_nonce;
  std::optional<slurm::MessageSeal> seal;
  int refused_lines = 0;
  asio::signal_set term_signals;
  bool stopping = false, finished = false;
  int exit = 1;
  std::optional<std::string> goodbye;

  void start() {
    auto self = shared_from_this();
    replicas.on_sigchld = [this] { memory.child_exited(); };
    replicas.watch([this](const Json& m) { send(m); }, [this] { finish(); }, self);
    term_signals.async_wait([self](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      std::cerr << "vramsim-agent: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
                << ": stopping replicas and leaving" << std::endl;
      self->stop_all(0, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    });
    HeadConnection::Handlers on;
    on.connected = [this] {
      reg.ip = head.local_address();
      // A peer that never proves the secret must not hold the agent.
      handshake_timer.expires_after(kHandshakeTimeout);
      handshake_timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (ec || self->seal || self->stopping) return;
        std::cerr << "vramsim-agent: the head at " << self->head.head() << " did not prove the run's secret within "
                  << std::chrono::duration_cast<std::chrono::seconds>(kHandshakeTimeout).count() << " s; leaving"
                  << std::endl;
        self->head.drop();
        self->stop_all(1, std::nullopt);
      });
    };
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

  // Sealed once the head has proved the secret.
  void send(const Json& message) { head.send(seal ? seal->seal(message) : message); }

  void protocol_error(const std::string& reason) {
    std::cerr << "vramsim-agent: from the head: " << reason << std::endl;
    send(slurm::to_message(slurm::ErrorMessage{reason}));
  }

  // A line that is not the head's (no MAC, a wrong one, a replay, or before
  // the head's proof): dropped and logged; too many end the connection.
  void refuse_line(const std::string& why) {
    std::cerr << "vramsim-agent: refused a message from the head at " << head.head() << ": " << why << std::endl;
    if (++refused_lines < slurm::kMaxRefusedMessages) return;
    std::cerr << "vramsim-agent: " << refused_lines << " messages refused; leaving" << std::endl;
    head.drop();
    stop_all(1, std::nullopt);
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
    auto parsed = slurm::parse_line(line);
    if (!parsed) return seal ? refuse_line(parsed.error) : protocol_error(parsed.error);
    Json& m = parsed.value;
    if (seal) {
      if (auto why = seal->open(m); !why.empty()) return refuse_line(why + " ('" + slurm::message_type(m) + "')");
    }
    heard_from_head();
    const std::string type = slurm::message_type(m);
    if (!seal && type != "challenge" && type != "welcome" && type != "error")
      return refuse_line("'" + type + "' before the head proved the run's secret");
    if (type == "challenge") {
      auto c = slurm::parse_challenge(m);
      if (!c) return protocol_error(c.error);
      if (!head_nonce.empty()) return refuse_line("a second challenge");
      head_nonce = c.value.nonce;
      agent_nonce = slurm::make_nonce();
      send(slurm::to_message(
          slurm::Hello{o.job_id, o.run_id, agent_nonce, slurm::agent_proof(o.secret, ids())}));
    } else if (type == "welcome") {
      auto w = slurm::parse_welcome(m);
      if (!w) return protocol_error(w.error);
      if (seal || head_nonce.empty()) return refuse_line("a welcome out of turn");
      if (!slurm::proof_matches(slurm::head_proof(o.secret, ids()), w.value.hmac)) {
        std::cerr << "vramsim-agent: the head at " << head.head()
                  << " did not prove the run's secret (wrong proof in its welcome); refusing it" << std::endl;
        head.drop();
        return stop_all(1, std::nullopt);
      }
      handshake_timer.cancel();
      seal.emplace(slurm::session_key(o.secret, ids()), slurm::Sender::Agent);
      send(slurm::to_message(reg));
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
    send(slurm::to_message(h));
  }

  slurm::HandshakeIds ids() const { return {head_nonce, agent_nonce, o.job_id, o.run_id}; }

  // ---- leaving -------------------------------------------------------------

  void stop_all(int code, std::optional<std::string> goodbye_reason) {
    if (stopping) return;
    stopping = true;
    exit = code;
    goodbye = std::move(goodbye_reason);
    heartbeat_timer.cancel();
    silence_timer.cancel();
    handshake_timer.cancel();
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
      Json bye = slurm::to_message(slurm::Goodbye{*goodbye});
      head.leave(seal ? seal->seal(std::move(bye)) : bye, done);
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
