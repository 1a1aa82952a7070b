#include "models/status.hpp"

#include "engine/csv.hpp"

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "engine/format.hpp"
#include "models/registry.hpp"

namespace vramsim {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
const char* const kNA = "NA";

// Whole units (MB, bytes) from a fixed-point amount, rounded half away from 0.
std::int64_t whole(Amount a) {
  return a >= 0 ? (a + kAmountScale / 2) / kAmountScale : -((-a + kAmountScale / 2) / kAmountScale);
}

Json optional_bytes(const std::optional<std::int64_t>& v) { return v ? Json(*v) : Json(kNA); }

// Observed total: unknown with a device of unknown size (the dashboard's
// figure missing). A node without GPUs is never asked and reads 0, as
// proxy_actor.py's get_cluster_state writes it (`if total_gpu == 0`).
std::optional<std::int64_t> gpu_memory_total(const Node& n) {
  if (n.devices().empty()) return 0;
  std::int64_t sum = 0;
  for (const auto& d : n.devices()) {
    if (d.total_vram_mb <= 0) return std::nullopt;
    sum += d.total_vram_mb * kMiB;
  }
  return sum;
}

// Observed use as the real status serves it: one value per node, the last
// push of any GPU replica there (last write wins), if it is at most max_age
// old; else "NA" (an idle GPU node, or no live reporter).
// proxy_actor.py:476-490, :612-622, GPU_SAMPLE_STALE_SECONDS :86 @1725d5c.
std::optional<std::int64_t> gpu_memory_used(const Node& n, SimTime now, Duration max_age) {
  if (n.devices().empty()) return 0;
  const auto& r = n.gpu_memory_report;
  if (!r || now - r->at > max_age) return std::nullopt;
  return r->used_bytes;
}

std::string printf_string(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string gib(const Json& bytes) {
  return bytes.is_string() ? bytes.get<std::string>()
                           : printf_string("%.1f", static_cast<double>(bytes.get<std::int64_t>()) / kGiB);
}

struct Rollup {
  Amount total_cpu = 0, used_cpu = 0, total_gpu = 0, used_gpu = 0;
  std::int64_t total_vram_mb = 0, used_vram_mb = 0, total_memory = 0, used_memory = 0;
  // Starts at 0 and adds the numeric node values only, as the real rollup
  // does: "NA" nodes are skipped, so the rollup is never "NA".
  std::int64_t total_gpu_memory = 0, used_gpu_memory = 0;

  static void add(std::int64_t& sum, const std::optional<std::int64_t>& v) {
    if (v) sum += *v;
  }
};

// One node's entry in the status, its figures added to the rollup.
Json node_entry(const Node& n, SimTime now, const StatusOptions& opts, Rollup& r) {
  const ResourceSet& total = n.total();
  auto used = [&](const std::string& k) {
    return total.get_amount(k) - n.available.get_amount(k);
  };
  const Amount cpu_t = total.get_amount(kCPU), cpu_u = used(kCPU);
  const Amount gpu_t = total.get_amount(kGPU), gpu_u = used(kGPU);
  // A node without VRAM_MB reports 0/0: nothing is booked through it.
  const std::int64_t vram_t = whole(total.get_amount(kVramMB)), vram_u = whole(used(kVramMB));
  const std::int64_t mem_t = whole(total.get_amount(kMemory)), mem_u = whole(used(kMemory));
  const auto gmem_t = gpu_memory_total(n);
  const auto gmem_u = gpu_memory_used(n, now, opts.observed_max_age);
  const std::string device = !n.spec.accelerator_type.empty() ? n.spec.accelerator_type
                             : n.devices().empty()           ? std::string()
                                                             : n.devices().front().model;

  Json e = Json::object();
  e["node_ip"] = n.spec.ip;
  e["head"] = n.spec.head;
  e["total_cpu"] = to_double(cpu_t);
  e["used_cpu"] = to_double(cpu_u);
  e["total_gpu"] = to_double(gpu_t);
  e["used_gpu"] = to_double(gpu_u);
  e["total_vram_mb"] = vram_t;
  e["used_vram_mb"] = vram_u;
  e["total_gpu_memory"] = optional_bytes(gmem_t);
  e["used_gpu_memory"] = optional_bytes(gmem_u);
  e["total_memory"] = mem_t;
  e["used_memory"] = mem_u;
  // proxy_actor.py:589-591: "NA" on a node without GPUs, None (null) on a
  // GPU node without an accelerator_type resource.
  e["accelerator_type"] = gpu_t == 0 ? Json(kNA)
                          : n.spec.accelerator_type.empty() ? Json(nullptr)
                                                             : Json(n.spec.accelerator_type);
  e["gpu_device_name"] = device;
  e["slurm_job_id"] = n.spec.slurm_job_id;

  r.total_cpu += cpu_t;
  r.used_cpu += cpu_u;
  r.total_gpu += gpu_t;
  r.used_gpu += gpu_u;
  r.total_vram_mb += vram_t;
  r.used_vram_mb += vram_u;
  Rollup::add(r.total_gpu_memory, gmem_t);
  Rollup::add(r.used_gpu_memory, gmem_u);
  r.total_memory += mem_t;
  r.used_memory += mem_u;
  return e;
}

// The pending demand by kind, as SLURM mode's status lists it.
Json pending_resources(const ClusterState& cluster, const PendingPolicy& policy) {
  Json pending = Json::object();
  std::size_t count = 0;
  for (DemandKind k : {DemandKind::Actor, DemandKind::Job, DemandKind::Task}) {
    Json list = Json::array();
    const RequestList requests = k == DemandKind::Actor
                                     ? policy.actors(cluster.pending_queue(k), cluster.in_creation())
                                     : RequestList::view(cluster.pending_queue(k));
    requests.for_each([&list](const ResourceSet& r) { list.push_back(Json{{"required_resources", r.to_json()}}); });
    count += list.size();
    pending[name(k)] = std::move(list);
  }
  pending["total"] = count;
  return pending;
}

}  // namespace

Json get_cluster_state(const ClusterState& cluster, SimTime now, const StatusOptions& opts) {
  Json nodes = Json::object();
  Rollup r;
  for (const Node* n : cluster.alive_nodes()) {
    if (opts.exclude_head_node && n->spec.head) continue;
    nodes[n->id] = node_entry(*n, now, opts, r);
  }

  Json c = Json::object();
  c["total_cpu"] = to_double(r.total_cpu);
  c["used_cpu"] = to_double(r.used_cpu);
  c["total_gpu"] = to_double(r.total_gpu);
  c["used_gpu"] = to_double(r.used_gpu);
  c["total_vram_mb"] = r.total_vram_mb;
  c["used_vram_mb"] = r.used_vram_mb;
  c["total_gpu_memory"] = r.total_gpu_memory;
  c["used_gpu_memory"] = r.used_gpu_memory;
  c["total_memory"] = r.total_memory;
  c["used_memory"] = r.used_memory;
  if (opts.slurm_mode) {
    static const auto fallback = PolicyRegistry::instance().make<PendingPolicy>(PendingPolicy::kDefault);
    c["pending_resources"] = pending_resources(cluster, opts.pending ? *opts.pending : *fallback);
  }

  Json state = Json::object();
  state["nodes"] = std::move(nodes);
  state["cluster"] = std::move(c);
  return state;
}

namespace {

// The device label as the CLI prints info.get('accelerator_type', '?'): the
// key is always there, so a GPU node without an accelerator_type resource
// prints Python's None.
std::string device_label(const Json& n) {
  const Json& a = n.at("accelerator_type");
  return a.is_string() ? a.get<std::string>() : "None";
}

std::string cpu_part(const Json& n) {
  return printf_string("CPU: %.0f/%.0f", n.at("used_cpu").get<double>(), n.at("total_cpu").get<double>());
}

std::string node_line(const Json& n) {
  std::string line = "  " + n.at("node_ip").get<std::string>() + (n.at("head").get<bool>() ? " [HEAD] " : " [worker] ");
  const double total_gpu = n.at("total_gpu").get<double>();
  if (total_gpu <= 0) return line + cpu_part(n);
  line += device_label(n);
  line += printf_string(" GPU: %.2f/%.0f ", n.at("used_gpu").get<double>(), total_gpu);
  // The booked part only where VRAM_MB is advertised: a 0/0 would read as a
  // node with nothing booked rather than one that books nothing.
  const auto vram_t = n.at("total_vram_mb").get<std::int64_t>();
  if (vram_t > 0)
    line += printf_string("booked: %lld/%lld MB  ", static_cast<long long>(n.at("used_vram_mb").get<std::int64_t>()),
                          static_cast<long long>(vram_t));
  return line + "VRAM: " + gib(n.at("used_gpu_memory")) + "/" + gib(n.at("total_gpu_memory")) + " GiB  " + cpu_part(n);
}

}  // namespace

std::vector<std::string> format_status_lines(const Json& state) {
  std::vector<std::string> lines;
  for (const auto& [id, n] : state.at("nodes").items()) lines.push_back(node_line(n));
  return lines;
}

std::vector<std::string> format_status_text(const Json& state) {
  const Json& c = state.at("cluster");
  std::vector<std::string> out{
      "",
      printf_string("Cluster: %.0f/%.0f CPUs, %.1f/%.0f GPUs", c.at("used_cpu").get<double>(),
                    c.at("total_cpu").get<double>(), c.at("used_gpu").get<double>(), c.at("total_gpu").get<double>()),
      ""};
  std::vector<std::string> gpu, cpu;
  for (const auto& [id, n] : state.at("nodes").items())
    (n.at("total_gpu").get<double>() > 0 ? gpu : cpu).push_back(node_line(n));
  if (!gpu.empty()) {
    out.push_back("GPU nodes:");
    out.insert(out.end(), gpu.begin(), gpu.end());
  }
  if (!cpu.empty()) {
    out.push_back("");
    out.push_back("CPU-only nodes:");
    out.insert(out.end(), cpu.begin(), cpu.end());
  }
  return out;
}

std::string vram_summary(const Json& state) {
  const Json& c = state.at("cluster");
  const auto total = c.at("total_vram_mb").get<std::int64_t>();
  if (total <= 0) return "VRAM booked: not tracked (no node advertises VRAM_MB)";
  std::string s = printf_string("VRAM booked: %lld/%lld MB",
                                static_cast<long long>(c.at("used_vram_mb").get<std::int64_t>()),
                                static_cast<long long>(total));
  // GPU nodes without VRAM_MB add nothing to the total; say so, so the
  // difference is not taken for room on them.
  int untracked = 0;
  for (const auto& [id, n] : state.at("nodes").items())
    if (n.at("total_gpu").get<double>() > 0 && n.at("total_vram_mb").get<std::int64_t>() <= 0)
      ++untracked;
  if (untracked > 0)
    s += printf_string(" (not tracked on %d GPU node%s without VRAM_MB)", untracked,
                       untracked == 1 ? "" : "s");
  return s;
}

std::string status_csv_header() { return csv_header(status_timeline_columns::all); }

std::vector<std::string> status_csv_rows(const Json& state, SimTime now) {
  std::vector<std::string> rows;
  const std::string t = format_seconds(now);
  for (const auto& [id, n] : state.at("nodes").items())
    rows.push_back(t + "," + csv_field(id) + "," + format_amount(n.at("used_gpu").get<double>()) + "," +
                   std::to_string(n.at("used_vram_mb").get<std::int64_t>()) + "," +
                   std::to_string(n.at("total_vram_mb").get<std::int64_t>()) + "," +
                   format_amount(n.at("used_cpu").get<double>()));
  return rows;
}

}  // namespace vramsim
