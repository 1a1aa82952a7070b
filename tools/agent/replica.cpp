#include "tools/agent/replica.hpp"

#include <iostream>
#include <string>

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

}  // namespace

int run_replica(const ReplicaOptions& opt) {
  const HeldMemory held = hold_memory(opt.gpu_memory_mb);
  emit(Json{{"type", "ready"}, {"ok", held.ok}, {"memory", held.memory}, {"bytes", held.bytes},
            {"error", held.error}});
  if (!held.ok) return 1;
  std::string line;
  while (std::getline(std::cin, line)) {
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
    Json result = answer(opt, m.contains("payload") ? m["payload"] : Json());
    emit(Json{{"type", "result"}, {"call_id", m["call_id"]}, {"result", std::move(result)}});
  }
  return 0;  // stdin closed: the agent is gone or stopped us
}

}  // namespace vramsim::agent
