#include "runner/run_outputs.hpp"

#include <charconv>
#include <cmath>

#include "engine/output_file.hpp"
#include "runner/sweep.hpp"

namespace vramsim {

Json run_summary(const RunResult& r) {
  Json j = Json::object();
  j["scenario"] = r.scenario;
  j["policies"] = r.policies;
  j["seed"] = r.seed;
  r.metrics.for_each([&](const char* name, std::optional<double> v) { j[name] = v ? Json(*v) : Json(); });
  std::size_t held = 0;
  for (const auto& e : r.expectations) held += e.held ? 1 : 0;
  j["expectations_held"] = held;
  j["expectations"] = r.expectations.size();
  j["all_held"] = r.all_held();
  return j;
}

std::string summary_json_text(const Json& summary) {
  std::string out = "{\n";
  bool first = true;
  for (auto it = summary.begin(); it != summary.end(); ++it) {
    out += first ? "  " : ",\n  ";
    first = false;
    out += Json(it.key()).dump() + ": ";
    const Json& v = it.value();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      out += std::isinf(d) ? (d > 0 ? "1e999" : "-1e999") : std::isnan(d) ? "null" : csv_number(d);
    } else {
      out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
  }
  return out + "\n}\n";
}

namespace {
void append_seconds(std::string& row, SimTime us) {
  if (us < 0) return;
  char buf[32];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(us) / 1e6);
  if (ec == std::errc()) row.append(buf, p);
}
}  // namespace

void write_requests_csv(const RequestRecords& rec, const std::string& path) {
  OutputFile out(path);
  out.write(kRequestsCsvHeader);
  std::vector<std::string> apps;
  for (const auto& a : rec.app_names) apps.push_back(csv_field(a));
  std::string buf;
  for (std::size_t i = 0; i < rec.size(); ++i) {
    buf += apps[rec.app[i]];
    buf += ',';
    append_seconds(buf, rec.arrival[i]);
    buf += ',';
    append_seconds(buf, rec.start[i]);
    buf += ',';
    append_seconds(buf, rec.end[i]);
    buf += ',';
    if (rec.replica[i] >= 0) buf += std::to_string(rec.replica[i]);
    buf += rec.cold[i] ? ",1," : ",0,";
    buf += to_string(rec.outcome[i]);
    buf += '\n';
    if (buf.size() >= (1u << 20)) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf);
  out.close();
}

}  // namespace vramsim
