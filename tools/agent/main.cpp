// vramsim-agent: the node agent of live mode, started by a worker job's
// sbatch script (docs/live-protocol.md); `vramsim-agent replica ...` is one
// replica process it hosts.
#include <unistd.h>

#include <climits>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include "backends/cuda/gpu_detector.hpp"
#include "backends/slurm/ids.hpp"
#include "backends/slurm/protocol.hpp"
#include "models/advertisement.hpp"
#include "models/registry.hpp"
#include "tools/agent/agent.hpp"
#include "tools/agent/device_memory.hpp"
#include "tools/agent/gpu_facts.hpp"
#include "tools/agent/job_allocation.hpp"
#include "tools/agent/replica.hpp"

namespace {

using namespace vramsim;

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

int replica_main(int argc, char** argv) {
  agent::ReplicaOptions o;
  CLI::App app{"one replica process hosted by vramsim-agent", "vramsim-agent replica"};
  app.add_option("--name", o.name, "replica name")->capture_default_str();
  app.add_option("--gpu-memory-mb", o.gpu_memory_mb, "memory to hold, MiB")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--device", o.device, "device index on the node (-1: none)")->capture_default_str();
  app.add_option("--kind", o.kind, "plain or probe")->check(CLI::IsMember({"plain", "probe"}))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "vramsim-agent replica: " << one_line(e.what()) << std::endl;
    return 2;
  }
  return agent::run_replica(o);
}

std::string self_exe(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
  return argv0;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::int64_t physical_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<std::int64_t>(pages) * size : 0;
}

// The command line.
struct AgentArgs {
  std::string head, secret_file, run_id, job_id, advertisement = "fixed", resources, nvidia_smi = "nvidia-smi",
                                                 detect = "auto";
  int num_cpus = -1, num_gpus = -1;
  double heartbeat = 5.0, connect_timeout = 10.0, head_timeout = 30.0;
  bool block = false;
  // Emulated latencies, for live runs whose traces must line up with a
  // simulation (vramsim live --emulate-boot): the node's boot and
  // registration before connecting, and the batch script's teardown after a
  // drain. SIGTERM ends either wait at once. stay_after_drain: after a
  // drain the job stays until SIGTERM, as BioEngine's batch script does
  // (`ray start --block` outlives a graceful `ray stop`).
  double startup_delay = 0, exit_delay = 0;
  bool stay_after_drain = false;
};

void add_agent_options(CLI::App& app, AgentArgs& a) {
  app.add_option("--head", a.head, "the head's agent server, HOST:PORT")->required();
  app.add_option("--secret-file", a.secret_file, "the run's secret, a file of mode 0600")->required();
  app.add_option("--run-id", a.run_id, "the run id")->required();
  app.add_option("--job-id", a.job_id, "SLURM job id (default: $SLURM_JOB_ID)");
  app.add_option("--advertisement", a.advertisement, "advertisement variant")
      ->check(CLI::IsMember({"legacy", "fixed", "ungated"}))
      ->capture_default_str();
  app.add_option("--num-cpus", a.num_cpus, "advertised CPUs (default: the host's)")->check(CLI::NonNegativeNumber);
  app.add_option("--num-gpus", a.num_gpus, "GPUs allocated to the job (default: detected)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resources", a.resources, "the sbatch script's resource string, reported as is");
  app.add_flag("--block", a.block, "run until drained (always the case)");
  app.add_option("--heartbeat", a.heartbeat, "heartbeat interval, seconds")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--connect-timeout", a.connect_timeout, "give up reaching the head after SECONDS")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--head-timeout", a.head_timeout,
                 "after registration, stop the replicas and exit when the head is silent this many seconds (0: never)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--nvidia-smi", a.nvidia_smi, "nvidia-smi program")->capture_default_str();
  app.add_option("--startup-delay", a.startup_delay, "seconds to wait before connecting (emulated boot)")
      ->check(CLI::Range(0.0, 86400.0));
  auto* exit_delay =
      app.add_option("--exit-delay", a.exit_delay, "seconds to wait after a drain before exiting (emulated teardown)")
          ->check(CLI::Range(0.0, 86400.0));
  app.add_flag("--stay-after-drain", a.stay_after_drain,
               "after a drain keep the job until SIGTERM (scancel), as `ray start --block` does after `ray stop`")
      ->excludes(exit_delay);
  app.add_option("--detect", a.detect, "GPU detection: auto, cuda or nvidia-smi")
      ->check(CLI::IsMember({"auto", "cuda", "nvidia-smi"}))
      ->capture_default_str();
}

