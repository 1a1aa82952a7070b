#pragma once
// Every request's path (control/router.hpp, RequestRecords): kept in the
// RunResult for Python, and written as --requests-csv: app, arrival, start,
// end, replica, cold, outcome, one row per request in arrival order.
#include <string>

#include "observers/run_observer.hpp"

namespace vramsim {

// The CSV's columns (a header line with its newline).
inline constexpr const char* kRequestsCsvHeader = "app,arrival_s,start_s,end_s,replica,cold,outcome\n";
void write_requests_csv(const RequestRecords& records, const std::string& path);  // throws OutputError

class RequestsCsv final : public RunObserver {
 public:
  // `path` empty: kept only.
  explicit RequestsCsv(std::string path) : path_(std::move(path)) {}
  void prepare() override;
  void close(SimTime end) override;
  void measure(RunResult& result) override;

 private:
  std::string path_;
  RequestRecords records_;
};

}  // namespace vramsim
