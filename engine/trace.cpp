#include "engine/trace.hpp"

#include <stdexcept>

namespace vramsim {

Json TraceEvent::to_json() const {
  Json j = Json::object();
  j["t"] = t;
  j["kind"] = std::string(name(kind));
  for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

const Json& TraceEvent::operator[](const std::string& key) const {
  static const Json null_json;
  auto it = fields.find(key);
  return it == fields.end() ? null_json : *it;
}

JsonLinesSink::JsonLinesSink(const std::string& path) : file_(std::make_unique<OutputFile>(path)) {}

JsonLinesSink::~JsonLinesSink() {
  // Best effort: flush() and close() are where failures are reported.
  try {
    if (!buf_.empty()) drain();
    if (!file_) out_->flush();
  } catch (const std::exception&) {
  }
}

void JsonLinesSink::write(const TraceEvent& ev) {
  constexpr auto replace = Json::error_handler_t::replace;
  // The same bytes as ev.to_json().dump(), without copying the fields: "t"
  // and "kind" first, then the fields' own object minus its opening brace.
  if (!ev.fields.is_null() && !ev.fields.is_object()) {
    buf_ += ev.to_json().dump(-1, ' ', false, replace);
  } else {
    buf_ += "{\"t\":";
    buf_ += std::to_string(ev.t);
    // A kind's name is a plain identifier: its JSON string is the name quoted.
    buf_ += ",\"kind\":\"";
    buf_ += name(ev.kind);
    buf_ += '"';
    if (ev.fields.is_object() && !ev.fields.empty()) {
      const std::string fields = ev.fields.dump(-1, ' ', false, replace);
      buf_ += ',';
      buf_.append(fields, 1, std::string::npos);
    } else {
      buf_ += '}';  // null or {}: no fields
    }
  }
  buf_ += '\n';
  if (buf_.size() >= kBufferBytes) drain();
}

void JsonLinesSink::drain() {
  if (file_) {
    file_->write(buf_);
    buf_.clear();
    return;
  }
  out_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
  if (!*out_) throw std::runtime_error("writing the trace failed");
}

void JsonLinesSink::flush() {
  drain();
  if (file_) file_->flush();
  else if (!out_->flush()) throw std::runtime_error("writing the trace failed");
}

void JsonLinesSink::close() {
  drain();
  if (file_) file_->close();
  else flush();
}

std::vector<TraceEvent> MemorySink::of_kind(TraceKind kind) const {
  std::vector<TraceEvent> out;
  for (const auto& e : events)
    if (e.kind == kind) out.push_back(e);
  return out;
}

void TraceRecorder::record(SimTime t, TraceKind kind, Json fields) {
  // A fieldless event is an empty object, as it reads back from a trace file,
  // so that patterns match it alike in a run and in a trace.
  if (fields.is_null()) fields = Json::object();
  // "t" and "kind" head every line; a field of that name would overwrite them.
  if (fields.is_object())
    for (const auto& field : fields.get_ref<const Json::object_t&>()) {
      if (field.first == "t" || field.first == "kind")
        throw std::logic_error("trace event '" + std::string(name(kind)) + "' uses a reserved field name (t or kind)");
#ifdef VRAMSIM_TRACE_CHECKS
      if (!trace_kind_has_field(kind, field.first))
        throw std::logic_error("trace event '" + std::string(name(kind)) + "' has field '" + field.first +
                               "', which engine/trace_kinds.hpp does not declare for it");
#endif
    }
  TraceEvent ev{t, kind, std::move(fields)};
  ++count_;
  if (sinks_.empty()) return;
  for (std::size_t i = 0; i + 1 < sinks_.size(); ++i) sinks_[i]->write(ev);
  sinks_.back()->keep(std::move(ev));
}

void TraceRecorder::record(SimTime t, TraceKind kind, std::initializer_list<TraceField> fields) {
  Json object = Json::object();
  auto& map = object.get_ref<Json::object_t&>();
  map.reserve(fields.size());
  // emplace keeps the first of two fields of one name, as a braced Json does.
  for (const TraceField& f : fields) map.emplace(std::string(f.name), std::move(f.value));
  record(t, kind, std::move(object));
}

void TraceRecorder::flush() {
  for (auto& s : sinks_) s->flush();
}

void TraceRecorder::close() {
  for (auto& s : sinks_) s->close();
}

}  // namespace vramsim
