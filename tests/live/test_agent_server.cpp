// The head's AgentServer against the real vramsim-agent binary over loopback,
// with a stand-in nvidia-smi on the agent's PATH. No SLURM needed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "backends/slurm/agent_server.hpp"

extern char** environ;

namespace vramsim::slurm {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;

const char* kA100Smi = R"(#!/bin/sh
case "$*" in
  *memory.used*) echo "0, 1234" ;;
  *) echo "NVIDIA A100-SXM4-40GB, 40960, Disabled" ;;
esac
)";
const char* kFailingSmi = R"(#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
exit 2
)";

struct Gone {
  std::string job, reason;
};

class Recorder : public AgentServerListener {
 public:
  std::set<std::string> jobs{"1000", "1001", "1002"};
  std::vector<AgentRegistration> registered;
  std::vector<std::pair<std::string, std::vector<DeviceUsage>>> heartbeats;
  std::vector<std::tuple<std::string, std::string, bool, std::string>> started;
  std::vector<std::pair<std::uint64_t, Json>> results;
  std::vector<Gone> gone;
  std::vector<std::string> refusals;

  bool known_job(const std::string& job_id) override { return jobs.count(job_id) != 0; }
  void agent_registered(const AgentRegistration& r) override { registered.push_back(r); }
  void agent_heartbeat(const std::string& job, const std::vector<DeviceUsage>& d) override {
    heartbeats.emplace_back(job, d);
  }
  void replica_started(const std::string& job, const std::string& replica, bool ok, const std::string& error) override {
    started.emplace_back(job, replica, ok, error);
  }
  void call_result(const std::string&, std::uint64_t id, const Json& result) override {
    results.emplace_back(id, result);
  }
  void agent_gone(const std::string& job, const std::string& reason) override { gone.push_back({job, reason}); }
  void refused(const std::string&, const std::string& reason) override { refusals.push_back(reason); }
};

class AgentServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "vramsim-live-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    secret_file_ = write(dir_ + "/secret", secret_ + "\n", 0600);
    std::filesystem::create_directory(dir_ + "/bin");
    set_smi(kA100Smi);
    AgentServerConfig cfg;
    cfg.secret = secret_;
    cfg.auth_timeout = 2000ms;
    cfg.heartbeat_timeout = 3000ms;
    make_server(cfg);
  }

  void TearDown() override {
    for (pid_t pid : agents_) {
      ::kill(pid, SIGKILL);
      ::kill(pid, SIGCONT);
      ::waitpid(pid, nullptr, 0);
    }
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void make_server(AgentServerConfig cfg) {
    server_.reset();
    server_ = std::make_unique<AgentServer>(io_, cfg, rec_);
  }

  static std::string write(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  void set_smi(const char* script) { write(dir_ + "/bin/nvidia-smi", script, 0755); }

  // Starts vramsim-agent with the stand-in nvidia-smi first on PATH.
  pid_t spawn_agent(const std::string& job, const std::string& advertisement = "fixed",
                    std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:" + std::to_string(server_->port()),
                                     "--secret-file", secret_file_, "--run-id", "run-1", "--job-id", job,
                                     "--advertisement", advertisement, "--num-cpus", "8", "--num-gpus", "1",
                                     "--detect", "nvidia-smi", "--heartbeat", "0.2", "--resources",
                                     "{\"slurm_job_id:" + job + "\": 1}", "--block"};
    args.insert(args.end(), extra.begin(), extra.end());
    return spawn(args);
  }

  pid_t spawn(std::vector<std::string> args) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string s = *e;
      if (s.rfind("PATH=", 0) == 0) s = "PATH=" + dir_ + "/bin:" + s.substr(5);
      if (s.rfind("SLURM_JOB_ID=", 0) == 0 || s.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
      env.push_back(s);
    }
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const std::string log = dir_ + "/agent-" + std::to_string(agents_.size()) + ".err";
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    EXPECT_EQ(::posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    agents_.push_back(pid);
    logs_.push_back(log);
    return pid;
  }

  std::string agent_log(std::size_t i) const {
    std::ifstream in(logs_.at(i));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs the loop until `done` or the deadline.
  bool pump(const std::function<bool()>& done, std::chrono::milliseconds within = 10000ms) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      io_.restart();
      io_.run_for(10ms);
    }
    return true;
  }

  // Exit status of an agent, pumping the loop meanwhile; nullopt on timeout.
  std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds within = 10000ms) {
    std::optional<int> code;
    pump([&] {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::erase(agents_, pid);
      }
      return code.has_value();
    }, within);
    return code;
  }

  // Names apart from those of tests running in parallel.
  static std::string unique_replica_name() {
    return "echo-" + std::to_string(::getpid()) + "#" + std::to_string(++replica_counter_);
  }
  static inline int replica_counter_ = 0;

  // Live replica processes started under `name` (read from /proc).
  static int replica_processes(const std::string& name) {
    int n = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      std::ifstream in(entry.path() / "cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (char& c : cmdline)
        if (c == '\0') c = ' ';
      if (cmdline.find(" replica --name " + name + " ") != std::string::npos) ++n;
    }
    return n;
  }

  const AgentRegistration* registration(const std::string& job) const {
    for (const auto& r : rec_.registered)
      if (r.job_id == job) return &r;
    return nullptr;
  }

  bool registered(const std::string& job) {
    return pump([&] { return registration(job) != nullptr; });
  }

  bool refused_with(const std::string& prefix, std::size_t before) {
    return pump([&] {
      for (std::size_t i = before; i < rec_.refusals.size(); ++i)
        if (rec_.refusals[i].rfind(prefix, 0) == 0) return true;
      return false;
    });
  }

  // A raw client: reads the challenge, the test writes what it wants.
  struct Raw {
    tcp::socket socket;
    std::string nonce;
  };
  Raw raw_connect() {
    Raw r{tcp::socket(io_), ""};
    r.socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
    std::string got;
    pump([&] {
      boost::system::error_code ec;
      while (r.socket.available(ec) > 0 && !ec) {
        char c;
        asio::read(r.socket, asio::buffer(&c, 1));
        if (c == '\n') return true;
        got.push_back(c);
      }
      return false;
    });
    auto ch = parse_challenge(parse_line(got).value);
    EXPECT_TRUE(ch) << got;
    r.nonce = ch.value.nonce;
    return r;
  }
  void raw_send(Raw& r, const std::string& bytes) { asio::write(r.socket, asio::buffer(bytes)); }

  std::string hello_line(const Raw& r, const std::string& job, const std::string& secret) {
    return encode_line(to_message(Hello{job, "run-1", handshake_hmac(secret, r.nonce, job)}));
  }

  const std::string secret_ = "per-run-secret-0123456789abcdef";
  std::string dir_, secret_file_;
  asio::io_context io_;
  Recorder rec_;
  std::unique_ptr<AgentServer> server_;
  std::vector<pid_t> agents_;
  std::vector<std::string> logs_;
};

TEST_F(AgentServerTest, FixedAgentRegistersVramOfItsOneA100) {
  spawn_agent("1000", "fixed");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  const auto& r = *registration("1000");
  EXPECT_EQ(r.resources.value("VRAM_MB", 0.0), 40960.0);
  EXPECT_EQ(r.resources.value("slurm_job_id:1000", 0.0), 1.0);
  EXPECT_EQ(r.resources.value("CPU", 0.0), 8.0);
  EXPECT_EQ(r.resources.value("GPU", 0.0), 1.0);
  EXPECT_EQ(r.cpus, 8);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(r.devices[0].total_mb, 40960);
  EXPECT_EQ(r.notice, "");
  EXPECT_EQ(r.script_resources, "{\"slurm_job_id:1000\": 1}");
  EXPECT_EQ(r.ip, "127.0.0.1");
  EXPECT_EQ(r.pid, agents_.at(0));
  EXPECT_EQ(server_->connected_jobs(), std::vector<std::string>{"1000"});
}

