#include "backends/cuda/gpu_inventory.hpp"

#include <cctype>
#include <charconv>

#include "backends/cuda/json_line.hpp"

namespace vramsim::gpu {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.push_back(trim(s.substr(start, pos == std::string_view::npos ? pos : pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

Error malformed(std::size_t line_no, std::string_view line, const std::string& why) {
  return Error{ErrorKind::DetectionFailed, "nvidia-smi output line " + std::to_string(line_no) +
                                               ": " + why + ": '" + std::string(line) + "'"};
}

}  // namespace

Expected<GpuInventory> parse_nvidia_smi_csv(std::string_view csv) {
  GpuInventory inventory;
  inventory.source = "nvidia-smi";
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start <= csv.size()) {
    const auto end = csv.find('\n', start);
    const auto raw = csv.substr(start, end == std::string_view::npos ? end : end - start);
    start = end == std::string_view::npos ? csv.size() + 1 : end + 1;
    ++line_no;
    const auto line = trim(raw);  // also drops a trailing '\r'
    if (line.empty()) continue;

    const auto fields = split(line, ',');
    if (fields.size() != 3) {
      return malformed(line_no, line,
                       "expected 3 comma-separated fields, got " + std::to_string(fields.size()));
    }
    GpuInfo info;
    info.index = static_cast<int>(inventory.devices.size());
    info.name = std::string(fields[0]);
    if (info.name.empty()) return malformed(line_no, line, "empty GPU name");

    const auto mem = fields[1];
    std::int64_t total = 0;
    const auto [ptr, ec] = std::from_chars(mem.data(), mem.data() + mem.size(), total);
    if (ec != std::errc() || ptr != mem.data() + mem.size() || total < 0) {
      return malformed(line_no, line, "memory.total is not a whole number of MiB");
    }
    info.total_mb = total;

    const auto mig = fields[2];
    if (mig == "Enabled") {
      info.mig_enabled = true;
    } else if (mig == "Disabled") {
      info.mig_enabled = false;
    } else if (mig == "[N/A]" || mig == "N/A") {
      info.mig_enabled = std::nullopt;
    } else {
      return malformed(line_no, line, "mig.mode.current is not Enabled, Disabled or [N/A]");
    }
    inventory.devices.push_back(std::move(info));
  }
  return inventory;
}

std::string inventory_json(const GpuInventory& inventory) {
  std::string devices = "[";
  for (const auto& d : inventory.devices) {
    if (devices.size() > 1) devices += ",";
    JsonLine dj;
    dj.integer("index", d.index)
        .str("name", d.name)
        .integer("total_mb", d.total_mb)
        .integer("free_mb", d.free_mb)
        .boolean("mig_enabled", d.mig_enabled);
    devices += dj.done();
  }
  devices += "]";
  return JsonLine().str("source", inventory.source).raw("devices", devices).done();
}

}  // namespace vramsim::gpu
