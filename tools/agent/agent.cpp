#include "tools/agent/agent.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "tools/agent/child_process.hpp"
#include "tools/agent/gpu_facts.hpp"

namespace vramsim::agent {

namespace asio = boost::asio;
using asio::ip::tcp;
using vramsim::Json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kConnectRetry = std::chrono::milliseconds(500);
constexpr auto kReplicaStopGrace = std::chrono::seconds(5);
constexpr auto kFinalFlush = std::chrono::seconds(2);
constexpr std::size_t kMaxQueryOutput = 1 << 20;

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

// Ordered writes of whole lines to one stream (socket or pipe). `owner`
// keeps the stream (and this writer) alive until the write completes.
template <class Stream>
class LineWriter {
 public:
  void send(Stream& stream, std::string line, std::shared_ptr<void> owner) {
    queue_.push_back(std::move(line));
    if (!writing_) next(stream, std::move(owner));
  }
  void on_idle(std::function<void()> f) {
    if (!writing_) {
      if (f) f();
      return;
    }
    on_idle_ = std::move(f);
  }

 private:
  void next(Stream& stream, std::shared_ptr<void> owner) {
    if (queue_.empty()) {
      writing_ = false;
      if (auto f = std::exchange(on_idle_, {})) f();
      return;
    }
    writing_ = true;
    asio::async_write(stream, asio::buffer(queue_.front()),
                      [this, &stream, owner](const boost::system::error_code& ec, std::size_t) {
                        queue_.pop_front();
                        if (ec) queue_.clear();  // the reader side reports the loss
                        next(stream, owner);
                      });
  }
  std::deque<std::string> queue_;
  bool writing_ = false;
  std::function<void()> on_idle_;
};

}  // namespace

struct Replica {
  Replica(asio::io_context& io, std::size_t max_line) : split(max_line), kill_timer(io) {}
  std::string name, app, kind;
  pid_t pid = -1;
  std::unique_ptr<asio::posix::stream_descriptor> in, out;
  slurm::LineSplitter split;
  std::array<char, 4096> buf{};
  LineWriter<asio::posix::stream_descriptor> writer;
  std::string state = "starting";
  bool reported = false;  // replica_started sent
  std::set<std::uint64_t> pending_calls;
  asio::steady_timer kill_timer;
};

struct MemoryQuery {
  explicit MemoryQuery(asio::io_context& io) : out(io) {}
  asio::posix::stream_descriptor out;
  std::array<char, 4096> buf{};
  std::string text;
  pid_t pid = -1;
  bool eof = false, exited = false;
  int status = 0;
  Clock::time_point started;
};

