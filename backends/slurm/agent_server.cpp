#include "backends/slurm/agent_server.hpp"

#include <array>
#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <stdexcept>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace vramsim::slurm {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace detail {

// "ADDRESS:PORT" of the other end, for the refusals.
std::string peer_of(const tcp::socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("unknown peer") : ep.address().to_string() + ":" + std::to_string(ep.port());
}

struct AgentServerState {
  AgentServerState(asio::io_context& io, AgentServerConfig c, AgentServerListener& l)
      : io(io), cfg(std::move(c)), listener(&l), acceptor(io) {}
  asio::io_context& io;
  AgentServerConfig cfg;
  AgentServerListener* listener;
  tcp::acceptor acceptor;
  asio::steady_timer accept_timer{io};
  std::chrono::milliseconds accept_wait{0};
  std::size_t unauthenticated = 0;  // connections not yet registered
  std::uint64_t over_cap = 0;       // refused for the cap, reported coalesced
  bool closed = false;
  // Connections that passed hello, by job id (registered or about to be).
  std::map<std::string, std::shared_ptr<AgentConnection>> jobs;
  std::set<std::shared_ptr<AgentConnection>> connections;
  unsigned short port = 0;
};

// One agent's connection: handshake, then the registered conversation.
class AgentConnection : public std::enable_shared_from_this<AgentConnection> {
 public:
  enum class Phase { AwaitHello, AwaitRegister, Registered, Closed };

  AgentConnection(std::shared_ptr<AgentServerState> s, tcp::socket socket)
      : s_(std::move(s)),
        socket_(std::move(socket)),
        timer_(s_->io),
        ping_timer_(s_->io),
        splitter_(s_->cfg.max_message_bytes) {
    peer_ = peer_of(socket_);
  }

  void start() {
    ++s_->unauthenticated;  // until it registers or closes (see phase_)
    nonce_ = make_nonce();
    send(to_message(Challenge{nonce_}));
    arm_timer(s_->cfg.auth_timeout, [](AgentConnection& c) {
      c.refuse("no registration within " + std::to_string(c.s_->cfg.auth_timeout.count()) + " ms");
    });
    read();
  }

  Phase phase() const { return phase_; }
  // Registered and not being refused or closed.
  bool usable() const { return phase_ == Phase::Registered && !closing_; }
  const std::string& job_id() const { return job_id_; }

  void send(const Json& message) {
    if (phase_ == Phase::Closed || closing_) return;
    out_.push_back(encode_line(seal_ ? seal_->seal(message) : message));
    if (!writing_) write_next();
  }

  void note_drain_sent() { drain_sent_ = true; }

  // Server shutdown: close without telling the listener.
  void close_silently() { close_socket(); }

