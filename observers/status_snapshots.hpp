#pragma once
// Status snapshots taken during a run: at --status-at times, by a scenario's
// `status` actions (their `expect` checked at once) and for status-line
// expectations. Each is traced (`status`), its CLI lines kept for the
// printed summary, and the whole list written as --status-json and kept for
// Python. docs/status.md.
#include <string>
#include <vector>

#include "observers/run_observer.hpp"

namespace vramsim {

class StatusSnapshots final : public RunObserver {
 public:
  // `json_path`: where --status-json writes the list ("" none); `keep`: in
  // RunResult::status_snapshots.
  StatusSnapshots(std::vector<Duration> at, std::string json_path, bool keep)
      : at_(std::move(at)), json_path_(std::move(json_path)), keep_(keep) {}

  bool reads_status() const override;
  void start() override;
  void on_action(const ScenarioAction& a) override;
  void close(SimTime end) override;
  void conclude(RunResult& result) override;

  // A snapshot now: its lines kept for the summary, traced, and `expect`
  // (JSON path -> value) checked into the result's expectations; returns
  // the state.
  Json take(const std::string& source, const Json& expect, const std::string& path);

 private:
  std::vector<Duration> at_;
  std::string json_path_;
  bool keep_ = false;
  Json snapshots_ = Json::array();
};

}  // namespace vramsim
