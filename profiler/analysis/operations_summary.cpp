#include "profiler/analysis/operations_summary.hpp"

#include "profiler/analysis/interval_set.hpp"
#include "profiler/analysis/checked_sum.hpp"
#include "profiler/analysis/text_format.hpp"
#include "traces/profile_error.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

namespace ipusim::profiler::analysis {

namespace {

// Cycles of [begin, end) inside the sorted disjoint windows.
std::int64_t overlap(const std::vector<Interval>& windows, std::int64_t begin, std::int64_t end) {
  auto it = std::upper_bound(windows.begin(), windows.end(), begin,
                             [](std::int64_t t, const Interval& w) { return t < w.end; });
  std::int64_t total = 0;
  for (; it != windows.end() && it->begin < end; ++it)
    total += std::max<std::int64_t>(0, std::min(end, it->end) - std::max(begin, it->begin));
  return total;
}

std::string passOf(const std::string& layer, const std::string& op) {
  if (layer == "training") return "step";
  if (op.rfind("recompute/", 0) == 0) return "recompute";
  if (op.size() >= 7 && op.compare(op.size() - 7, 7, "_update") == 0) return "update";
  if (op.find("grad") != std::string::npos) return "gradient";
  return "forward";
}

// The debug origin of each program: its own, else its nearest ancestor's.
std::map<std::int64_t, std::pair<std::string, std::string>> originsOf(const std::vector<traces::ProgramRow>& programs) {
  std::map<std::int64_t, const traces::ProgramRow*> byId;
  for (const auto& p : programs) byId[p.id] = &p;
  std::map<std::int64_t, std::pair<std::string, std::string>> origins;
  for (const auto& p : programs) {
    const traces::ProgramRow* at = &p;
    for (std::size_t hops = 0; at && at->layer.empty() && hops < programs.size(); ++hops) {
      const auto parent = byId.find(at->parentId);
      at = parent == byId.end() ? nullptr : parent->second;
    }
    origins[p.id] = at ? std::make_pair(at->layer, at->op) : std::make_pair(std::string(), std::string());
  }
  return origins;
}

struct Windows {
  std::vector<Interval> intervals;
  std::int64_t count = 0;
  bool bySteps = true;
};

Windows measuredWindows(const traces::ProfileReader& reader, const std::vector<traces::TrackRow>& tracks) {
  std::map<std::int64_t, bool> captured;
  IntervalSet runWindows;
  for (const auto& r : reader.runs()) {
    captured[r.id] = r.captured;
    if (r.captured) runWindows.add(r.startCycle, r.endCycle);
  }
  Windows w;
  IntervalSet steps;
  for (const auto& t : tracks) {
    if (t.kind != "engine") continue;
    reader.forEachSlice(t.id, [&](const traces::SliceRow& s) {
      if (s.category != "step" || !captured[s.runId]) return;
      steps.add(s.ts, s.ts + s.dur);
      ++w.count;
    });
  }
  if (w.count == 0) {
    w.bySteps = false;
    for (const auto& r : reader.runs()) w.count += r.captured ? 1 : 0;
    w.intervals = runWindows.intervals();
  } else {
    w.intervals = steps.intervals();
  }
  return w;
}

// 2 FLOP per float MAC at the AMP's rate on every tile (meta
// amp_float_macs_per_cycle; 0, unknown, in profiles written before it).
double ampPeakFlopsPerCycle(const traces::ProfileReader& reader, const ProfileTarget& target) {
  const std::string text = reader.metaValue("amp_float_macs_per_cycle");
  if (text.empty()) return 0;
  std::size_t used = 0;
  double macs = 0;
  try {
    macs = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(macs > 0) || macs > 1e6)
    throw traces::ProfileError(reader.path() + ": meta 'amp_float_macs_per_cycle' is '" + text +
                               "', expected a positive number of MACs per tile per cycle");
  return 2.0 * macs * double(target.tilesPerIpu) * double(std::max<std::int64_t>(1, target.numIpus));
}

}  // namespace

double OperationsSummary::share(const OperationRow& row) const {
  const std::int64_t ipus = std::max<std::int64_t>(1, target.numIpus);
  return windowCycles > 0 ? double(row.cycles()) / double(windowCycles * ipus) : 0.0;
}

double OperationsSummary::flopsPerSecond(const OperationRow& row) const {
  if (row.cycles() <= 0 || target.clockHz <= 0) return 0;
  return double(row.flops) / (double(row.cycles()) / target.clockHz);
}

OperationSort parseOperationSort(const std::string& name) {
  if (name == "cycles") return OperationSort::Cycles;
  if (name == "flops") return OperationSort::Flops;
  if (name == "memory") return OperationSort::Memory;
  if (name == "name") return OperationSort::Name;
  throw std::invalid_argument("sort key '" + name + "': expected cycles, flops, memory or name");
}

void sortOperations(OperationsSummary& summary, OperationSort sort) {
  const auto key = [sort](const OperationRow& r) -> std::int64_t {
    switch (sort) {
      case OperationSort::Flops: return r.flops;
      case OperationSort::Memory: return r.memoryBytes;
      default: return r.cycles();
    }
  };
  std::stable_sort(summary.rows.begin(), summary.rows.end(), [&](const OperationRow& a, const OperationRow& b) {
    if (sort == OperationSort::Name) return std::tie(a.layer, a.op) < std::tie(b.layer, b.op);
    if (key(a) != key(b)) return key(a) > key(b);
    return std::tie(a.layer, a.op) < std::tie(b.layer, b.op);
  });
}

OperationsSummary summarizeOperations(const traces::ProfileReader& reader) {
  OperationsSummary summary;
  summary.target = readProfileTarget(reader);
  summary.peakFlopsPerCycle = ampPeakFlopsPerCycle(reader, summary.target);
  const auto tracks = reader.tracks();
  const Windows windows = measuredWindows(reader, tracks);
  summary.windows = windows.count;
  summary.byStep = windows.bySteps;
  for (const auto& w : windows.intervals) addChecked(summary.windowCycles, w.length(), reader.path(), "slices.dur");

  const auto programs = reader.programs();
  const auto origins = originsOf(programs);
  std::map<std::int64_t, traces::ProgramWorkRow> work;
  for (const auto& w : reader.programWork()) work[w.programId] = w;

  std::map<std::pair<std::string, std::string>, OperationRow> rows;
  const auto rowFor = [&](std::int64_t programId) -> OperationRow& {
    const auto origin = origins.find(programId);
    const auto key = origin == origins.end() ? std::make_pair(std::string(), std::string()) : origin->second;
    OperationRow& row = rows[key];
    if (row.programIds.empty() && row.layer.empty()) {
      row.layer = key.first;
      row.op = key.second;
      row.pass = passOf(key.first, key.second);
    }
    if (programId >= 0 && std::find(row.programIds.begin(), row.programIds.end(), programId) == row.programIds.end())
      row.programIds.push_back(programId);
    return row;
  };

  // A collective's slices (category collective) count by what the phase
  // does: its compute sets as compute, its syncs (no static phase) as sync,
  // its exchanges as exchange.
  std::map<std::int64_t, std::string> phaseKind;
  for (const auto& phase : reader.phases()) phaseKind[phase.id] = phase.kind;
  const auto collectiveBucket = [&](const traces::SliceRow& s) {
    if (s.phaseId < 0) return &OperationRow::sync;
    const auto kind = phaseKind.find(s.phaseId);
    return kind != phaseKind.end() && kind->second == "compute" ? &OperationRow::compute : &OperationRow::exchange;
  };
  // An Execute's FLOPs count once per execution: on the first IPU, in IPU
  // order, whose bsp track shows the program's compute. The replicas' copies
  // (later IPUs, the same program at the same time) and a compute set spread
  // over several IPUs count once, and a program that runs on a later IPU
  // only (a sharded or pipelined model's later stages) counts there; counting
  // the first IPU's track alone gave those 0 FLOPs and 0 tiles.
  std::vector<const traces::TrackRow*> bsp;
  for (const auto& t : tracks)
    if (t.kind == "bsp") bsp.push_back(&t);
  std::stable_sort(bsp.begin(), bsp.end(), [](const auto* a, const auto* b) { return a->ipu < b->ipu; });
  std::map<std::int64_t, std::int64_t> flopsIpu;  // program id -> the IPU its FLOPs are counted on
  for (const traces::TrackRow* track : bsp) {
    const traces::TrackRow& t = *track;
    reader.forEachSlice(t.id, [&](const traces::SliceRow& s) {
      std::int64_t OperationRow::*bucket = nullptr;
      if (s.category == "compute") bucket = &OperationRow::compute;
      else if (s.category == "exchange" || s.category == "ipu_link") bucket = &OperationRow::exchange;
      else if (s.category == "sync") bucket = &OperationRow::sync;
      else if (s.category == "collective") bucket = collectiveBucket(s);
      else if (s.category == "streaming_memory") bucket = &OperationRow::streamingMemory;
      if (!bucket) return;
      const std::int64_t cycles = overlap(windows.intervals, s.ts, s.ts + s.dur);
      if (cycles <= 0) return;
      OperationRow& row = rowFor(s.programId);
      addChecked(row.*bucket, cycles, reader.path(), "slices.dur");
      addChecked(summary.busyCycles, cycles, reader.path(), "slices.dur");
      if (s.category == "compute" && flopsIpu.emplace(s.programId, t.ipu).first->second == t.ipu) {
        const auto w = work.find(s.programId);
        if (w != work.end()) {
          addChecked(row.flops, w->second.flops, reader.path(), "program_work.flops");
          row.tiles = std::max(row.tiles, w->second.tiles);
        }
      }
    });
  }
  for (const auto& tensor : reader.tensors()) {
    const auto it = rows.find({tensor.layer, tensor.op});
    if (it != rows.end()) addChecked(it->second.memoryBytes, tensor.bytes, reader.path(), "tensors.bytes");
  }
  for (auto& [key, row] : rows) summary.rows.push_back(std::move(row));
  sortOperations(summary, OperationSort::Cycles);
  return summary;
}

nlohmann::json operationsToJson(const OperationsSummary& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : s.rows) {
    rows.push_back({{"layer", r.layer},
                    {"op", r.op},
                    {"pass", r.pass},
                    {"cycles", r.cycles()},
                    {"compute_cycles", r.compute},
                    {"exchange_cycles", r.exchange},
                    {"sync_cycles", r.sync},
                    {"streaming_memory_cycles", r.streamingMemory},
                    {"cycles_per_step", s.perWindow(r.cycles())},
                    {"share", s.share(r)},
                    {"flops", r.flops},
                    {"flops_per_step", s.perWindow(r.flops)},
                    {"flops_per_second", s.flopsPerSecond(r)},
                    {"peak_fraction", s.peakFlopsPerSecond() > 0 ? s.flopsPerSecond(r) / s.peakFlopsPerSecond() : 0.0},
                    {"tiles", r.tiles},
                    {"memory_bytes", r.memoryBytes},
                    {"program_ids", r.programIds}});
  }
  return {{"profile", s.target.path},
          {"windows", s.windows},
          {"window_kind", s.byStep ? "step" : "run"},
          {"window_cycles", s.windowCycles},
          {"busy_cycles", s.busyCycles},
          {"peak_flops_per_second", s.peakFlopsPerSecond()},
          {"operations", rows}};
}

