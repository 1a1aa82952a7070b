#include "tools/agent/replica_host.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "backends/slurm/process_runner.hpp"

namespace vramsim::agent {

namespace asio = boost::asio;

namespace {

constexpr auto kReplicaStopGrace = std::chrono::seconds(5);

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

// CUDA_VISIBLE_DEVICES for a replica on device `d` of this agent.
std::optional<std::string> visible_devices_for(int d) {
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

}  // namespace

struct ReplicaHost::Replica {
  Replica(asio::io_context& io, std::size_t max_line) : in(io), out(io), split(max_line), kill_timer(io) {}
  std::string name, app, kind;
  pid_t pid = -1;
  asio::posix::stream_descriptor in, out;
  slurm::LineSplitter split;
  std::array<char, 4096> buf{};
  LineWriter<asio::posix::stream_descriptor> writer;
  std::string state = "starting";
  bool reported = false;  // replica_started sent
  std::set<std::uint64_t> pending_calls;
  asio::steady_timer kill_timer;
};

ReplicaHost::ReplicaHost(asio::io_context& io, Options options)
    : io_(io), o_(std::move(options)), child_signals_(io, SIGCHLD) {}

void ReplicaHost::watch(std::function<void(const Json&)> send, std::function<void()> all_stopped,
                        std::weak_ptr<void> owner) {
  send_ = std::move(send);
  all_stopped_ = std::move(all_stopped);
  owner_ = std::move(owner);
  wait_children();
}

void ReplicaHost::wait_children() {
  child_signals_.async_wait([this, keep = owner_.lock()](const boost::system::error_code& ec, int) {
    if (ec) return;
    reap();
    if (on_sigchld && !closed_) on_sigchld();
    if (!closed_) wait_children();
  });
}

// Each replica by its own pid: other children of the agent (nvidia-smi
// through a ProcessRunner) are reaped by their owner.
void ReplicaHost::reap() {
  std::vector<pid_t> pids;
  for (const auto& [pid, r] : by_pid_) pids.push_back(pid);
  for (pid_t pid : pids) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) continue;
    auto it = by_pid_.find(pid);
    if (it == by_pid_.end()) continue;
    auto r = std::move(it->second);
    by_pid_.erase(it);
    exited(r, status);
  }
}

void ReplicaHost::start(const slurm::ReplicaLaunch& l) {
  auto refuse = [&](const std::string& why) { send_(slurm::to_message(slurm::ReplicaStarted{l.replica, false, why, "", 0})); };
  if (replicas_.count(l.replica) != 0) return refuse("replica " + l.replica + " already exists on this agent");
  if (l.device >= static_cast<int>(o_.devices) && o_.devices != 0)
    return refuse("device " + std::to_string(l.device) + " does not exist on this node");
  slurm::SpawnSpec spec;
  spec.argv = {o_.self_exe, "replica", "--name", l.replica, "--gpu-memory-mb", std::to_string(l.gpu_memory_mb),
               "--device", std::to_string(l.device), "--kind", l.kind};
  spec.in = slurm::SpawnSpec::Stream::Pipe;
  spec.err = slurm::SpawnSpec::Stream::Inherit;
  // A group of its own, which the agent's stop signals whole (a replica's
  // own children included); killed with the agent however it dies
  // (PR_SET_PDEATHSIG), so none outlives it holding memory.
  spec.own_process_group = true;
  spec.parent_death_signal = SIGKILL;
  if (auto v = visible_devices_for(l.device)) {
    spec.env.emplace_back("CUDA_VISIBLE_DEVICES", *v);
  } else if (l.device >= 0) {
    return refuse("device " + std::to_string(l.device) + " is not in CUDA_VISIBLE_DEVICES");
  }
  auto child = slurm::spawn_process(spec);
  if (child.pid < 0) return refuse("cannot start " + o_.self_exe + ": " + child.error);
  auto r = std::make_shared<Replica>(io_, o_.max_message_bytes);
  r->name = l.replica;
  r->app = l.app;
  r->kind = l.kind;
  r->pid = child.pid;
  r->in.assign(child.in);
  r->out.assign(child.out);
  replicas_[l.replica] = r;
  by_pid_[child.pid] = r;
  read(r);
}