 private:
  void read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [self](const boost::system::error_code& ec, std::size_t n) {
      self->on_read(ec, n);
    });
  }

  void on_read(const boost::system::error_code& ec, std::size_t n) {
    if (phase_ == Phase::Closed || closing_ || s_->closed) return;
    if (ec) {
      if (phase_ == Phase::Registered) {
        // A drain's goodbye is the simulated "ray stop"; any other goodbye
        // (SIGTERM at a time limit, a preemption, someone's scancel) is
        // passed on as the agent said it.
        if (goodbye_ && goodbye_reason_ != "drain")
          gone("goodbye: " + goodbye_reason_);
        else
          gone(goodbye_ || drain_sent_ ? "drained" : "connection closed");
      } else {
        refuse("connection closed before registration");
      }
      return;
    }
    bool fits = splitter_.feed(std::string_view(buf_.data(), n));
    while (auto line = splitter_.next_line()) {
      handle(*line);
      if (phase_ == Phase::Closed || closing_ || s_->closed) return;
    }
    if (!fits) {
      refuse("message over " + std::to_string(splitter_.max_line_bytes()) + " bytes");
      return;
    }
    read();
  }

  void handle(const std::string& line) {
    auto parsed = parse_line(line);
    if (!parsed) {
      // Past the handshake, a line that is not even JSON is no one's
      // message: refused like a forged one.
      if (seal_) return refuse_message(parsed.error);
      return refuse(parsed.error);
    }
    Json& m = parsed.value;
    if (seal_) {
      if (auto why = seal_->open(m); !why.empty()) return refuse_message(why + " ('" + message_type(m) + "')");
    }
    const std::string type = message_type(m);
    switch (phase_) {
      case Phase::AwaitHello: return on_hello(m, type);
      case Phase::AwaitRegister: return on_register(m, type);
      case Phase::Registered: return on_registered_message(m, type);
      case Phase::Closed: return;
    }
  }

  void on_hello(const Json& m, const std::string& type) {
    if (type != "hello") return refuse("message before authentication: '" + type + "'");
    auto h = parse_hello(m);
    if (!h) return refuse(h.error);
    // Before the proof: an agent left from another run (its job's secret is
    // that run's) is told so, not "wrong HMAC".
    if (h.value.run_id != s_->cfg.run_id)
      return refuse("agent of run " + h.value.run_id + ", not of this run (" + s_->cfg.run_id + ")");
    const HandshakeIds ids{nonce_, h.value.nonce, h.value.job_id, h.value.run_id};
    if (!proof_matches(agent_proof(s_->cfg.secret, ids), h.value.hmac))
      return refuse("wrong HMAC for job " + h.value.job_id);
    if (!s_->listener->known_job(h.value.job_id)) return refuse("unknown job " + h.value.job_id);
    if (s_->closed || closing_) return;
    if (s_->jobs.count(h.value.job_id) != 0) return refuse("job already connected: " + h.value.job_id);
    job_id_ = h.value.job_id;
    s_->jobs[job_id_] = shared_from_this();
    // The head proves the secret in turn; every later line is sealed.
    send(to_message(Welcome{job_id_, head_proof(s_->cfg.secret, ids)}));
    seal_.emplace(session_key(s_->cfg.secret, ids), Sender::Head);
    phase_ = Phase::AwaitRegister;
  }

  // A sealed line that does not open: dropped and reported; the connection
  // ends after kMaxRefusedMessages of them.
  void refuse_message(const std::string& why) {
    const std::string reason = "refused message: " + why;
    if (++refused_messages_ >= kMaxRefusedMessages)
      return refuse(reason + "; " + std::to_string(refused_messages_) + " refused, closing");
    s_->listener->refused(peer_, reason + " (job " + job_id_ + ")");
  }

  void on_register(const Json& m, const std::string& type) {
    if (type != "register") return refuse("message before authentication: '" + type + "' before register");
    auto r = parse_register(m);
    if (!r) return refuse(r.error);
    if (r.value.job_id != job_id_)
      return refuse("malformed message: field 'job_id' of register: expected " + job_id_ + " as in hello");
    phase_ = Phase::Registered;
    --s_->unauthenticated;
    send(to_message(Registered{job_id_}));
    arm_heartbeat_timer();
    // TCP keepalive under the pings: a peer gone without a FIN or RST is
    // noticed by the kernel too.
    boost::system::error_code ignored;
    socket_.set_option(asio::socket_base::keep_alive(true), ignored);
    ping();
    s_->listener->agent_registered(r.value);
  }

  void on_registered_message(const Json& m, const std::string& type) {
    arm_heartbeat_timer();
    if (type == "heartbeat") {
      auto h = parse_heartbeat(m);
      if (!h) return refuse(h.error);
      s_->listener->agent_heartbeat(job_id_, h.value.devices);
    } else if (type == "replica_started") {
      auto r = parse_replica_started(m);
      if (!r) return refuse(r.error);
      s_->listener->replica_started(job_id_, r.value);
    } else if (type == "call_result") {
      auto r = parse_call_result(m);
      if (!r) return refuse(r.error);
      s_->listener->call_result(job_id_, r.value.call_id, r.value.result);
    } else if (type == "goodbye") {
      auto g = parse_goodbye(m);
      if (!g) return refuse(g.error);
      goodbye_ = true;
      goodbye_reason_ = g.value.reason;
    } else if (type == "error") {
      auto e = parse_error(m);
      if (!e) return refuse(e.error);
      // The agent could not use something the head sent; the head logs it.
      s_->listener->refused(peer_, "agent of job " + job_id_ + " reported: " + e.value.reason);
    } else {
      refuse("malformed message: unknown type '" + type + "'");
    }
  }

  // Refuses this connection: error line to the peer, then close.
  void refuse(const std::string& reason) {
    if (phase_ == Phase::Closed || closing_) return;
    const bool registered = phase_ == Phase::Registered;
    send(to_message(ErrorMessage{reason}));
    close_after_write();
    auto s = s_;
    const std::string job = job_id_;
    s->listener->refused(peer_, registered ? reason + " (job " + job + ")" : reason);
    if (registered && !s->closed) s->listener->agent_gone(job, "protocol error: " + reason);
  }

  void gone(const std::string& reason) {
    if (phase_ == Phase::Closed) return;
    const std::string job = job_id_;
    auto s = s_;
    close_socket();
    s->listener->agent_gone(job, reason);
  }

  void ping() {
    if (s_->cfg.ping_interval.count() <= 0) return;
    ping_timer_.expires_after(s_->cfg.ping_interval);
    std::weak_ptr<AgentConnection> weak = shared_from_this();
    ping_timer_.async_wait([weak](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->s_->closed || self->phase_ != Phase::Registered || self->closing_) return;
      self->send(ping_message());
      self->ping();
    });
  }

  void arm_heartbeat_timer() {
    arm_timer(s_->cfg.heartbeat_timeout, [](AgentConnection& c) {
      if (c.phase_ == Phase::Registered && !c.closing_) c.gone("heartbeat timeout");
    });
  }

  template <class F>
  void arm_timer(std::chrono::milliseconds after, F on_expiry) {
    timer_.expires_after(after);
    std::weak_ptr<AgentConnection> weak = shared_from_this();
    timer_.async_wait([weak, on_expiry](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->s_->closed || self->phase_ == Phase::Closed) return;
      on_expiry(*self);
    });
  }

  void write_next() {
    if (out_.empty()) {
      writing_ = false;
      if (closing_) close_socket();
      return;
    }
    writing_ = true;
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(out_.front()),
                      [self](const boost::system::error_code& ec, std::size_t) {
                        if (self->phase_ == Phase::Closed) return;
                        self->out_.pop_front();
                        if (ec) {
                          self->out_.clear();
                          // The read side reports the closed connection.
                          self->writing_ = false;
                          if (self->closing_) self->close_socket();
                          return;
                        }
                        self->write_next();
                      });
  }

  void close_after_write() {
    closing_ = true;
    if (!writing_) {
      close_socket();
      return;
    }
    // A peer that does not read must not hold the connection open.
    timer_.expires_after(std::chrono::seconds(1));
    std::weak_ptr<AgentConnection> weak = shared_from_this();
    timer_.async_wait([weak](const boost::system::error_code& ec) {
      if (auto self = weak.lock(); self && !ec) self->close_socket();
    });
  }

  void close_socket() {
    if (phase_ == Phase::Closed) return;
    if (phase_ != Phase::Registered) --s_->unauthenticated;
    phase_ = Phase::Closed;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    timer_.cancel();
    ping_timer_.cancel();
    auto self = shared_from_this();
    if (!job_id_.empty()) {
      auto it = s_->jobs.find(job_id_);
      if (it != s_->jobs.end() && it->second == self) s_->jobs.erase(it);
    }
    s_->connections.erase(self);
  }

  std::shared_ptr<AgentServerState> s_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  asio::steady_timer ping_timer_;
  LineSplitter splitter_;
  std::array<char, 8192> buf_{};
  std::deque<std::string> out_;
  bool writing_ = false;
  bool closing_ = false;
  bool goodbye_ = false;
  std::string goodbye_reason_;
  bool drain_sent_ = false;
  int refused_messages_ = 0;
  std::optional<MessageSeal> seal_;  // from the welcome on
  Phase phase_ = Phase::AwaitHello;
  std::string peer_, nonce_, job_id_;
};