TEST_F(AgentServerTest, LegacyAgentAdvertisesNoVram) {
  spawn_agent("1000", "legacy");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  const auto& r = *registration("1000");
  EXPECT_FALSE(r.resources.contains("VRAM_MB"));
  EXPECT_EQ(r.resources.value("slurm_job_id:1000", 0.0), 1.0);
  EXPECT_EQ(r.devices.size(), 1u);  // detected all the same
}

TEST_F(AgentServerTest, FailingNvidiaSmiGivesANoticeAndNoVram) {
  set_smi(kFailingSmi);
  spawn_agent("1000", "fixed");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  const auto& r = *registration("1000");
  EXPECT_FALSE(r.resources.contains("VRAM_MB"));
  EXPECT_NE(r.notice.find("could not detect GPU memory"), std::string::npos) << r.notice;
  EXPECT_TRUE(r.devices.empty());
  EXPECT_NE(agent_log(0).find("Notice: could not detect GPU memory"), std::string::npos) << agent_log(0);
}

TEST_F(AgentServerTest, HeartbeatCarriesDriverObservedMemory) {
  spawn_agent("1000");
  ASSERT_TRUE(pump([&] {
    for (const auto& [job, devs] : rec_.heartbeats)
      if (job == "1000" && !devs.empty()) return true;
    return false;
  })) << agent_log(0);
  const auto& devs = rec_.heartbeats.back().second;
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].index, 0);
  EXPECT_EQ(devs[0].used_bytes, 1234LL << 20);
}

TEST_F(AgentServerTest, ReplicasStartAndAnswerCallsWithoutMakingUpNumbers) {
  spawn_agent("1000");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"probe", "probe#1", 8000, 0, "probe"}));
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", "echo#1", 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return rec_.started.size() >= 2; }, 30000ms)) << agent_log(0);
  for (const auto& [job, replica, ok, error] : rec_.started) {
    EXPECT_EQ(job, "1000");
    EXPECT_TRUE(ok) << replica << ": " << error;
  }
  // A name already in use is refused by the agent.
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", "echo#1", 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return rec_.started.size() >= 3; }));
  EXPECT_FALSE(std::get<2>(rec_.started[2]));
  EXPECT_NE(std::get<3>(rec_.started[2]).find("already exists"), std::string::npos);

  ASSERT_TRUE(server_->call("1000", "probe#1", 7, Json{{"n", 256}, {"iterations", 1}}));
  ASSERT_TRUE(server_->call("1000", "echo#1", 8, Json{{"x", 1}}));
  ASSERT_TRUE(server_->call("1000", "nobody", 9, Json::object()));
  ASSERT_TRUE(pump([&] { return rec_.results.size() >= 3; }, 60000ms)) << agent_log(0);
  std::map<std::uint64_t, Json> by_id(rec_.results.begin(), rec_.results.end());
  const Json& probe = by_id.at(7);
  if (probe.contains("error")) {
    // No device here: the probe says so and reports no figure.
    EXPECT_NE(probe["error"].get<std::string>().find("no CUDA device"), std::string::npos) << probe;
    EXPECT_FALSE(probe.contains("matmul_tflops"));
  } else {
    EXPECT_GT(probe["matmul_tflops"].get<double>(), 0.0) << probe;
    EXPECT_EQ(probe["n"], 256);
  }
  EXPECT_EQ(by_id.at(8), (Json{{"replica", "echo#1"}, {"payload", {{"x", 1}}}}));
  EXPECT_EQ(by_id.at(9), (Json{{"error", "no replica nobody on this agent"}}));

  ASSERT_TRUE(server_->stop_replica("1000", "echo#1"));
  ASSERT_TRUE(server_->call("1000", "echo#1", 10, Json::object()));
  ASSERT_TRUE(pump([&] { return rec_.results.size() >= 4; }));
  EXPECT_TRUE(rec_.results.back().second.contains("error")) << rec_.results.back().second;
}

