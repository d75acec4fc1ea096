#include "profiler/analysis/liveness_summary.hpp"

#include "profiler/analysis/checked_sum.hpp"
#include "profiler/analysis/text_format.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <stdexcept>

namespace ipusim::profiler::analysis {

namespace {

std::int64_t busiestEntryPoint(const std::vector<traces::RunRow>& runs) {
  std::map<std::int64_t, std::int64_t> calls;
  for (const auto& r : runs) ++calls[r.entryPoint];
  std::int64_t best = 0, bestCalls = -1;
  for (const auto& [entry, count] : calls)
    if (count > bestCalls) best = entry, bestCalls = count;
  return best;
}

}  // namespace

LivenessSummary summarizeLiveness(const traces::ProfileReader& reader, std::int64_t entryPoint) {
  LivenessSummary s;
  s.profile = reader.path();
  const auto order = reader.programOrder();
  s.available = reader.hasTable("program_order");
  if (!s.available) return s;
  const auto runs = reader.runs();
  if (entryPoint < 0) {
    entryPoint = busiestEntryPoint(runs);
  } else if (std::none_of(order.begin(), order.end(), [&](const auto& o) { return o.entryPoint == entryPoint; })) {
    throw std::invalid_argument(reader.path() + ": entry point " + std::to_string(entryPoint) +
                                " has no program steps in program_order");
  }
  s.entryPoint = entryPoint;
  for (const auto& r : runs)
    if (r.entryPoint == entryPoint) s.entryName = r.name;

  std::map<std::int64_t, traces::ProgramRow> programs;
  for (auto& p : reader.programs()) programs[p.id] = p;
  for (const auto& o : order) {
    if (o.entryPoint != entryPoint) continue;
    LivenessStep step;
    step.position = o.position;
    step.programId = o.programId;
    if (const auto p = programs.find(o.programId); p != programs.end()) {
      step.kind = p->second.kind;
      step.name = p->second.name;
      step.layer = p->second.layer;
      step.op = p->second.op;
    }
    s.steps.push_back(step);
  }

  std::map<std::int64_t, traces::TensorRow> tensors;
  std::map<std::string, std::int64_t> byCategory;
  for (auto& t : reader.tensors()) {
    if (t.alwaysLive) {
      addChecked(s.alwaysLiveBytes, t.bytes, reader.path(), "tensors.bytes");
      addChecked(byCategory[t.category], t.bytes, reader.path(), "tensors.bytes");
    }
    tensors[t.id] = t;
  }
  s.alwaysLiveByCategory.assign(byCategory.begin(), byCategory.end());
  std::stable_sort(s.alwaysLiveByCategory.begin(), s.alwaysLiveByCategory.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });

  // A difference array over positions: + bytes at the first use, - after the last.
  const std::int64_t n = static_cast<std::int64_t>(s.steps.size());
  std::vector<std::int64_t> bytesDelta(n + 1, 0), countDelta(n + 1, 0);
  std::vector<LiveTensor> notAlwaysLive;
  for (const auto& l : reader.tensorLifetimes()) {
    if (l.entryPoint != entryPoint) continue;
    const auto t = tensors.find(l.tensorId);
    if (t == tensors.end() || t->second.alwaysLive) continue;
    const std::int64_t first = std::clamp<std::int64_t>(l.firstPosition, 0, n);
    const std::int64_t last = std::clamp<std::int64_t>(l.lastPosition, first, std::max<std::int64_t>(n - 1, 0));
    if (n == 0) continue;
    addChecked(bytesDelta[first], t->second.bytes, reader.path(), "tensors.bytes");
    addChecked(bytesDelta[last + 1], -t->second.bytes, reader.path(), "tensors.bytes");
    ++countDelta[first];
    --countDelta[last + 1];
    notAlwaysLive.push_back({t->second.id, t->second.name, t->second.category, t->second.bytes, first, last});
  }
  std::int64_t bytes = 0, count = 0, peak = -1;
  for (std::int64_t p = 0; p < n; ++p) {
    addChecked(bytes, bytesDelta[p], reader.path(), "tensors.bytes");
    count += countDelta[p];
    s.steps[p].notAlwaysLiveBytes = bytes;
    s.steps[p].liveTensors = count;
    if (peak < 0 || bytes > s.steps[peak].notAlwaysLiveBytes) peak = p;
  }
  s.peakPosition = peak;
  std::int64_t peakBytes = s.alwaysLiveBytes;  // so that peakBytes() cannot overflow
  if (peak >= 0) addChecked(peakBytes, s.steps[peak].notAlwaysLiveBytes, reader.path(), "tensors.bytes");
  for (const auto& t : notAlwaysLive)
    if (peak >= t.firstPosition && peak <= t.lastPosition) s.liveAtPeak.push_back(t);
  std::stable_sort(s.liveAtPeak.begin(), s.liveAtPeak.end(),
                   [](const LiveTensor& a, const LiveTensor& b) { return a.bytes > b.bytes; });
  return s;
}

