#pragma once
// Trace recorder: every state change is one event {t, kind, ...fields}.
// Sinks receive events in the order they were recorded. The event kinds and
// their fields are declared in engine/trace_kinds.hpp and documented in
// docs/trace-format.md.
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/output_file.hpp"
#include "engine/time.hpp"
#include "engine/trace_kinds.hpp"

namespace vramsim {

using Json = nlohmann::ordered_json;

struct TraceEvent {
  SimTime t = 0;
  TraceKind kind = TraceKind::run_started;
  Json fields = Json::object();
  Json to_json() const;  // {"t": <us>, "kind": ..., fields...}
  // Field access for tests and expectations; null when absent.
  const Json& operator[](const std::string& key) const;
};

// A trace event's string field, or "" where it is absent or not a string.
inline std::string string_field(const Json& j) { return j.is_string() ? j.get<std::string>() : ""; }

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void write(const TraceEvent& ev) = 0;
  // The event, for the sink to keep: the recorder hands each event so to its
  // last sink (no copy where that sink stores it). By default, write(ev).
  virtual void keep(TraceEvent&& ev) { write(ev); }
  virtual void flush() {}
  virtual void close() { flush(); }  // the last call; a file sink checks its close
};

// One compact JSON object per line. Lines collect in a buffer that goes out
// in large writes, each checked, so tracing costs little beside the run.
// Strings that are not valid UTF-8 (a file path, say) are written with
// U+FFFD in place of the bad bytes.
class JsonLinesSink final : public TraceSink {
 public:
  explicit JsonLinesSink(std::ostream& out) : out_(&out) {}
  explicit JsonLinesSink(const std::string& path);  // throws OutputError
  ~JsonLinesSink() override;
  void write(const TraceEvent& ev) override;  // throws (OutputError for a file) when a write fails
  void flush() override;                      // the same
  void close() override;

  static constexpr std::size_t kBufferBytes = 1 << 20;

 private:
  void drain();
  std::unique_ptr<OutputFile> file_;
  std::ostream* out_ = nullptr;
  std::string buf_;
};

class MemorySink final : public TraceSink {
 public:
  void write(const TraceEvent& ev) override { events.push_back(ev); }
  void keep(TraceEvent&& ev) override { events.push_back(std::move(ev)); }
  std::vector<TraceEvent> events;
  std::vector<TraceEvent> of_kind(TraceKind kind) const;
};

// One field of an event written in place, {"app", id}. Its value is moved
// into the event (hence mutable: a braced list's elements are const).
struct TraceField {
  TraceField(std::string_view field_name, Json field_value) : name(field_name), value(std::move(field_value)) {}
  std::string_view name;
  mutable Json value;
};

class TraceRecorder {
 public:
  void add_sink(std::shared_ptr<TraceSink> sink) { sinks_.push_back(std::move(sink)); }
  void record(SimTime t, TraceKind kind, Json fields = Json::object());
  // The fields written in place, record(t, TraceKind::x, {{"app", id}, {"node", n}}):
  // the same event as from the Json overload, without the pair arrays and
  // key strings a braced Json builds and takes apart for each field (the
  // language picks this overload for such a list).
  void record(SimTime t, TraceKind kind, std::initializer_list<TraceField> fields);
  void flush();
  void close();  // flushes and closes every sink; throws OutputError
  std::uint64_t count() const { return count_; }

 private:
  std::vector<std::shared_ptr<TraceSink>> sinks_;
  std::uint64_t count_ = 0;
};

}  // namespace vramsim