struct Agent::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, AgentOptions o, slurm::AgentRegistration r)
      : io(io),
        o(std::move(o)),
        reg(std::move(r)),
        socket(io),
        resolver(io),
        retry_timer(io),
        heartbeat_timer(io),
        final_timer(io),
        term_signals(io, SIGTERM, SIGINT),
        child_signals(io, SIGCHLD),
        split(this->o.max_message_bytes) {}

  asio::io_context& io;
  AgentOptions o;
  slurm::AgentRegistration reg;
  tcp::socket socket;
  tcp::resolver resolver;
  asio::steady_timer retry_timer, heartbeat_timer, final_timer;
  asio::signal_set term_signals, child_signals;
  Clock::time_point connect_deadline;
  slurm::LineSplitter split;
  std::array<char, 8192> buf{};
  LineWriter<tcp::socket> writer;
  bool connected = false, stopping = false, finished = false;
  int exit = 1;
  std::optional<std::string> goodbye;
  std::map<std::string, std::shared_ptr<Replica>> replicas;
  std::map<pid_t, std::function<void(int)>> on_exit;
  std::shared_ptr<MemoryQuery> query;
  std::vector<slurm::DeviceUsage> last_usage;

  std::string head() const { return o.head_host + ":" + std::to_string(o.head_port); }

  // ---- start, connect ------------------------------------------------------

  void start() {
    auto self = shared_from_this();
    wait_children();
    term_signals.async_wait([self](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      std::cerr << "vramsim-agent: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
                << ": stopping replicas and leaving" << std::endl;
      self->stop_all(0, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    });
    connect_deadline = Clock::now() + millis(o.connect_timeout_s);
    connect();
  }

  void connect() {
    auto self = shared_from_this();
    resolver.async_resolve(
        o.head_host, std::to_string(o.head_port),
        [self](const boost::system::error_code& ec, tcp::resolver::results_type results) {
          if (self->stopping) return;
          if (ec) return self->connect_failed(ec.message());
          asio::async_connect(self->socket, results, [self](const boost::system::error_code& ec2, const tcp::endpoint&) {
            if (self->stopping) return;
            if (ec2) return self->connect_failed(ec2.message());
            // Replica processes must not inherit the head connection: a
            // killed agent's node is lost when its socket closes, not when
            // its last replica exits.
            ::fcntl(self->socket.native_handle(), F_SETFD, FD_CLOEXEC);
            self->connected = true;
            boost::system::error_code ignored;
            self->reg.ip = self->socket.local_endpoint(ignored).address().to_string();
            self->read();
          });
        });
  }

  void connect_failed(const std::string& why) {
    boost::system::error_code ignored;
    socket.close(ignored);
    if (Clock::now() + kConnectRetry > connect_deadline) {
      std::cerr << "vramsim-agent: cannot reach the head at " << head() << ": " << why << std::endl;
      return stop_all(1, std::nullopt);
    }
    auto self = shared_from_this();
    retry_timer.expires_after(kConnectRetry);
    retry_timer.async_wait([self](const boost::system::error_code& ec) {
      if (!ec && !self->stopping) self->connect();
    });
  }

  // ---- the head connection -------------------------------------------------

  void send(const Json& m) {
    if (!connected) return;
    writer.send(socket, slurm::encode_line(m), shared_from_this());
  }

  void read() {
    auto self = shared_from_this();
    socket.async_read_some(asio::buffer(buf), [self](const boost::system::error_code& ec, std::size_t n) {
      if (self->finished || !self->connected) return;
      if (ec) {
        if (self->stopping) return;
        self->lost(ec == asio::error::eof ? "the head closed the connection" : ec.message());
        return;
      }
      bool fits = self->split.feed(std::string_view(self->buf.data(), n));
      while (auto line = self->split.next_line()) {
        self->handle(*line);
        if (self->stopping) return;
      }
      if (!fits) {
        return self->lost("the head sent a line over " + std::to_string(self->split.max_line_bytes()) + " bytes");
      }
      self->read();
    });
  }

  void lost(const std::string& why) {
    std::cerr << "vramsim-agent: lost the connection to the head at " << head() << " (" << why
              << "); stopping replicas" << std::endl;
    connected = false;
    boost::system::error_code ignored;
    socket.close(ignored);
    stop_all(1, std::nullopt);
  }

  void protocol_error(const std::string& reason) {
    std::cerr << "vramsim-agent: from the head: " << reason << std::endl;
    send(slurm::to_message(slurm::ErrorMessage{reason}));
  }

  void handle(const std::string& line) {
    auto parsed = slurm::parse_line(line);
    if (!parsed) return protocol_error(parsed.error);
    const Json& m = parsed.value;
    const std::string type = slurm::message_type(m);
    if (type == "challenge") {
      auto c = slurm::parse_challenge(m);
      if (!c) return protocol_error(c.error);
      send(slurm::to_message(
          slurm::Hello{o.job_id, o.run_id, slurm::handshake_hmac(o.secret, c.value.nonce, o.job_id)}));
      send(slurm::to_message(reg));
    } else if (type == "registered") {
      std::cerr << "vramsim-agent: registered job " << o.job_id << " with the head at " << head() << std::endl;
      heartbeat_tick();
    } else if (type == "start_replica") {
      auto s = slurm::parse_start_replica(m);
      if (!s) return protocol_error(s.error);
      start_replica(s.value);
    } else if (type == "stop_replica") {
      auto s = slurm::parse_stop_replica(m);
      if (!s) return protocol_error(s.error);
      if (auto it = replicas.find(s.value.replica); it != replicas.end()) stop_replica(*it->second);
    } else if (type == "call") {
      auto c = slurm::parse_call(m);
      if (!c) return protocol_error(c.error);
      call(c.value);
    } else if (type == "drain") {
      std::cerr << "vramsim-agent: drain: stopping replicas and leaving" << std::endl;
      stop_all(0, "drain");
    } else if (type == "error") {
      auto e = slurm::parse_error(m);
      std::cerr << "vramsim-agent: the head refused this agent: " << (e ? e.value.reason : e.error) << std::endl;
      connected = false;
      boost::system::error_code ignored;
      socket.close(ignored);
      stop_all(1, std::nullopt);
    } else {
      protocol_error("malformed message: unknown type '" + type + "'");
    }
  }

  // ---- heartbeats ----------------------------------------------------------

  void heartbeat_tick() {
    if (stopping) return;
    if (query && !query->exited) {
      // A hung nvidia-smi never delays the heartbeat; after two intervals it is killed.
      if (Clock::now() - query->started > 2 * millis(o.heartbeat_s)) ::kill(query->pid, SIGKILL);
      send_heartbeat();
    } else {
      start_memory_query();
    }
    auto self = shared_from_this();
    heartbeat_timer.expires_after(millis(o.heartbeat_s));
    heartbeat_timer.async_wait([self](const boost::system::error_code& ec) {
      if (!ec) self->heartbeat_tick();
    });
  }

  void send_heartbeat() {
    slurm::Heartbeat h;
    h.devices = last_usage;
    for (const auto& [name, r] : replicas) h.replicas.push_back({name, r->state});
    send(slurm::to_message(h));
  }

  void start_memory_query() {
    SpawnOptions so;
    so.quiet_stderr = true;
    auto child = spawn_child({o.nvidia_smi, kMemoryUsedQuery, kMemoryUsedFormat}, so);
    if (child.pid < 0) {
      last_usage.clear();  // no nvidia-smi: no driver-observed figures
      return send_heartbeat();
    }
    auto q = std::make_shared<MemoryQuery>(io);
    q->pid = child.pid;
    q->out.assign(child.stdout_fd);
    q->started = Clock::now();
    query = q;
    auto self = shared_from_this();
    on_exit[child.pid] = [self, q](int status) {
      q->exited = true;
      q->status = status;
      self->finish_query(*q);
    };
    read_query(q);
  }

  void read_query(const std::shared_ptr<MemoryQuery>& q) {
    auto self = shared_from_this();
    q->out.async_read_some(asio::buffer(q->buf), [self, q](const boost::system::error_code& ec, std::size_t n) {
      if (ec) {
        q->eof = true;
        boost::system::error_code ignored;
        q->out.close(ignored);
        return self->finish_query(*q);
      }
      if (q->text.size() < kMaxQueryOutput) q->text.append(q->buf.data(), n);
      self->read_query(q);
    });
  }

  void finish_query(MemoryQuery& q) {
    if (!q.eof || !q.exited || stopping) return;
    const bool ok = WIFEXITED(q.status) && WEXITSTATUS(q.status) == 0;
    last_usage = ok ? parse_memory_used(q.text) : std::vector<slurm::DeviceUsage>{};
    send_heartbeat();
  }

  // ---- children ------------------------------------------------------------

  void wait_children() {
    auto self = shared_from_this();
    child_signals.async_wait([self](const boost::system::error_code& ec, int) {
      if (ec) return;
      self->reap();
      if (!self->finished) self->wait_children();
    });
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = on_exit.find(pid);
      if (it == on_exit.end()) continue;
      auto f = std::move(it->second);
      on_exit.erase(it);
      f(status);
    }
  }

  static std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "ended";
  }

  // CUDA_VISIBLE_DEVICES for a replica on device `d` of this agent.
  static std::optional<std::string> visible_devices_for(int d) {
    if (d < 0) return std::nullopt;
    const char* current = std::getenv("CUDA_VISIBLE_DEVICES");
    if (current == nullptr || *current == '\0') return std::to_string(d);
    std::string list = current;
    std::size_t start = 0;
    for (int i = 0;; ++i) {
      auto comma = list.find(',', start);
      if (i == d) return list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (comma == std::string::npos) return std::nullopt;
      start = comma + 1;
    }
  }

  void start_replica(const slurm::ReplicaLaunch& l) {
    auto refuse = [&](const std::string& why) {
      send(slurm::to_message(slurm::ReplicaStarted{l.replica, false, why}));
    };
    if (replicas.count(l.replica) != 0) return refuse("replica " + l.replica + " already exists on this agent");
    if (l.device >= static_cast<int>(reg.devices.size()) && !reg.devices.empty())
      return refuse("device " + std::to_string(l.device) + " does not exist on this node");
    SpawnOptions so;
    so.pipe_stdin = true;
    if (auto v = visible_devices_for(l.device)) {
      so.env.push_back("CUDA_VISIBLE_DEVICES=" + *v);
    } else if (l.device >= 0) {
      return refuse("device " + std::to_string(l.device) + " is not in CUDA_VISIBLE_DEVICES");
    }
    auto child = spawn_child({o.self_exe, "replica", "--name", l.replica, "--gpu-memory-mb",
                              std::to_string(l.gpu_memory_mb), "--device", std::to_string(l.device), "--kind", l.kind},
                             so);
    if (child.pid < 0) return refuse(child.error);
    auto r = std::make_shared<Replica>(io, o.max_message_bytes);
    r->name = l.replica;
    r->app = l.app;
    r->kind = l.kind;
    r->pid = child.pid;
    r->in = std::make_unique<asio::posix::stream_descriptor>(io, child.stdin_fd);
    r->out = std::make_unique<asio::posix::stream_descriptor>(io, child.stdout_fd);
    replicas[l.replica] = r;
    auto self = shared_from_this();
    on_exit[child.pid] = [self, r](int status) { self->replica_exited(r, status); };
    read_replica(r);
  }

  void read_replica(const std::shared_ptr<Replica>& r) {
    auto self = shared_from_this();
    r->out->async_read_some(asio::buffer(r->buf), [self, r](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return;  // EOF: the exit is handled on SIGCHLD
      bool fits = r->split.feed(std::string_view(r->buf.data(), n));
      while (auto line = r->split.next_line()) self->replica_line(*r, *line);
      if (!fits) {
        std::cerr << "vramsim-agent: replica " << r->name << " wrote an oversized line; stopping it" << std::endl;
        return self->stop_replica(*r);
      }
      self->read_replica(r);
    });
  }

  void replica_line(Replica& r, const std::string& line) {
    auto parsed = slurm::parse_line(line);
    if (!parsed) {
      std::cerr << "vramsim-agent: replica " << r.name << ": " << parsed.error << std::endl;
      return;
    }
    const Json& m = parsed.value;
    const std::string type = slurm::message_type(m);
    if (type == "ready" && !r.reported) {
      r.reported = true;
      const bool ok = m.value("ok", false);
      const std::string error = m.contains("error") && m["error"].is_string() ? m["error"].get<std::string>() : "";
      if (ok) {
        r.state = "running";
        if (m.value("memory", std::string()) == "host")
          std::cerr << "vramsim-agent: replica " << r.name << " holds host memory only: " << error << std::endl;
      }
      send(slurm::to_message(slurm::ReplicaStarted{r.name, ok, ok ? "" : error}));
      if (!ok) stop_replica(r);
    } else if (type == "result" && m.contains("call_id") && m["call_id"].is_number_unsigned()) {
      const auto id = m["call_id"].get<std::uint64_t>();
      r.pending_calls.erase(id);
      send(slurm::to_message(slurm::CallResult{id, r.name, m.contains("result") ? m["result"] : Json()}));
    } else {
      std::cerr << "vramsim-agent: replica " << r.name << ": ignored a '" << type << "' line" << std::endl;
    }
  }

  void call(const slurm::Call& c) {
    auto answer = [&](const std::string& error) {
      send(slurm::to_message(slurm::CallResult{c.call_id, c.replica, Json{{"error", error}}}));
    };
    auto it = replicas.find(c.replica);
    if (it == replicas.end()) return answer("no replica " + c.replica + " on this agent");
    Replica& r = *it->second;
    if (r.state != "running") return answer("replica " + c.replica + " is " + r.state);
    r.pending_calls.insert(c.call_id);
    r.writer.send(*r.in, slurm::encode_line(Json{{"type", "call"}, {"call_id", c.call_id}, {"payload", c.payload}}),
                  it->second);
  }

  void stop_replica(Replica& r) {
    if (r.state == "stopping") return;
    r.state = "stopping";
    ::kill(r.pid, SIGTERM);
    boost::system::error_code ignored;
    r.in->close(ignored);  // a replica also leaves when its stdin closes
    const pid_t pid = r.pid;
    r.kill_timer.expires_after(kReplicaStopGrace);
    auto self = shared_from_this();
    r.kill_timer.async_wait([self, pid](const boost::system::error_code& ec) {
      if (!ec && self->on_exit.count(pid) != 0) ::kill(pid, SIGKILL);
    });
  }

  void replica_exited(const std::shared_ptr<Replica>& r, int status) {
    r->kill_timer.cancel();
    boost::system::error_code ignored;
    r->in->close(ignored);
    r->out->close(ignored);
    replicas.erase(r->name);
    const std::string how = describe_status(status);
    if (!stopping) {
      if (!r->reported) {
        send(slurm::to_message(slurm::ReplicaStarted{r->name, false, "replica process " + how + " before it was ready"}));
      } else if (r->state != "stopping") {
        std::cerr << "vramsim-agent: replica " << r->name << " " << how << std::endl;
      }
      for (auto id : r->pending_calls)
        send(slurm::to_message(slurm::CallResult{id, r->name, Json{{"error", "replica " + r->name + " " + how}}}));
    }
    if (stopping && replicas.empty()) finish();
  }

  // ---- leaving -------------------------------------------------------------

  void stop_all(int code, std::optional<std::string> goodbye_reason) {
    if (stopping) return;
    stopping = true;
    exit = code;
    goodbye = std::move(goodbye_reason);
    heartbeat_timer.cancel();
    retry_timer.cancel();
    boost::system::error_code ignored;
    resolver.cancel();
    term_signals.cancel(ignored);
    if (query && !query->exited) ::kill(query->pid, SIGKILL);
    if (replicas.empty()) return finish();
    for (auto& [name, r] : replicas) stop_replica(*r);
  }

  void finish() {
    if (finished) return;
    auto self = shared_from_this();
    auto done = [self] {
      if (self->finished) return;
      self->finished = true;
      boost::system::error_code ignored;
      self->socket.shutdown(tcp::socket::shutdown_both, ignored);
      self->socket.close(ignored);
      self->final_timer.cancel();
      self->on_exit.clear();  // its handlers hold the agent
      self->replicas.clear();
      self->query.reset();
      self->io.stop();
    };
    if (connected && goodbye) {
      writer.send(socket, slurm::encode_line(slurm::to_message(slurm::Goodbye{*goodbye})), self);
      writer.on_idle(done);
      // A head that does not read must not keep the agent alive.
      final_timer.expires_after(kFinalFlush);
      final_timer.async_wait([done](const boost::system::error_code& ec) {
        if (!ec) done();
      });
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
