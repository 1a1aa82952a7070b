#include "analysis/calibration.hpp"

#include "analysis/phase_samples.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

Calibration calibrate(const std::vector<std::vector<TraceEvent>>& traces, const std::vector<std::string>& names,
                      std::size_t min_samples) {
  Calibration c;
  c.traces = names;
  c.min_samples = min_samples;
  PhaseSamples s;
  std::size_t loaded = 0;
  for (const auto& t : traces) {
    // A run with a background load: its queue waits hold the contention of
    // that load, and a scenario that simulates a load of its own would
    // count it again on top of a wait fitted from them.
    const bool with_load = !t.empty() && t.front().kind == TraceKind::run_started && t.front().fields.contains("background_jobs");
    auto& waits = s.samples["queue_wait"];
    auto& cut = s.censored["queue_wait"];
    const std::size_t waits_before = waits.size(), cut_before = cut.size();
    extract_phase_samples(t, s);
    if (!with_load) continue;
    ++loaded;
    waits.resize(waits_before);  // its other phases stay
    cut.resize(cut_before);
  }
  if (loaded)
    s.notes.push_back("queue_wait: not fitted from " + std::to_string(loaded) +
                      " trace(s) of runs with a background load: their waits hold the partition's contention, "
                      "which a scenario's own load would add again");
  split_runtime_env(s);
  c.notes = s.notes;
  for (const auto& phase : calibrated_phases()) {
    auto it = s.samples.find(phase);
    if (it == s.samples.end() || it->second.empty()) {
      c.unobserved.push_back(phase);
      continue;
    }
    const auto cut = s.censored.find(phase);
    const std::vector<Duration> none;
    const std::vector<Duration>& censored = cut == s.censored.end() ? none : cut->second;
    if (!censored.empty())
      c.notes.push_back(phase + ": " + std::to_string(censored.size()) +
                        " span(s) cut off before they ended (jobs cancelled while queued) taken as right-censored");
    try {
      c.phases.push_back(PhaseFit{phase, fit_latency(it->second, min_samples, censored)});
    } catch (const FitError& e) {
      throw CalibrationError("phase " + phase + ": " + e.what() + " (from " + std::to_string(traces.size()) +
                             " trace(s); give more traces or a lower --min-samples)");
    }
  }
  if (c.phases.empty()) throw CalibrationError("no phase observed in the traces (no worker job started)");
  return c;
}

Json latency_entry(const LatencyModel& m) {
  auto s = [](Duration d) { return to_seconds(d); };
  switch (m.kind) {
    case LatencyModel::Kind::Fixed: return Json{{"dist", "fixed"}, {"value", s(m.value)}};
    case LatencyModel::Kind::Exponential: return Json{{"dist", "exponential"}, {"mean", s(m.mean)}};
    case LatencyModel::Kind::Lognormal:
      return Json{{"dist", "lognormal"}, {"median", s(m.median)}, {"sigma", m.sigma}};
    case LatencyModel::Kind::Uniform: return Json{{"dist", "uniform"}, {"min", s(m.lo)}, {"max", s(m.hi)}};
    case LatencyModel::Kind::Empirical: {
      Json samples = Json::array();
      for (Duration d : m.samples) samples.push_back(s(d));
      return Json{{"dist", "empirical"}, {"samples", samples}};
    }
  }
  return Json();
}

Json calibration_json(const Calibration& c) {
  Json latency = Json::object(), fit = Json::object();
  for (const auto& p : c.phases) {
    latency[p.phase] = latency_entry(p.fit.model);
    Json cands = Json::object();
    for (const auto& cand : p.fit.candidates) {
      Json j;
      j["parameters"] = cand.parameters;
      if (cand.model) j["model"] = latency_entry(*cand.model);
      if (cand.aic) {
        j["log_likelihood"] = cand.log_likelihood;
        j["aic"] = *cand.aic;
      } else {
        j["aic"] = nullptr;
        if (!cand.why_not.empty()) j["why_not"] = cand.why_not;
      }
      cands[cand.family] = j;
    }
    fit[p.phase] = Json{{"n", p.fit.n},
                        {"censored", p.fit.censored},
                        {"chosen", p.fit.chosen},
                        {"candidates", cands},
                        {"samples", latency_entry(p.fit.empirical)["samples"]}};
  }
  Json notes = Json::array();
  for (const auto& n : c.notes) notes.push_back(n);
  for (const auto& u : c.unobserved) notes.push_back(u + ": not observed in any trace; not written");
  return Json{{"format", kLatencyModelFormat},
              {"traces", c.traces},
              {"criterion", "maximum-likelihood fit per family (right-censored spans by censored ML: exponential, "
                            "lognormal); the lowest AIC = 2k - 2 ln L (samples in seconds) wins; identical samples: "
                            "fixed"},
              {"min_samples", c.min_samples},
              {"notes", notes},
              {"latency", latency},
              {"fit", fit}};
}

}  // namespace vramsim
