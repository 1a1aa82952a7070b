#include "observers/summary_json.hpp"

#include <cmath>

#include "engine/csv.hpp"

namespace vramsim {

Json run_summary(const RunResult& r) {
  Json j = Json::object();
  j["scenario"] = r.scenario;
  j["policies"] = r.policies;
  j["seed"] = r.seed;
  r.metrics.for_each([&](std::string_view name, std::optional<double> v) {
    j[std::string(name)] = v ? Json(*v) : Json();
  });
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

void SummaryJson::publish(const RunResult& result) {
  file_.write(summary_json_text(run_summary(result)));
  file_.commit();
}

}  // namespace vramsim