namespace {

void accept_next(const std::shared_ptr<AgentServerState>& s);

// A connection over the cap is closed unread. Reported the first time and
// then every 100th, so a flood cannot flood the trace too.
void refuse_over_cap(const std::shared_ptr<AgentServerState>& s, tcp::socket& socket) {
  const std::string peer = peer_of(socket);
  boost::system::error_code ec;
  socket.close(ec);
  if (s->over_cap++ % 100 == 0)
    s->listener->refused(peer, "over " + std::to_string(s->cfg.max_unauthenticated) +
                                   " unauthenticated connections (" + std::to_string(s->over_cap) +
                                   " refused so far)");
}

void accept_after(const std::shared_ptr<AgentServerState>& s, std::chrono::milliseconds wait) {
  s->accept_timer.expires_after(wait);
  s->accept_timer.async_wait([s](const boost::system::error_code& ec) {
    if (!ec && !s->closed) accept_next(s);
  });
}

void accept_next(const std::shared_ptr<AgentServerState>& s) {
  s->acceptor.async_accept([s](const boost::system::error_code& ec, tcp::socket socket) {
    if (s->closed) return;
    if (!ec) {
      s->accept_wait = std::chrono::milliseconds(0);
      if (s->unauthenticated >= s->cfg.max_unauthenticated) {
        refuse_over_cap(s, socket);
      } else {
        auto c = std::make_shared<AgentConnection>(s, std::move(socket));
        s->connections.insert(c);
        c->start();
      }
    } else if (ec == asio::error::operation_aborted) {
      return;
    } else {
      // e.g. out of file descriptors: reported, and accepting goes on after
      // a wait that doubles while the errors last.
      s->accept_wait = s->accept_wait.count() == 0 ? s->cfg.accept_backoff
                                                   : std::min(2 * s->accept_wait, s->cfg.accept_backoff_max);
      s->listener->refused("listener", "accept failed: " + ec.message() + "; next accept in " +
                                           std::to_string(s->accept_wait.count()) + " ms");
      return accept_after(s, s->accept_wait);
    }
    if (!s->closed) accept_next(s);
  });
}

std::shared_ptr<AgentConnection> registered(const std::shared_ptr<AgentServerState>& s, const std::string& job) {
  if (s->closed) return nullptr;
  auto it = s->jobs.find(job);
  if (it == s->jobs.end() || !it->second->usable()) return nullptr;
  return it->second;
}

}  // namespace
}  // namespace detail