nlohmann::json livenessToJson(const LivenessSummary& s) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& st : s.steps)
    steps.push_back({{"position", st.position},
                     {"program_id", st.programId},
                     {"kind", st.kind},
                     {"name", st.name},
                     {"layer", st.layer},
                     {"op", st.op},
                     {"always_live_bytes", s.alwaysLiveBytes},
                     {"not_always_live_bytes", st.notAlwaysLiveBytes},
                     {"live_tensors", st.liveTensors}});
  nlohmann::json live = nlohmann::json::array();
  for (const auto& t : s.liveAtPeak)
    live.push_back({{"id", t.id}, {"name", t.name}, {"category", t.category}, {"bytes", t.bytes},
                    {"first_position", t.firstPosition}, {"last_position", t.lastPosition}});
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& [category, bytes] : s.alwaysLiveByCategory) categories[category] = bytes;
  return {{"profile", s.profile},
          {"available", s.available},
          {"entry_point", s.entryPoint},
          {"entry_name", s.entryName},
          {"always_live_bytes", s.alwaysLiveBytes},
          {"always_live_by_category", categories},
          {"peak_position", s.peakPosition < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.peakPosition)},
          {"peak_bytes", s.peakBytes()},
          {"live_at_peak", live},
          {"steps", steps}};
}

void printLiveness(const LivenessSummary& s, std::ostream& out, std::size_t maxSteps, std::size_t maxTensors) {
  if (!s.available) {
    out << "Liveness  not recorded in this profile (written before the program_order table existed)\n";
    return;
  }
  out << "Liveness of entry point " << s.entryPoint << (s.entryName.empty() ? "" : " '" + s.entryName + "'")
      << ": " << s.steps.size() << " program steps, bytes over all tiles\n";
  out << "  always live: " << formatBytes(s.alwaysLiveBytes);
  for (const auto& [category, bytes] : s.alwaysLiveByCategory) out << "; " << category << " " << bytes << " B";
  out << "\n";
  if (s.peakPosition < 0) return;
  const auto& peak = s.steps[s.peakPosition];
  out << "  peak at step " << peak.position << " (" << peak.kind << " '" << peak.name << "'): "
      << formatBytes(s.peakBytes()) << ", of which not always live " << formatBytes(peak.notAlwaysLiveBytes)
      << " in " << peak.liveTensors << " tensors\n";
  std::size_t listed = 0;
  for (const auto& t : s.liveAtPeak) {
    if (maxTensors && listed++ == maxTensors) {
      out << "    ... " << (s.liveAtPeak.size() - maxTensors) << " more\n";
      break;
    }
    out << "    " << std::left << std::setw(36) << t.name << std::right << std::setw(12) << t.bytes << " B  "
        << std::left << std::setw(12) << t.category << std::right << " steps " << t.firstPosition << ".."
        << t.lastPosition << "\n";
  }
  const std::size_t n = s.steps.size();
  const std::size_t stride = (maxSteps == 0 || n <= maxSteps) ? 1 : (n + maxSteps - 1) / maxSteps;
  out << "  " << std::right << std::setw(5) << "step" << "  " << std::left << std::setw(11) << "kind"
      << std::setw(36) << "program" << std::right << std::setw(14) << "always live" << std::setw(16)
      << "not always live" << "\n";
  for (std::size_t i = 0; i < n; ++i) {
    if (i % stride != 0 && std::int64_t(i) != s.peakPosition) continue;
    const auto& st = s.steps[i];
    out << "  " << std::right << std::setw(5) << st.position << "  " << std::left << std::setw(11) << st.kind
        << std::setw(36) << st.name.substr(0, 35) << std::right << std::setw(14) << s.alwaysLiveBytes << std::setw(16)
        << st.notAlwaysLiveBytes << (std::int64_t(i) == s.peakPosition ? "  <- peak" : "") << "\n";
  }
  if (stride > 1) out << "  (one step in " << stride << " listed, and the peak; --liveness-steps 0 or --json lists all)\n";
}

}  // namespace ipusim::profiler::analysis
