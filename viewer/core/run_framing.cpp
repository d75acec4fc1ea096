#include "viewer/core/run_framing.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ipusim::viewer {

namespace {

RunWindow withMargin(std::int64_t from, std::int64_t to, double margin) {
  const double pad = std::max(1.0, double(to - from) * margin);
  return RunWindow{double(from) - pad, double(to) + pad, from, to};
}

const traces::RunRow* findRun(const std::vector<traces::RunRow>& runs, std::int64_t id) {
  // Runs are stored in id order, usually dense from 0: try the direct index first.
  if (id >= 0 && std::size_t(id) < runs.size() && runs[std::size_t(id)].id == id) return &runs[std::size_t(id)];
  for (const auto& r : runs)
    if (r.id == id) return &r;
  return nullptr;
}

std::string runsHeld(const std::vector<traces::RunRow>& runs) {
  if (runs.empty()) return "the profile has no Engine::run rows";
  return "the profile has runs " + std::to_string(runs.front().id) + "-" + std::to_string(runs.back().id);
}

}  // namespace

RunWindow windowForRuns(const std::vector<traces::RunRow>& runs, std::int64_t firstRun, std::int64_t lastRun,
                        double margin) {
  if (firstRun > lastRun)
    throw std::invalid_argument("runs " + std::to_string(firstRun) + "-" + std::to_string(lastRun) +
                                ": the first run is after the last");
  const traces::RunRow* first = findRun(runs, firstRun);
  const traces::RunRow* last = findRun(runs, lastRun);
  if (!first || !last)
    throw std::invalid_argument("run " + std::to_string(first ? lastRun : firstRun) + " does not exist (" +
                                runsHeld(runs) + ")");
  std::int64_t from = first->startCycle, to = last->endCycle;
  // Robust to runs not in start order: cover every run of the interval.
  for (const auto& r : runs)
    if (r.id >= firstRun && r.id <= lastRun) {
      from = std::min(from, r.startCycle);
      to = std::max(to, r.endCycle);
    }
  return withMargin(from, std::max(to, from + 1), margin);
}

std::optional<RunWindow> capturedRunsWindow(const std::vector<traces::RunRow>& runs, std::size_t count,
                                            double margin) {
  std::optional<std::int64_t> from, to;
  std::size_t taken = 0;
  for (const auto& r : runs) {
    if (!r.captured || taken == count) continue;
    from = from ? std::min(*from, r.startCycle) : r.startCycle;
    to = to ? std::max(*to, r.endCycle) : r.endCycle;
    ++taken;
  }
  if (!from) return std::nullopt;
  return withMargin(*from, std::max(*to, *from + 1), margin);
}

std::int64_t alignmentAnchor(const std::vector<traces::RunRow>& runs, std::int64_t fallback) {
  for (const auto& r : runs)
    if (r.captured) return r.startCycle;
  return runs.empty() ? fallback : runs.front().startCycle;
}

std::optional<RunWindow> compareWindow(const std::vector<traces::RunRow>& a, const std::vector<traces::RunRow>& b,
                                       std::size_t count, double margin) {
  const auto wa = capturedRunsWindow(a, count, margin);
  const auto wb = capturedRunsWindow(b, count, margin);
  if (!wa && !wb) return std::nullopt;
  const double span = std::max(wa ? wa->span() : 0.0, wb ? wb->span() : 0.0);
  // A's window starts its margin before A's anchor; B keeps the same offset.
  const std::int64_t anchor = alignmentAnchor(a, wa ? wa->runsFrom : 0);
  const double lead = wa ? double(wa->runsFrom) - wa->shownFrom : double(wb->runsFrom) - wb->shownFrom;
  RunWindow w;
  w.shownFrom = double(anchor) - lead;
  w.shownTo = w.shownFrom + span;
  w.runsFrom = anchor;
  w.runsTo = std::int64_t(w.shownTo - lead);
  return w;
}

RangeSpec parseRangeSpec(const std::string& text) {
  const std::string expected = "--range: '" + text +
                               "' is neither FROM:TO in cycles with FROM < TO (e.g. 0:2000000) nor runs:A-B "
                               "in Engine::run indices with A <= B (e.g. runs:0-1)";
  auto parseWhole = [&](const std::string& part) {
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(part, &used);
    } catch (const std::out_of_range&) {
      // The form was right: "0:18446744073709551615" read as not FROM:TO.
      throw std::invalid_argument("--range: '" + text + "': " + part + " is out of range: cycles and run indices " +
                                  "are at most " + std::to_string(std::numeric_limits<std::int64_t>::max()));
    } catch (const std::exception&) {
      throw std::invalid_argument(expected);
    }
    if (used != part.size() || part.empty()) throw std::invalid_argument(expected);
    return value;
  };
  RangeSpec spec;
  const std::string runsPrefix = "runs:";
  if (text.compare(0, runsPrefix.size(), runsPrefix) == 0) {
    spec.unit = RangeSpec::Unit::Runs;
    const std::string rest = text.substr(runsPrefix.size());
    const auto dash = rest.find('-', 1);  // from 1: a leading '-' is a sign, rejected below
    spec.from = parseWhole(rest.substr(0, dash));
    spec.to = dash == std::string::npos ? spec.from : parseWhole(rest.substr(dash + 1));
    if (spec.from < 0 || spec.to < spec.from) throw std::invalid_argument(expected);
    return spec;
  }
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw std::invalid_argument(expected);
  spec.from = parseWhole(text.substr(0, colon));
  spec.to = parseWhole(text.substr(colon + 1));
  if (spec.to <= spec.from) throw std::invalid_argument(expected);
  return spec;
}

}  // namespace ipusim::viewer