void printOperations(const OperationsSummary& s, std::ostream& out) {
  const char* unit = s.byStep ? "step" : "run";
  // The Streaming Memory column only where an op copied to or from it (offloaded optimizer state).
  const bool remote = std::any_of(s.rows.begin(), s.rows.end(), [](const OperationRow& r) { return r.streamingMemory > 0; });
  out << "Operations over " << s.windows << " captured " << unit << (s.windows == 1 ? "" : "s") << " ("
      << formatNumber(s.perWindow(s.windowCycles), 0) << " cycles per " << unit << "; compute + exchange + sync "
      << (remote ? "+ Streaming Memory " : "")
      << formatNumber(s.perWindow(s.busyCycles), 0) << ")";
  if (s.peakFlopsPerSecond() > 0) out << "; AMP float peak " << formatNumber(s.peakFlopsPerSecond() / 1e12, 1) << " TFLOP/s";
  out << "\n";
  if (s.rows.empty()) {
    out << "  no compute, exchange or sync in the captured " << unit << "s\n";
    return;
  }
  const auto nameOf = [](const OperationRow& r) {
    return r.layer.empty() ? std::string("(no debug info)") : r.layer + "/" + r.op;
  };
  int nameWidth = 10;
  for (const auto& r : s.rows) nameWidth = std::max(nameWidth, int(nameOf(r).size()) + 2);
  out << "  " << std::left << std::setw(nameWidth) << "layer/op" << std::setw(9) << "pass" << std::right << std::setw(12)
      << "cycles/" + std::string(unit) << std::setw(8) << "share" << std::setw(11) << "compute" << std::setw(11)
      << "exchange" << std::setw(9) << "sync" << (remote ? "     remote" : "") << std::setw(13)
      << "FLOPs/" + std::string(unit) << std::setw(12)
      << "GFLOP/s" << std::setw(8) << "peak" << std::setw(7) << "tiles" << std::setw(12) << "memory" << "\n";
  // A figure right-aligned in its column, with at least one space before it:
  // a figure wider than its column (2^62 bytes, 4e9 tiles) must not run into
  // the one before it ("1452" tiles and "46...44 B" read as one number).
  const auto cell = [](const std::string& text, std::size_t width) {
    return text.size() < width ? std::string(width - text.size(), ' ') + text : " " + text;
  };
  for (const auto& r : s.rows) {
    const double rate = s.flopsPerSecond(r);
    out << "  " << std::left << std::setw(nameWidth) << nameOf(r) << std::setw(9) << r.pass
        << cell(formatNumber(s.perWindow(r.cycles()), 0), 12) << cell(formatPercent(s.share(r)), 8)
        << cell(formatNumber(s.perWindow(r.compute), 0), 11) << cell(formatNumber(s.perWindow(r.exchange), 0), 11)
        << cell(formatNumber(s.perWindow(r.sync), 0), 9)
        << (remote ? cell(formatNumber(s.perWindow(r.streamingMemory), 0), 11) : std::string())
        << cell(formatNumber(s.perWindow(r.flops), 0), 13)
        << cell(formatNumber(rate / 1e9, 2), 12)
        << cell(s.peakFlopsPerSecond() > 0 ? formatPercent(rate / s.peakFlopsPerSecond()) : std::string("n/a"), 8)
        << cell(std::to_string(r.tiles), 7) << cell(std::to_string(r.memoryBytes) + " B", 12) << "\n";
  }
}

}  // namespace ipusim::profiler::analysis
