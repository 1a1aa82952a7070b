#include "observers/requests_csv.hpp"

#include <algorithm>
#include <charconv>

#include "engine/csv.hpp"
#include "engine/output_file.hpp"

namespace vramsim {

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

namespace {

// The arrivals a run will likely see, for the records' room: each traffic's
// max_requests or trace length, else its peak rate over the horizon; at most
// 2^22 (about 160 MB of address space, touched only as records land; past
// it the columns grow by doubling).
std::size_t expected_arrivals(const Scenario& sc) {
  constexpr double kCap = 4194304;
  double total = 0;
  for (const auto& [app, t] : sc.traffic) {
    double n = t.process == TrafficSpec::Process::Trace ? static_cast<double>(t.requests.size())
                                                        : t.peak_rate() * to_seconds(sc.horizon);
    if (t.max_requests) n = std::min(n, static_cast<double>(*t.max_requests));
    total += std::min(n, kCap);
  }
  return static_cast<std::size_t>(std::min(total, kCap));
}

}  // namespace

void RequestsCsv::prepare() { ctx().control.keep_request_records(expected_arrivals(ctx().scenario)); }

void RequestsCsv::close(SimTime) {
  // Settled when the serving outcomes were taken (before run_ended).
  records_ = ctx().control.take_request_records();
  if (!path_.empty()) write_requests_csv(records_, path_);
}

void RequestsCsv::measure(RunResult& result) { result.requests = std::move(records_); }

}  // namespace vramsim