void ReplicaHost::read(const std::shared_ptr<Replica>& r) {
  r->out.async_read_some(asio::buffer(r->buf), [this, r, keep = owner_.lock()](const boost::system::error_code& ec,
                                                                               std::size_t n) {
    if (ec) return;  // EOF: the exit is handled on SIGCHLD
    const bool fits = r->split.feed(std::string_view(r->buf.data(), n));
    while (auto line = r->split.next_line()) on_line(*r, *line);
    if (!fits) {
      std::cerr << "vramsim-agent: replica " << r->name << " wrote an oversized line; stopping it" << std::endl;
      return stop(*r);
    }
    read(r);
  });
}

void ReplicaHost::on_line(Replica& r, const std::string& line) {
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
    const std::string memory = ok ? m.value("memory", std::string()) : std::string();
    const std::int64_t bytes = ok && m.contains("bytes") && m["bytes"].is_number_integer() ? m["bytes"].get<std::int64_t>() : 0;
    send_(slurm::to_message(slurm::ReplicaStarted{r.name, ok, ok ? "" : error, memory == "host" || memory == "device" ? memory : "", bytes}));
    if (!ok) stop(r);
  } else if (type == "result" && m.contains("call_id") && m["call_id"].is_number_unsigned()) {
    const auto id = m["call_id"].get<std::uint64_t>();
    r.pending_calls.erase(id);
    send_(slurm::to_message(slurm::CallResult{id, r.name, m.contains("result") ? m["result"] : Json()}));
  } else {
    std::cerr << "vramsim-agent: replica " << r.name << ": ignored a '" << type << "' line" << std::endl;
  }
}

void ReplicaHost::call(const slurm::Call& c) {
  auto answer = [&](const std::string& error) {
    send_(slurm::to_message(slurm::CallResult{c.call_id, c.replica, Json{{"error", error}}}));
  };
  auto it = replicas_.find(c.replica);
  if (it == replicas_.end()) return answer("no replica " + c.replica + " on this agent");
  Replica& r = *it->second;
  if (r.state != "running") return answer("replica " + c.replica + " is " + r.state);
  r.pending_calls.insert(c.call_id);
  r.writer.send(r.in, slurm::encode_line(Json{{"type", "call"}, {"call_id", c.call_id}, {"payload", c.payload}}),
                it->second);
}

void ReplicaHost::stop(const std::string& replica) {
  if (auto it = replicas_.find(replica); it != replicas_.end()) stop(*it->second);
}

void ReplicaHost::stop(Replica& r) {
  if (r.state == "stopping") return;
  r.state = "stopping";
  ::kill(-r.pid, SIGTERM);  // the group: the pid is not reaped yet, so not reused
  boost::system::error_code ignored;
  r.in.close(ignored);  // a replica also leaves when its stdin closes
  const pid_t pid = r.pid;
  r.kill_timer.expires_after(kReplicaStopGrace);
  r.kill_timer.async_wait([this, pid, keep = owner_.lock()](const boost::system::error_code& ec) {
    if (!ec && by_pid_.count(pid) != 0) ::kill(-pid, SIGKILL);
  });
}

void ReplicaHost::exited(const std::shared_ptr<Replica>& r, int status) {
  r->kill_timer.cancel();
  boost::system::error_code ignored;
  r->in.close(ignored);
  r->out.close(ignored);
  replicas_.erase(r->name);
  const std::string how = describe_status(status);
  if (!stopping_) {
    if (!r->reported) {
      send_(slurm::to_message(slurm::ReplicaStarted{r->name, false, "replica process " + how + " before it was ready", "", 0}));
    } else if (r->state != "stopping") {
      std::cerr << "vramsim-agent: replica " << r->name << " " << how << std::endl;
    }
    for (auto id : r->pending_calls)
      send_(slurm::to_message(slurm::CallResult{id, r->name, Json{{"error", "replica " + r->name + " " + how}}}));
  }
  if (stopping_ && replicas_.empty()) all_stopped_();
}

std::vector<slurm::ReplicaState> ReplicaHost::states() const {
  std::vector<slurm::ReplicaState> out;
  for (const auto& [name, r] : replicas_) out.push_back({name, r->state});
  return out;
}

bool ReplicaHost::stop_all() {
  stopping_ = true;
  if (replicas_.empty()) return true;
  for (auto& [name, r] : replicas_) stop(*r);
  return false;
}

void ReplicaHost::close() {
  closed_ = true;
  by_pid_.clear();
  replicas_.clear();
}

}  // namespace vramsim::agent