AgentServer::AgentServer(asio::io_context& io, AgentServerConfig cfg, AgentServerListener& listener) {
  if (cfg.secret.empty()) throw std::invalid_argument("agent server: empty secret");
  if (cfg.run_id.empty()) throw std::invalid_argument("agent server: empty run id");
  state_ = std::make_shared<detail::AgentServerState>(io, std::move(cfg), listener);
  auto& s = *state_;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(s.cfg.bind, ec);
  if (ec) throw std::runtime_error("agent server: bad bind address '" + s.cfg.bind + "': " + ec.message());
  tcp::endpoint ep(address, s.cfg.port);
  const std::string where = s.cfg.bind + ":" + std::to_string(s.cfg.port);
  s.acceptor.open(ep.protocol(), ec);
  if (!ec) s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(ep, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("agent server: cannot listen on " + where + ": " + ec.message());
  s.port = s.acceptor.local_endpoint().port();
  detail::accept_next(state_);
}

AgentServer::~AgentServer() { close(); }

unsigned short AgentServer::port() const { return state_->port; }

bool AgentServer::start_replica(const std::string& job_id, const ReplicaLaunch& r) {
  auto c = detail::registered(state_, job_id);
  if (!c) return false;
  c->send(to_message(r));
  return true;
}

bool AgentServer::stop_replica(const std::string& job_id, const std::string& replica) {
  auto c = detail::registered(state_, job_id);
  if (!c) return false;
  c->send(to_message(StopReplica{replica}));
  return true;
}

bool AgentServer::call(const std::string& job_id, const std::string& replica, std::uint64_t call_id,
                       const Json& payload) {
  auto c = detail::registered(state_, job_id);
  if (!c) return false;
  c->send(to_message(Call{call_id, replica, payload}));
  return true;
}

bool AgentServer::drain(const std::string& job_id) {
  auto c = detail::registered(state_, job_id);
  if (!c) return false;
  c->note_drain_sent();
  c->send(drain_message());
  return true;
}

std::vector<std::string> AgentServer::connected_jobs() const {
  std::vector<std::string> out;
  for (const auto& [job, c] : state_->jobs)
    if (c->usable()) out.push_back(job);
  return out;
}

void AgentServer::close() {
  if (!state_ || state_->closed) return;
  state_->closed = true;
  boost::system::error_code ignored;
  state_->acceptor.close(ignored);
  state_->accept_timer.cancel();
  auto connections = state_->connections;  // close_silently edits the set
  for (const auto& c : connections) c->close_silently();
  state_->connections.clear();
  state_->jobs.clear();
}

}  // namespace vramsim::slurm
