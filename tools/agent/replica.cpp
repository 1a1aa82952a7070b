#include "tools/agent/replica.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "backends/cuda/matmul_probe.hpp"
#include "backends/cuda/probe_options.hpp"
#include "backends/slurm/protocol.hpp"
#include "tools/agent/device_memory.hpp"

namespace vramsim::agent {

namespace {

// Probe options from a call's payload; absent fields keep the defaults.
gpu::ProbeOptions probe_options(const Json& payload, std::string& error) {
  gpu::ProbeOptions o;
  if (!payload.is_object()) return o;
  auto read = [&](const char* key, auto& field) {
    if (!payload.contains(key)) return;
    const auto& v = payload[key];
    if (!v.is_number_integer()) {
      error = std::string("payload field '") + key + "': expected an integer";
      return;
    }
    field = v.get<std::decay_t<decltype(field)>>();
  };
  read("n", o.n);
  read("iterations", o.iterations);
  read("warmup", o.warmup);
  read("check_n", o.check_n);
  return o;
}

Json answer(const ReplicaOptions& opt, const Json& payload) {
  if (opt.kind != "probe") return Json{{"replica", opt.name}, {"payload", payload}};
  std::string error;
  auto options = probe_options(payload, error);
  if (!error.empty()) return Json{{"error", error}};
  if (auto bad = gpu::validate(options)) return Json{{"error", bad->message}};
  auto report = gpu::run_matmul_probe(options);
  if (!report) return Json{{"error", report.error().message}};
  return gpu::to_json(*report);
}

void emit(const Json& j) {
  std::cout << slurm::encode_line(j) << std::flush;
}

// A serving request's work on a plain replica: {"sleep_us": N}, N in
// [0, 10^12]. Its answer goes out once the time passed, while other calls
// go on: the replica holds as many at once as the router sends it.
std::optional<std::int64_t> sleep_of(const ReplicaOptions& opt, const Json& payload) {
  if (opt.kind != "plain" || !payload.is_object() || !payload.contains("sleep_us")) return std::nullopt;
  const Json& v = payload["sleep_us"];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1000000000000LL)
    return std::nullopt;
  return v.get<std::int64_t>();
}

}  // namespace

int run_replica(const ReplicaOptions& opt) {
  using Clock = std::chrono::steady_clock;
  const HeldMemory held = hold_memory(opt.gpu_memory_mb);
  emit(Json{{"type", "ready"}, {"ok", held.ok}, {"memory", held.memory}, {"bytes", held.bytes},
            {"error", held.error}});
  if (!held.ok) return 1;
  // Sleeping requests by when they answer.
  std::multimap<Clock::time_point, Json> sleeping;
  std::string buffer;
  bool open = true;
  while (open || !sleeping.empty()) {
    const auto now = Clock::now();
    while (!sleeping.empty() && sleeping.begin()->first <= now) {
      emit(sleeping.begin()->second);
      sleeping.erase(sleeping.begin());
    }
    if (!open) {
      if (!sleeping.empty()) std::this_thread::sleep_until(sleeping.begin()->first);
      continue;
    }
    int timeout_ms = -1;
    if (!sleeping.empty())
      timeout_ms = static_cast<int>(std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(sleeping.begin()->first - now).count() + 1));
    pollfd p{STDIN_FILENO, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;  // stdin closed: the agent is gone or stopped us; answer what sleeps, then exit
      continue;
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
      const std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      auto parsed = slurm::parse_line(line);
      if (!parsed) {
        std::cerr << "vramsim-agent replica " << opt.name << ": " << parsed.error << std::endl;
        continue;
      }
      const Json& m = parsed.value;
      if (slurm::message_type(m) != "call" || !m.contains("call_id") || !m["call_id"].is_number_unsigned()) {
        std::cerr << "vramsim-agent replica " << opt.name << ": ignored a message that is not a call" << std::endl;
        continue;
      }
      const Json payload = m.contains("payload") ? m["payload"] : Json();
      if (auto us = sleep_of(opt, payload)) {
        sleeping.emplace(Clock::now() + std::chrono::microseconds(*us),
                         Json{{"type", "result"}, {"call_id", m["call_id"]},
                              {"result", {{"replica", opt.name}, {"slept_us", *us}}}});
        continue;
      }
      Json result = answer(opt, payload);
      emit(Json{{"type", "result"}, {"call_id", m["call_id"]}, {"result", std::move(result)}});
    }
  }
  return 0;
}

}  // namespace vramsim::agent