TEST_F(AgentServerTest, DrainStopsReplicasAndTheAgentExitsZero) {
  pid_t pid = spawn_agent("1000");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 1);
  ASSERT_TRUE(server_->drain("1000"));
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0)) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 0);  // stopped before the agent left
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].job, "1000");
  EXPECT_EQ(rec_.gone[0].reason, "drained");
  EXPECT_FALSE(server_->drain("1000"));  // no longer connected
  EXPECT_TRUE(server_->connected_jobs().empty());
}

// SIGTERM (a time limit, a preemption, someone's scancel) stops the
// replicas as a drain does, and the head is told why the agent left.
TEST_F(AgentServerTest, SigtermIsADrainTooAndItsReasonReachesTheHead) {
  pid_t pid = spawn_agent("1000");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0)) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 0);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason, "goodbye: SIGTERM");
}

TEST_F(AgentServerTest, KilledAgentIsGoneAndItsReplicasLeave) {
  pid_t pid = spawn_agent("1000");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 1);
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].job, "1000");
  EXPECT_EQ(rec_.gone[0].reason, "connection closed");
  // The replica's stdin closed with the agent: it exits by itself.
  EXPECT_TRUE(pump([&] { return replica_processes(name) == 0; }, 5000ms));
}

TEST_F(AgentServerTest, SilentAgentTimesOut) {
  AgentServerConfig cfg;
  cfg.secret = secret_;
  cfg.heartbeat_timeout = 600ms;
  make_server(cfg);
  pid_t pid = spawn_agent("1000");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ::kill(pid, SIGSTOP);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason, "heartbeat timeout");
}

// A head that goes silent without closing the connection (here: one that
// never pings): the agent stops its replicas and exits by itself after
// --head-timeout, freeing the GPU; with the pings it stays.
// An agent with a 1 s --head-timeout registered with a head that pings
// every `ping` (0: never).
#define START_AGENT_PINGED_EVERY(ping)                                \
  AgentServerConfig cfg;                                              \
  cfg.secret = secret_;                                               \
  cfg.ping_interval = ping;                                           \
  make_server(cfg);                                                   \
  pid_t pid = spawn_agent("1000", "fixed", {"--head-timeout", "1"}); \
  ASSERT_TRUE(registered("1000")) << agent_log(0)

TEST_F(AgentServerTest, AnAgentWhoseHeadIsSilentLeavesByItself) {
  START_AGENT_PINGED_EVERY(0ms);
  const std::string name = unique_replica_name();
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1)) << agent_log(0);
  EXPECT_NE(agent_log(0).find("nothing from the head at 127.0.0.1:"), std::string::npos) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 0);
}

TEST_F(AgentServerTest, ThePingsKeepAnAgentWithAShortHeadTimeout) {
  START_AGENT_PINGED_EVERY(200ms);
  const auto until = std::chrono::steady_clock::now() + 3s;
  pump([&] { return std::chrono::steady_clock::now() > until; });
  EXPECT_TRUE(rec_.gone.empty()) << agent_log(0);
  EXPECT_EQ(::kill(pid, 0), 0) << "the agent left although its head pinged it";
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0));
}

TEST_F(AgentServerTest, AgentLeavesWithStatusOneWhenTheHeadGoes) {
  pid_t pid = spawn_agent("1000");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  server_->close();
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_NE(agent_log(0).find("lost the connection to the head"), std::string::npos) << agent_log(0);
  EXPECT_TRUE(rec_.gone.empty());  // no listener calls after close()
}

