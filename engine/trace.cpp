#include "engine/trace.hpp"

#include <stdexcept>

namespace vramsim {

Json TraceEvent::to_json() const {
  Json j = Json::object();
  j["t"] = t;
  j["kind"] = kind;
  for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

const Json& TraceEvent::operator[](const std::string& key) const {
  static const Json null_json;
  auto it = fields.find(key);
  return it == fields.end() ? null_json : *it;
}

JsonLinesSink::JsonLinesSink(const std::string& path) : file_(std::make_unique<OutputFile>(path)) {}

void JsonLinesSink::write(const TraceEvent& ev) {
  std::string line = ev.to_json().dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  if (file_) file_->write(line);
  else *out_ << line;
}

void JsonLinesSink::flush() {
  if (file_) file_->flush();
  else if (!out_->flush()) throw std::runtime_error("writing the trace failed");
}

void JsonLinesSink::close() {
  if (file_) file_->close();
  else flush();
}

std::vector<TraceEvent> MemorySink::of_kind(const std::string& kind) const {
  std::vector<TraceEvent> out;
  for (const auto& e : events)
    if (e.kind == kind) out.push_back(e);
  return out;
}

void TraceRecorder::record(SimTime t, std::string kind, Json fields) {
  // "t" and "kind" head every line; a field of that name would overwrite them.
  if (fields.contains("t") || fields.contains("kind"))
    throw std::logic_error("trace event '" + kind + "' uses a reserved field name (t or kind)");
  TraceEvent ev{t, std::move(kind), std::move(fields)};
  ++count_;
  for (auto& s : sinks_) s->write(ev);
}

void TraceRecorder::flush() {
  for (auto& s : sinks_) s->flush();
}

void TraceRecorder::close() {
  for (auto& s : sinks_) s->close();
}

}  // namespace vramsim