// The agent's options from the command line; an exit status (with the
// message said) where one is invalid.
std::optional<int> agent_options(AgentArgs& a, const char* argv0, agent::AgentOptions& o) {
  if (a.job_id.empty()) {
    if (const char* env = std::getenv("SLURM_JOB_ID")) a.job_id = env;
  }
  if (a.job_id.empty()) {
    std::cerr << "vramsim-agent: no job id: pass --job-id or run inside a SLURM job (SLURM_JOB_ID)" << std::endl;
    return 1;
  }
  if (!slurm::valid_id(a.job_id) || !slurm::valid_id(a.run_id)) {
    std::cerr << "vramsim-agent: --job-id and --run-id: expected 1..128 printable ASCII characters, no spaces" << std::endl;
    return 2;
  }
  if (a.detect == "cuda" && !gpu::cuda_built_in()) {
    std::cerr << "vramsim-agent: --detect cuda: this build has no CUDA support" << std::endl;
    return 2;
  }
  const auto colon = a.head.rfind(':');
  try {
    if (colon == std::string::npos || colon == 0) throw std::invalid_argument("no port");
    std::size_t used = 0;
    const int port = std::stoi(a.head.substr(colon + 1), &used);
    if (used != a.head.size() - colon - 1 || port < 1 || port > 65535) throw std::invalid_argument("bad port");
    o.head_host = a.head.substr(0, colon);
    o.head_port = static_cast<unsigned short>(port);
  } catch (const std::exception&) {
    std::cerr << "vramsim-agent: --head: expected HOST:PORT with a port in 1..65535, got '" << a.head << "'"
              << std::endl;
    return 2;
  }
  try {
    o.secret = slurm::read_secret_file(a.secret_file);
  } catch (const std::exception& e) {
    std::cerr << "vramsim-agent: " << e.what() << std::endl;
    return 2;
  }
  o.run_id = a.run_id;
  o.job_id = a.job_id;
  o.heartbeat_s = a.heartbeat;
  o.connect_timeout_s = a.connect_timeout;
  o.head_timeout_s = a.head_timeout;
  o.nvidia_smi = a.nvidia_smi;
  o.self_exe = self_exe(argv0);
  return std::nullopt;
}

// Detection and advertisement: the same models the simulation uses, over
// the job's grant as slurmd set it for the batch script.
slurm::AgentRegistration registration(const AgentArgs& a, agent::AgentOptions& o) {
  const agent::JobAllocation allocation =
      agent::read_job_allocation([](const char* name) { return std::getenv(name); }, a.num_cpus,
                                 static_cast<int>(std::thread::hardware_concurrency()), physical_memory_bytes(),
                                 agent::cgroup_memory_limit());
  o.visible_gpus = allocation.visible_gpus;
  const auto detection = agent::detect_gpus(a.detect, a.nvidia_smi, a.num_gpus, allocation.visible_gpus);
  agent::release_device_contexts();
  const auto policy = PolicyRegistry::instance().make<AdvertisementPolicy>(a.advertisement);
  const Advertisement ad = policy->advertise(a.job_id, detection.facts);
  if (!ad.notice.empty()) {
    std::cerr << "Notice: " << ad.notice;
    if (!detection.error.empty()) std::cerr << " (" << one_line(detection.error) << ")";
    std::cerr << std::endl;
  }
  slurm::AgentRegistration reg;
  reg.job_id = a.job_id;
  reg.hostname = host_name();
  reg.pid = static_cast<int>(::getpid());
  reg.cpus = allocation.cpus;
  reg.memory_bytes = allocation.memory_bytes;
  reg.allocation =
      Json{{"cpus", allocation.cpus_from}, {"memory", allocation.memory_from}, {"gpus", allocation.gpus_from}};
  ResourceSet res = ad.resources;
  res.set(kCPU, reg.cpus);
  res.set(kGPU, detection.facts.gpus);
  res.set(kMemory, static_cast<double>(reg.memory_bytes));
  reg.resources = res.to_json();
  reg.devices = detection.devices;
  reg.notice = ad.notice;
  reg.script_resources = a.resources;
  return reg;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "replica") return replica_main(argc - 1, argv + 1);
  AgentArgs args;
  CLI::App app{"vramsim node agent: registers this node with the live-mode head and hosts replicas",
               "vramsim-agent"};
  add_agent_options(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "vramsim-agent: " << one_line(e.what()) << std::endl;
    return 2;
  }
  agent::AgentOptions o;
  if (const auto code = agent_options(args, argv[0], o)) return *code;
  const slurm::AgentRegistration reg = registration(args, o);

  // Write errors on a closed pipe come back as errors, not as a signal.
  std::signal(SIGPIPE, SIG_IGN);
  if (args.startup_delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(args.startup_delay));
  int code = 0;
  {
    boost::asio::io_context io;
    agent::Agent a(io, o, reg);
    a.start();
    io.run();
    code = a.exit_code();
  }
  if (code == 0 && args.stay_after_drain) {
    std::signal(SIGTERM, SIG_DFL);  // only scancel (or the time limit) ends the job
    for (;;) ::pause();
  }
  if (code == 0 && args.exit_delay > 0) {
    std::signal(SIGTERM, SIG_DFL);  // scancel ends the teardown at once
    std::this_thread::sleep_for(std::chrono::duration<double>(args.exit_delay));
  }
  return code;
}