TEST_F(AgentServerTest, UnreachableHeadIsOneLineAndStatusOne) {
  // A port nobody listens on: bind one, note it, close it.
  unsigned short port = 0;
  {
    tcp::acceptor a(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = a.local_endpoint().port();
  }
  pid_t pid = spawn({VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:" + std::to_string(port), "--secret-file",
                     secret_file_, "--run-id", "run-1", "--job-id", "1000", "--detect", "nvidia-smi",
                     "--connect-timeout", "1"});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 450ms);  // it retried (every 0.5 s) before giving up
  EXPECT_NE(agent_log(0).find("cannot reach the head at 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << agent_log(0);
}

TEST_F(AgentServerTest, WrongSecretIsRefusedAndTheAgentExitsOne) {
  secret_file_ = write(dir_ + "/wrong", "not-the-run-secret-at-all\n", 0600);
  pid_t pid = spawn_agent("1000");
  ASSERT_TRUE(refused_with("wrong HMAC", 0)) << agent_log(0);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_NE(agent_log(0).find("refused"), std::string::npos) << agent_log(0);
  EXPECT_TRUE(rec_.registered.empty());
}

TEST_F(AgentServerTest, BadConnectionsAreRefusedAndTheServerServesTheNextAgent) {
  {  // oversized line
    auto r = raw_connect();
    raw_send(r, std::string(70000, 'x'));
    ASSERT_TRUE(refused_with("message over 65536 bytes", 0));
  }
  {  // malformed JSON
    auto r = raw_connect();
    raw_send(r, "{\"type\": \"hello\", \n");
    ASSERT_TRUE(refused_with("malformed message: not JSON", 0));
  }
  {  // registering before hello
    auto r = raw_connect();
    raw_send(r, encode_line(to_message(AgentRegistration{})));
    ASSERT_TRUE(refused_with("message before authentication", 0));
  }
  {  // a right proof for a job of another run
    auto r = raw_connect();
    raw_send(r, hello_line(r, "4242", secret_));
    ASSERT_TRUE(refused_with("unknown job 4242", 0));
  }
  {  // no hello in time
    AgentServerConfig cfg;
    cfg.secret = secret_;
    cfg.auth_timeout = 300ms;
    make_server(cfg);
    auto r = raw_connect();
    ASSERT_TRUE(refused_with("no registration within 300 ms", 0));
  }
  // A forged registered-phase message from a real agent's job cannot get in
  // on a second connection.
  spawn_agent("1001");
  ASSERT_TRUE(registered("1001")) << agent_log(0);
  {
    auto r = raw_connect();
    raw_send(r, hello_line(r, "1001", secret_));
    ASSERT_TRUE(refused_with("job already connected: 1001", 0));
  }
  EXPECT_TRUE(rec_.gone.empty()) << rec_.gone[0].reason;  // the first agent is unharmed
  // And a good agent still registers afterwards.
  spawn_agent("1002");
  ASSERT_TRUE(registered("1002")) << agent_log(1);
  EXPECT_EQ(rec_.refusals.size(), 6u);
}

TEST_F(AgentServerTest, RegisteredAgentSendingGarbageIsGone) {
  auto r = raw_connect();
  raw_send(r, hello_line(r, "1000", secret_));
  AgentRegistration reg;
  reg.job_id = "1000";
  raw_send(r, encode_line(to_message(reg)));
  ASSERT_TRUE(registered("1000"));
  raw_send(r, "{\"type\":\"heartbeat\",\"devices\":\"many\"}\n");
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason,
            "protocol error: malformed message: field 'devices' of heartbeat: expected an array");
  EXPECT_EQ(rec_.refusals.size(), 1u);
}

TEST_F(AgentServerTest, AgentArgumentsAreChecked) {
  // No job id anywhere: status 1.
  pid_t pid = spawn({VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:1", "--secret-file", secret_file_, "--run-id", "r"});
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_NE(agent_log(0).find("no job id"), std::string::npos) << agent_log(0);
  // A secret others can read: status 2, naming the file.
  ::chmod(secret_file_.c_str(), 0644);
  pid = spawn_agent("1000");
  EXPECT_EQ(wait_exit(pid), std::optional<int>(2));
  EXPECT_NE(agent_log(1).find(secret_file_), std::string::npos) << agent_log(1);
  EXPECT_TRUE(rec_.registered.empty());
}

}  // namespace
}  // namespace vramsim::slurm
