#include "viewer/shell/trace_view.hpp"

#include "viewer/core/colours.hpp"
#include "viewer/core/counter_envelope.hpp"
#include "viewer/core/error_text.hpp"
#include "viewer/core/hit_test.hpp"
#include "viewer/core/run_framing.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace ipusim::viewer {

namespace {

constexpr float kRowHeight = 20, kCompactRowHeight = 14;
constexpr float kOverviewHeight = 34, kRulerHeight = 22, kCounterHeight = 48, kTileViewHeight = 72;
constexpr float kLaneGap = 4;

float clampX(double x, float lo, float hi) {
  return static_cast<float>(std::clamp(x, double(lo) - 4, double(hi) + 4));
}

Rgba darker(Rgba c, float f) {
  auto ch = [&](int shift) { return unsigned(float((c >> shift) & 0xff) * f); };
  return rgb(ch(0), ch(8), ch(16), (c >> 24) & 0xff);
}

std::string profileDisplayName(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.filename() == "profile.pop" && p.has_parent_path() && !p.parent_path().filename().empty())
    return p.parent_path().filename().string();
  return p.filename().string();
}

std::string pct(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", fraction * 100.0);
  return b;
}

}  // namespace

TraceView::TraceView(ProfileSession& session) : session_(session) {
  hasTiles_.assign(session_.lanes().size(), -1);
  tileWindows_.assign(session_.lanes().size(), TileWindow{0, double(std::max<std::int64_t>(1, session_.tilesPerIpu()))});
}

void TraceView::fitAll() {
  const double span = double(session_.endCycle() - session_.startCycle());
  axis_.fit(double(session_.startCycle()) - span * 0.01, double(session_.endCycle()) + span * 0.01);
  fitted_ = true;
}

void TraceView::fitCapturedRuns() {
  if (const auto window = capturedRunsWindow(session_.runs())) {
    axis_.fit(window->shownFrom, window->shownTo);
    fitted_ = true;
  } else {
    fitAll();
  }
}

void TraceView::openOnCapturedRuns(bool statsInBackground) {
  const auto window = capturedRunsWindow(session_.runs());
  if (!window) return;  // nothing captured: the first frame fits everything
  pendingFit_ = std::make_pair(window->shownFrom, window->shownTo);
  selection_ = std::make_pair(window->runsFrom, window->runsTo);
  openingSelection_ = selection_;
  updateStats(statsInBackground);
}

void TraceView::dropOpeningSelection() {
  if (!selection_ || selection_ != openingSelection_) return;
  selection_.reset();
  stats_.reset();
  statsError_.clear();
}

void TraceView::setRunRange(std::int64_t firstRun, std::int64_t lastRun) {
  RunWindow window;
  try {
    window = windowForRuns(session_.runs(), firstRun, lastRun);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(session_.path() + ": --range runs:" + std::to_string(firstRun) + "-" +
                                std::to_string(lastRun) + ": " + e.what());
  }
  pendingFit_ = std::make_pair(window.shownFrom, window.shownTo);
  selection_ = std::make_pair(window.runsFrom, window.runsTo);
  updateStats();
}

void TraceView::setRange(std::int64_t from, std::int64_t to) {
  pendingFit_ = std::make_pair(double(from), double(to));
  selection_ = std::make_pair(from, to);
  updateStats();
}

void TraceView::highlightProgram(std::int64_t programId) {
  highlighted_.clear();
  if (programId < 0) return;
  std::vector<std::int64_t> stack{programId};
  while (!stack.empty()) {
    const std::int64_t id = stack.back();
    stack.pop_back();
    highlighted_.insert(id);
    for (std::int64_t c : session_.programs().children(id)) stack.push_back(c);
  }
}

std::size_t TraceView::search(const std::string& query) {
  if (query.c_str() != searchInput_) std::snprintf(searchInput_, sizeof searchInput_, "%s", query.c_str());
  search_.run(session_.lanes(), query);
  if (const auto m = search_.current()) selectSlice({m->lane, m->row, m->index});
  return search_.count();
}

void TraceView::nextMatch() {
  search_.next();
  if (const auto m = search_.current()) selectSlice({m->lane, m->row, m->index});
}

void TraceView::previousMatch() {
  search_.previous();
  if (const auto m = search_.current()) selectSlice({m->lane, m->row, m->index});
}

void TraceView::selectSlice(const SliceRef& slice) {
  const auto& lanes = session_.lanes();
  if (slice.lane >= lanes.size() || !lanes[slice.lane]->isLoaded()) return;
  const Lane& lane = *lanes[slice.lane];
  if (slice.row >= lane.rows.size() || slice.index >= lane.rows[slice.row].size()) return;
  const SliceColumns& row = lane.rows[slice.row];
  selected_ = slice;
  selectedSliceId_ = row.sliceId[slice.index];
  selectedDetails_ = session_.details(lane, selectedSliceId_, row.start[slice.index]);
  // Centre it, wide enough to read: the slice takes a fifth of the view.
  const double start = double(row.start[slice.index]), end = double(row.end[slice.index]);
  const double half = std::max(2.5 * (end - start), 50.0);
  const double centre = (start + end) / 2;
  pendingFit_ = std::make_pair(centre - half, centre + half);
}

float TraceView::laneHeight(const Lane& lane, bool compact) const {
  if (lane.kind == LaneKind::Counter) return kCounterHeight;
  const float rowH = compact ? kCompactRowHeight : kRowHeight;
  // A lane that failed to load is two rows tall: its title and "error".
  if (lane.isLoaded() && !lane.loadError.empty()) return 2 * std::max(rowH, ImGui::GetTextLineHeight() + 2);
  if (flat_ && lane.trackKind == "program") return rowH;
  return float(lane.rowCount()) * rowH;
}

void TraceView::updateStats(bool inBackground) {
  stats_.reset();
  statsError_.clear();
  if (!selection_) return;
  if (!inBackground) {
    try {
      stats_ = profiler::computeRangeStats(session_.reader(), selection_->first, selection_->second);
    } catch (const std::exception& e) {
      statsError_ = errorText(e);
    }
    return;
  }
  if (statsJob_.valid()) {  // one job at a time: the newest selection waits
    statsQueued_ = selection_;
    return;
  }
  statsJobRange_ = *selection_;
  statsJob_ = std::async(std::launch::async, [path = session_.path(), range = *selection_] {
    // The session checks the whole file on a thread of its own.
    traces::ProfileReader reader(path, traces::ProfileReader::Checks::WholeFileDeferred);
    return profiler::computeRangeStats(reader, range.first, range.second);
  });
}

void TraceView::collectStats() {
  if (!statsJob_.valid() || statsJob_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  std::optional<profiler::RangeStats> result;
  std::string error;
  try {
    result = statsJob_.get();
  } catch (const std::exception& e) {
    error = errorText(e);
  }
  if (selection_ && *selection_ == statsJobRange_) {
    stats_ = std::move(result);
    statsError_ = error;
  }
  if (statsQueued_) {
    const auto queued = *statsQueued_;
    statsQueued_.reset();
    if (selection_ && *selection_ == queued) updateStats(true);
  }
}

bool TraceView::draw(const char* id, ImVec2 size, bool compact) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float plotX = origin.x + labelWidth_;
  const float plotW = std::max(50.0f, size.x - labelWidth_);
  axis_.setWidth(plotW);
  if (pendingFit_) {
    axis_.fit(pendingFit_->first, pendingFit_->second);
    pendingFit_.reset();
    fitted_ = true;
  }
  if (!fitted_) fitCapturedRuns();
  bool changed = false;

  // Overview strip: the whole run, with the current view marked.
  const float overviewH = compact ? 0 : kOverviewHeight;
  if (overviewH > 0) drawOverview(dl, ImVec2(plotX, origin.y), ImVec2(plotW, overviewH));
  drawRuler(dl, ImVec2(plotX, origin.y + overviewH), plotW);
  if (compact) {
    // The profile's name in the label column (its report directory when the
    // file is the usual profile.pop), clipped so it never runs into the ruler.
    const std::string name = profileDisplayName(session_.shownPath());
    const ImVec4 clip(origin.x, origin.y, origin.x + labelWidth_ - 4, origin.y + kRulerHeight);
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(origin.x + 4, origin.y + 4), IM_COL32(30, 30, 30, 255),
                name.c_str(), nullptr, 0, &clip);
    if (ImGui::IsMouseHoveringRect(origin, ImVec2(origin.x + labelWidth_, origin.y + kRulerHeight)))
      ImGui::SetTooltip("%s", session_.shownPath().c_str());
  } else {
    // Framing buttons over the overview's label column.
    ImGui::PushID(id);
    ImGui::SetCursorScreenPos(ImVec2(origin.x + 2, origin.y + 2));
    if (ImGui::SmallButton("Fit runs")) fitCapturedRuns();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Fit the first two captured Engine::run calls (key F)");
    ImGui::SameLine(0, 4);
    if (ImGui::SmallButton("Fit all")) fitAll();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Fit the whole profile, runs without detail too (key Home)");
    ImGui::SameLine(0, 4);
    if (ImGui::SmallButton(flat_ ? "Flame" : "Flat")) flat_ = !flat_;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(flat_ ? "Show program steps nested (flame view)" : "Show each program lane on one row (flat view)");
    ImGui::PopID();
  }

  // The whole-file checks run after opening (ProfileSession); a failure
  // refuses the profile (ViewerApp::frame), so nothing here shows one.

  // Lanes in a child window that scrolls vertically; the wheel zooms instead.
  const float top = overviewH + kRulerHeight;
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + top));
  ImGui::BeginChild(id, ImVec2(size.x, size.y - top), false, ImGuiWindowFlags_NoScrollWithMouse);
  ImDrawList* ldl = ImGui::GetWindowDrawList();
  const ImVec2 lanesOrigin = ImGui::GetCursorScreenPos();
  const ImVec2 clipMin = ImGui::GetWindowPos();
  const ImVec2 clipMax(clipMin.x + ImGui::GetWindowWidth(), clipMin.y + ImGui::GetWindowHeight());
  hovered_.reset();
  hoveredFold_.clear();
  lastBlockCount_ = 0;
  for (std::size_t li = 0; li < session_.lanes().size(); ++li)
    if (session_.lanes()[li]->loadsByWindow() && adoptPendingWindow(*session_.lanes()[li])) windowAdopted(li);
  const float rowH = compact ? kCompactRowHeight : kRowHeight;
  float y = lanesOrigin.y;
  auto& lanes = session_.lanes();
  for (std::size_t li = 0; li < lanes.size(); ++li) {
    Lane& lane = *lanes[li];
    float h = laneHeight(lane, compact);
    const bool bspWithTiles = lane.trackKind == "bsp" && !compact && hasTiles_[li] == 1;
    const float total = h + (bspWithTiles ? kTileViewHeight : 0);
    const bool onScreen = y + total >= clipMin.y && y <= clipMax.y;
    // Lanes scrolled out of sight are neither drawn nor loaded first.
    if (lane.visible.load() != onScreen) session_.setLaneVisible(li, onScreen);
    if (onScreen) {
      ldl->AddRectFilled(ImVec2(origin.x, y), ImVec2(plotX - 2, y + total), IM_COL32(225, 225, 228, 255));
      ldl->PushClipRect(ImVec2(origin.x, y), ImVec2(plotX - 4, y + total), true);
      ldl->AddText(ImVec2(origin.x + 4, y + 2), IM_COL32(30, 30, 30, 255), lane.title.c_str());
      if (lane.kind == LaneKind::Counter && lane.isLoaded() && (!lane.counterTs.empty() || lane.counterSummary)) {
        char range[96];
        std::snprintf(range, sizeof range, "%.4g .. %.4g", lane.counterMin, lane.counterMax);
        ldl->AddText(ImVec2(origin.x + 4, y + 2 + ImGui::GetTextLineHeight()), IM_COL32(90, 90, 90, 255), range);
      }
      if (!lane.isLoaded()) ldl->AddText(ImVec2(origin.x + 4, y + 2 + ImGui::GetTextLineHeight()),
                                         IM_COL32(120, 60, 60, 255), "loading...");
      else if (lane.loadsByWindow() && lane.requested && !windowHoldsView(li))
        ldl->AddText(ImVec2(origin.x + 4, y + 2 + ImGui::GetTextLineHeight()), IM_COL32(90, 90, 90, 255),
                     lane.requested->first <= axis_.startCycle() && lane.requested->second >= axis_.endCycle()
                         ? (lane.kind == LaneKind::Counter ? "loading values..." : "loading slices...")
                         : "summary");
      else if (!lane.loadError.empty())
        ldl->AddText(ImVec2(origin.x + 4, y + 2 + ImGui::GetTextLineHeight()), IM_COL32(180, 0, 0, 255),
                     "error (hover)");
      ldl->PopClipRect();
      ldl->PushClipRect(ImVec2(plotX, y), ImVec2(plotX + plotW, y + total), true);
      if (lane.isLoaded()) {
        if (lane.kind == LaneKind::Counter) drawCounterLane(ldl, li, ImVec2(plotX, y), ImVec2(plotW, h));
        else if (lane.windowed && !windowHoldsView(li)) drawSummaryLane(ldl, lane, ImVec2(plotX, y), plotW, rowH);
        else drawSliceLane(ldl, li, ImVec2(plotX, y), plotW, rowH);
        if (lane.trackKind == "bsp" && hasTiles_[li] < 0) {
          // Tile detail exists when the first phase run on this lane has tile
          // rows (the loader noted it: no scan of millions of slices here).
          hasTiles_[li] = lane.firstPhaseId >= 0 && !session_.tileCycles(lane.firstPhaseId, lane.ipu).empty();
        }
        if (bspWithTiles) drawTileView(ldl, lane, ImVec2(plotX, y + h), ImVec2(plotW, kTileViewHeight));
      }
      ldl->PopClipRect();
      // The failure in words where the slices would be: a damaged lane must
      // not look like an empty one.
      const std::string failure = lane.failure();
      if (!failure.empty()) {
        ldl->PushClipRect(ImVec2(plotX, y), ImVec2(plotX + plotW, y + total), true);
        ldl->AddText(ImVec2(plotX + 4, y + 2), IM_COL32(180, 0, 0, 255), failure.c_str());
        ldl->PopClipRect();
      }
      if (!failure.empty() && ImGui::IsMouseHoveringRect(ImVec2(origin.x, y), ImVec2(plotX, y + total)))
        ImGui::SetTooltip("%s", failure.c_str());
    }
    y += total + kLaneGap;
    ldl->AddLine(ImVec2(origin.x, y - kLaneGap / 2), ImVec2(plotX + plotW, y - kLaneGap / 2),
                 IM_COL32(200, 200, 200, 255));
  }
  ImGui::Dummy(ImVec2(size.x, y - lanesOrigin.y));

  // Range selection overlay.
  if (selection_) {
    const float x0 = clampX(plotX + axis_.pixelOf(double(selection_->first)), plotX, plotX + plotW);
    const float x1 = clampX(plotX + axis_.pixelOf(double(selection_->second)), plotX, plotX + plotW);
    // Only edges over the lanes (a tint would change the category colours);
    // the ruler carries the shaded band.
    ldl->AddLine(ImVec2(x0, clipMin.y), ImVec2(x0, clipMax.y), IM_COL32(60, 120, 220, 200));
    ldl->AddLine(ImVec2(x1, clipMin.y), ImVec2(x1, clipMax.y), IM_COL32(60, 120, 220, 200));
  }
  handleInput(ImVec2(plotX, clipMin.y), ImVec2(plotW, clipMax.y - clipMin.y), changed);
  ImGui::EndChild();
  return changed;
}

void TraceView::drawOverview(ImDrawList* dl, ImVec2 origin, ImVec2 size) {
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), IM_COL32(250, 250, 250, 255));
  TimeAxis whole(double(session_.startCycle()), double(std::max(session_.endCycle(), session_.startCycle() + 1)),
                 size.x);
  // The engine runs on top, then the first BSP lane: enough to see the rhythm of the run.
  float y = origin.y + 2;
  const float h = (size.y - 6) / 2;
  for (const char* kind : {"engine", "bsp"}) {
    for (auto& lane : session_.lanes()) {
      if (lane->trackKind != kind || !lane->isLoaded() || lane->rows.empty()) continue;
      if (lane->windowed) {
        if (!lane->summary.empty()) {
          spans_.clear();
          lane->summary[0].spans(whole, spans_);
          for (const auto& sp : spans_)
            dl->AddRectFilled(ImVec2(origin.x + float(sp.x0), y + h * (1 - sp.busy)), ImVec2(origin.x + float(sp.x1), y + h),
                              categoryColour(lane->summary[0].categoryName(sp.category), 1));
        }
        break;
      }
      blocks_.clear();
      foldRow(lane->rows[0], whole, {1.0, 1.0}, blocks_);
      for (const auto& b : blocks_) {
        const float x0 = float(origin.x + whole.pixelOf(double(b.start)));
        const float x1 = std::max(x0 + 1, float(origin.x + whole.pixelOf(double(b.end))));
        const auto& cat = lane->strings.at(foldCategory(lane->rows[0], b));
        dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + h), categoryColour(cat, 1));
      }
      break;
    }
    y += h + 2;
  }
  // Runs without detail: grey on the engine row, one box per pixel column at most.
  {
    const float y0 = origin.y + 2, y1 = y0 + h;
    float openX0 = -1, openX1 = -1;
    for (const auto& run : session_.runs()) {
      if (run.captured) continue;
      const float x0 = float(origin.x + whole.pixelOf(double(run.startCycle)));
      const float x1 = std::max(x0 + 1, float(origin.x + whole.pixelOf(double(run.endCycle))));
      if (openX0 >= 0 && x0 <= openX1 + 1) { openX1 = std::max(openX1, x1); continue; }
      if (openX0 >= 0) dl->AddRectFilled(ImVec2(openX0, y0), ImVec2(openX1, y1), IM_COL32(205, 205, 205, 255));
      openX0 = x0;
      openX1 = x1;
    }
    if (openX0 >= 0) dl->AddRectFilled(ImVec2(openX0, y0), ImVec2(openX1, y1), IM_COL32(205, 205, 205, 255));
  }
  const float v0 = clampX(origin.x + whole.pixelOf(axis_.startCycle()), origin.x, origin.x + size.x);
  const float v1 = clampX(origin.x + whole.pixelOf(axis_.endCycle()), origin.x, origin.x + size.x);
  dl->AddRect(ImVec2(v0, origin.y), ImVec2(std::max(v0 + 2, v1), origin.y + size.y), IM_COL32(40, 90, 200, 255),
              0, 0, 2);
  // Click or drag in the overview centres the view there.
  if (ImGui::IsMouseHoveringRect(origin, ImVec2(origin.x + size.x, origin.y + size.y)) &&
      ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    const double c = whole.cycleAt(ImGui::GetIO().MousePos.x - origin.x);
    const double half = (axis_.endCycle() - axis_.startCycle()) / 2;
    axis_.fit(c - half, c + half);
  }
}

void TraceView::drawRuler(ImDrawList* dl, ImVec2 origin, float width) {
  dl->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + kRulerHeight), IM_COL32(235, 235, 238, 255));
  const double hz = session_.clockHz();
  auto labelOf = [&](double cycle) {
    std::string label = formatCycles(std::int64_t(std::llround(cycle)));
    if (hz > 0) label += " (" + formatSeconds(cycle / hz) + ")";
    return label;
  };
  // Ticks at least one label apart (the widest label in view, plus a gap).
  const float labelW = std::max(ImGui::CalcTextSize(labelOf(axis_.endCycle()).c_str()).x,
                                ImGui::CalcTextSize(labelOf(axis_.startCycle()).c_str()).x);
  for (const auto& t : axisTicks(axis_, std::max(90.0f, labelW + 24))) {
    const float x = float(origin.x + axis_.pixelOf(t.cycle));
    dl->AddLine(ImVec2(x, origin.y + kRulerHeight - 6), ImVec2(x, origin.y + kRulerHeight),
                IM_COL32(80, 80, 80, 255));
    dl->AddText(ImVec2(x + 3, origin.y + 3), IM_COL32(50, 50, 50, 255), labelOf(t.cycle).c_str());
  }
  if (selection_) {
    const float x0 = clampX(origin.x + axis_.pixelOf(double(selection_->first)), origin.x, origin.x + width);
    const float x1 = clampX(origin.x + axis_.pixelOf(double(selection_->second)), origin.x, origin.x + width);
    dl->AddRectFilled(ImVec2(x0, origin.y), ImVec2(x1, origin.y + kRulerHeight), IM_COL32(60, 120, 220, 70));
  }
}

void TraceView::drawSliceLane(ImDrawList* dl, std::size_t laneIndex, ImVec2 origin, float width, float rowH) {
  Lane& lane = *session_.lanes()[laneIndex];
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImFont* font = ImGui::GetFont();
  const float fontSize = ImGui::GetFontSize();
  if (lane.trackKind == "engine") drawUncapturedRuns(dl, origin, width, rowH);
  for (std::size_t r = 0; r < lane.rows.size(); ++r) {
    const SliceColumns& row = lane.rows[r];
    // Flat view: every row of a program lane on one, inner steps drawn over outer ones.
    const bool flatten = flat_ && lane.trackKind == "program";
    const float y0 = origin.y + (flatten ? 0.0f : float(r) * rowH), y1 = y0 + rowH - 1;
    blocks_.clear();
    foldRow(row, axis_, fold_, blocks_);
    lastBlockCount_ += std::int64_t(blocks_.size());
    const int depth = lane.rowDepth[r];
    for (const auto& b : blocks_) {
      const float x0 = clampX(origin.x + axis_.pixelOf(double(b.start)), origin.x, origin.x + width);
      const float x1 = std::max(x0 + 1, clampX(origin.x + axis_.pixelOf(double(b.end)), origin.x, origin.x + width));
      const std::string& category = lane.strings.at(foldCategory(row, b));
      Rgba colour = categoryColour(category, depth);
      if (b.folded()) colour = darker(colour, 0.85f);
      // A 1 px gap after slices wide enough to spare it, so neighbours of one
      // colour (the steps of a run) read as separate slices, as in PopVision.
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1 - (x1 - x0 > 6 ? 1.0f : 0.0f), y1), colour);
      const bool isSelected = selected_ && selected_->lane == laneIndex && selected_->row == r &&
                              selected_->index == b.first && !b.folded();
      if (!highlighted_.empty() && !b.folded() && highlighted_.count(row.programId[b.first]))
        dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(20, 60, 200, 255), 0, 0, 2);
      if (isSelected) dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(0, 0, 0, 255), 0, 0, 2);
      // Names on slices wide enough to read; a count on wide folds.
      if (x1 - x0 > (b.folded() ? 60 : 24)) {
        const std::string text = b.folded() ? "x" + std::to_string(b.count) : lane.strings.at(row.name[b.first]);
        const ImVec4 clip(x0 + 2, y0, x1 - 2, y1);
        dl->AddText(font, fontSize, ImVec2(x0 + 3, y0 + (rowH - fontSize) / 2 - 1), textColourOn(colour),
                    text.c_str(), nullptr, 0, &clip);
      }
    }
    if (mouse.y >= y0 && mouse.y < y1 + 1 && mouse.x >= origin.x && mouse.x < origin.x + width &&
        ImGui::IsWindowHovered()) {
      if (auto hit = blockAt(blocks_, axis_, mouse.x - origin.x, 2.0)) {
        const DrawBlock& b = blocks_[*hit];
        if (b.folded()) {
          hoveredFold_ = std::to_string(b.count) + " slices folded, " +
                         formatCyclesWithTime(b.end - b.start, session_.clockHz()) + " from " +
                         formatCycles(b.start);
        } else {
          hovered_ = SliceRef{laneIndex, r, b.first};
        }
      }
    }
  }
  // The selected slice's outline on top (in the flat view inner steps cover outer ones).
  if (selected_ && selected_->lane == laneIndex && selected_->row < lane.rows.size()) {
    const SliceColumns& row = lane.rows[selected_->row];
    if (selected_->index < row.size()) {
      const bool flatten = flat_ && lane.trackKind == "program";
      const float y0 = origin.y + (flatten ? 0.0f : float(selected_->row) * rowH), y1 = y0 + rowH - 1;
      const float x0 = clampX(origin.x + axis_.pixelOf(double(row.start[selected_->index])), origin.x, origin.x + width);
      const float x1 =
          std::max(x0 + 1, clampX(origin.x + axis_.pixelOf(double(row.end[selected_->index])), origin.x, origin.x + width));
      dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(0, 0, 0, 255), 0, 0, 2);
    }
  }
}

bool TraceView::windowHoldsView(std::size_t laneIndex) {
  Lane& lane = *session_.lanes()[laneIndex];
  const double from = axis_.startCycle(), to = axis_.endCycle();
  const auto covers = [&](const std::optional<std::pair<std::int64_t, std::int64_t>>& w) {
    return w && double(w->first) <= from && double(w->second) >= to;
  };
  if (covers(lane.window)) return true;
  if (!covers(lane.requested)) {
    auto plan = lane.counterSummary ? planCounterWindow(*lane.counterSummary, from, to) : planWindow(lane.chunks, from, to);
    if (plan) session_.requestWindow(laneIndex, std::move(*plan));
  }
  return false;
}

void TraceView::windowAdopted(std::size_t laneIndex) {
  const Lane& lane = *session_.lanes()[laneIndex];
  if (selected_ && selected_->lane == laneIndex) {
    // The same slice in the new rows, found by its start and id.
    std::optional<SliceRef> found;
    if (selectedDetails_)
      for (std::size_t r = 0; r < lane.rows.size() && !found; ++r) {
        const SliceColumns& row = lane.rows[r];
        for (std::size_t i = row.firstStartingAtOrAfter(selectedDetails_->row.ts);
             i < row.size() && row.start[i] == selectedDetails_->row.ts; ++i)
          if (row.sliceId[i] == selectedSliceId_) found = SliceRef{laneIndex, r, i};
      }
    selected_ = found;  // the details panel keeps the slice either way
  }
  if (!search_.query().empty()) search_.run(session_.lanes(), search_.query());
}

void TraceView::drawSummaryLane(ImDrawList* dl, const Lane& lane, ImVec2 origin, float width, float rowH) {
  if (lane.trackKind == "engine") drawUncapturedRuns(dl, origin, width, rowH);
  const bool flatten = flat_ && lane.trackKind == "program";
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (std::size_t d = 0; d < lane.summary.size(); ++d) {
    const BusySummary& summary = lane.summary[d];
    const float y0 = origin.y + (flatten ? 0.0f : float(d) * rowH), y1 = y0 + rowH - 1;
    spans_.clear();
    summary.spans(axis_, spans_);
    lastBlockCount_ += std::int64_t(spans_.size());
    for (const auto& sp : spans_) {
      // Height: the share of the column's cycles covered.
      const Rgba colour = darker(categoryColour(summary.categoryName(sp.category), int(summary.depth())), 0.85f);
      dl->AddRectFilled(ImVec2(origin.x + float(sp.x0), y1 - (y1 - y0) * sp.busy), ImVec2(origin.x + float(sp.x1), y1),
                        colour);
    }
    if (mouse.y >= y0 && mouse.y < y1 + 1 && mouse.x >= origin.x && mouse.x < origin.x + width &&
        ImGui::IsWindowHovered()) {
      const auto at = std::find_if(spans_.begin(), spans_.end(), [&](const BusySpan& sp) {
        return mouse.x - origin.x >= sp.x0 && mouse.x - origin.x < sp.x1;
      });
      if (at != spans_.end())
        hoveredFold_ = summary.categoryName(at->category) + ", about " + std::to_string(int(at->busy * 100 + 0.5f)) +
                       " % busy (summary of " + formatCycles(std::int64_t(lane.sliceCount)) +
                       " slices: zoom in to see them)";
    }
  }
}

void TraceView::drawUncapturedRuns(ImDrawList* dl, ImVec2 origin, float width, float rowH) {
  // Runs without detail (beyond executionProfileProgramRunCount) have no
  // slices: outline them so the empty stretch of the timeline explains itself.
  // Runs closer than 3 px merge into one outline, so the cost follows pixels.
  const auto& runs = session_.runs();
  const double minGap = 3 * axis_.cyclesPerPixel();
  const float y0 = origin.y + 1, y1 = origin.y + rowH - 2;
  auto flush = [&](double start, double end, std::size_t count, std::int64_t firstId) {
    const float x0 = clampX(origin.x + axis_.pixelOf(start), origin.x, origin.x + width);
    const float x1 = std::max(x0 + 1, clampX(origin.x + axis_.pixelOf(end), origin.x, origin.x + width));
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(236, 236, 236, 255));
    dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(150, 150, 150, 255));
    if (x1 - x0 > 120) {
      char label[96];
      if (count == 1)
        std::snprintf(label, sizeof label, "Engine::run #%lld (not captured)", static_cast<long long>(firstId));
      else
        std::snprintf(label, sizeof label, "%zu runs not captured", count);
      const ImVec4 clip(x0 + 2, y0, x1 - 2, y1);
      dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(x0 + 4, y0 + 2), IM_COL32(110, 110, 110, 255), label,
                  nullptr, 0, &clip);
    }
  };
  // Runs are in id order, which is start order: skip to the first visible one.
  auto it = std::lower_bound(runs.begin(), runs.end(), axis_.startCycle(),
                             [](const traces::RunRow& r, double c) { return double(r.endCycle) < c; });
  bool open = false;
  double start = 0, end = 0;
  std::size_t count = 0;
  std::int64_t firstId = 0;
  for (; it != runs.end() && double(it->startCycle) <= axis_.endCycle(); ++it) {
    if (it->captured) continue;
    if (open && double(it->startCycle) - end <= minGap) {
      end = double(it->endCycle);
      ++count;
      continue;
    }
    if (open) flush(start, end, count, firstId);
    open = true;
    start = double(it->startCycle);
    end = double(it->endCycle);
    count = 1;
    firstId = it->id;
  }
  if (open) flush(start, end, count, firstId);
}

void TraceView::drawCounterLane(ImDrawList* dl, std::size_t laneIndex, ImVec2 origin, ImVec2 size) {
  const Lane& lane = *session_.lanes()[laneIndex];
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y - 1), IM_COL32(252, 252, 252, 255));
  // With a summary: the values of the window when it holds the view, else the summary's buckets.
  const bool fromSummary = lane.counterSummary && !windowHoldsView(laneIndex);
  if (!fromSummary && lane.counterTs.empty()) return;
  const double lo = lane.counterMin, hi = lane.counterMax > lane.counterMin ? lane.counterMax : lane.counterMin + 1;
  auto yOf = [&](double v) { return float(origin.y + size.y - 4 - (v - lo) / (hi - lo) * (size.y - 8)); };
  const auto columns =
      fromSummary ? lane.counterSummary->columns(axis_) : counterEnvelope(lane.counterTs, lane.counterValue, axis_);
  // Hover: the values under the mouse, true ones (a summary's least and greatest are values of the track).
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.y >= origin.y && mouse.y < origin.y + size.y && mouse.x >= origin.x && mouse.x < origin.x + size.x &&
      ImGui::IsWindowHovered())
    if (const auto at = columnNear(columns, int(std::floor(mouse.x - origin.x)), 3))
      hoveredFold_ = lane.title + ": " + describeCounterColumn(*at);
  ImVec2 previous;
  bool first = true;
  for (const auto& c : columns) {
    const float x = clampX(origin.x + c.px, origin.x, origin.x + size.x);
    if (!first) dl->AddLine(previous, ImVec2(x, yOf(c.first)), palette::kCounterLine, 1.5f);
    if (c.max > c.min) dl->AddLine(ImVec2(x, yOf(c.min)), ImVec2(x, yOf(c.max)), palette::kCounterLine, 1.5f);
    previous = ImVec2(x, yOf(c.last));
    first = false;
  }
  // Zoomed in far enough to tell samples apart: mark each one.
  if (columns.size() >= 2 && columns.size() < std::size_t(size.x / 6)) {
    for (const auto& c : columns)
      if (c.px >= 0 && c.px <= size.x) dl->AddCircleFilled(ImVec2(origin.x + c.px, yOf(c.last)), 2.5f, palette::kCounterLine);
  }
}

void TraceView::drawTileView(ImDrawList* dl, const Lane& bsp, ImVec2 origin, ImVec2 size) {
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), IM_COL32(248, 248, 248, 255));
  std::size_t li = 0;
  for (; li < session_.lanes().size(); ++li)
    if (session_.lanes()[li].get() == &bsp) break;
  TileWindow& window = tileWindows_[li];
  const double totalTiles = double(std::max<std::int64_t>(1, session_.tilesPerIpu()));
  window.clamp(totalTiles);
  const int rows = int(std::min<double>(size.y, std::ceil(window.tileCount)));
  const float rowPx = size.y / float(std::max(1, rows));
  for (std::size_t r = 0; r < bsp.rows.size(); ++r) {
    const SliceColumns& row = bsp.rows[r];
    blocks_.clear();
    foldRow(row, axis_, fold_, blocks_);
    for (const auto& b : blocks_) {
      const float x0 = float(origin.x + axis_.pixelOf(double(b.start)));
      const std::string& category = bsp.strings.at(foldCategory(row, b));
      if (b.folded() || row.phaseId.empty() || row.phaseId[b.first] < 0) {
        // Too narrow for per-tile detail: a faint block over every tile.
        const float x1 = std::max(x0 + 1, float(origin.x + axis_.pixelOf(double(b.end))));
        dl->AddRectFilled(ImVec2(x0, origin.y), ImVec2(x1, origin.y + size.y),
                          (categoryColour(category, 2) & 0x00ffffff) | 0x60000000);
        continue;
      }
      const auto& cycles = session_.tileCycles(row.phaseId[b.first], bsp.ipu);
      const auto maxima = tileRowMaxima(cycles, window, rows);
      const Rgba colour = categoryColour(category, 2);
      for (int k = 0; k < rows; ++k) {
        if (maxima[k] == 0) continue;
        const float x1 = std::max(x0 + 1, float(origin.x + axis_.pixelOf(double(b.start + maxima[k]))));
        dl->AddRectFilled(ImVec2(x0, origin.y + k * rowPx), ImVec2(x1, origin.y + (k + 1) * rowPx), colour);
      }
    }
  }
  char label[96];
  std::snprintf(label, sizeof label, "tiles %.0f-%.0f (ctrl+wheel)", window.firstTile,
                window.firstTile + window.tileCount - 1);
  dl->AddText(ImVec2(origin.x + 4, origin.y + 2), IM_COL32(70, 70, 70, 255), label);
  // Ctrl + wheel over the tile view zooms from all tiles down to one.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && ImGui::GetIO().KeyCtrl && ImGui::GetIO().MouseWheel != 0 &&
      ImGui::IsMouseHoveringRect(origin, ImVec2(origin.x + size.x, origin.y + size.y))) {
    window.zoom((mouse.y - origin.y) / size.y, std::pow(1.25, ImGui::GetIO().MouseWheel), totalTiles);
  }
}

void TraceView::handleInput(ImVec2 plotOrigin, ImVec2 plotSize, bool& changed) {
  ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsWindowHovered() &&
                       ImGui::IsMouseHoveringRect(plotOrigin, ImVec2(plotOrigin.x + plotSize.x, plotOrigin.y + plotSize.y));
  const float mx = io.MousePos.x - plotOrigin.x;
  const double lo = double(session_.startCycle()), hi = double(session_.endCycle());
  if (hovered && io.MouseWheel != 0 && !io.KeyCtrl) {
    axis_.zoomAround(mx, std::pow(1.25, io.MouseWheel));
    changed = true;
  }
  const bool selecting = ImGui::IsMouseDown(ImGuiMouseButton_Right) || (io.KeyShift && ImGui::IsMouseDown(ImGuiMouseButton_Left));
  if (hovered && (ImGui::IsMouseClicked(ImGuiMouseButton_Right) ||
                  (io.KeyShift && ImGui::IsMouseClicked(ImGuiMouseButton_Left))))
    selectionDragStart_ = axis_.cycleAt(mx);
  if (selectionDragStart_ && selecting) {
    const double now = axis_.cycleAt(mx);
    auto a = std::int64_t(std::llround(std::min(*selectionDragStart_, now)));
    auto b = std::int64_t(std::llround(std::max(*selectionDragStart_, now)));
    selection_ = std::make_pair(a, b);
  }
  if (selectionDragStart_ && !selecting) {
    selectionDragStart_.reset();
    if (selection_ && selection_->second - selection_->first < axis_.cyclesPerPixel() * 2) selection_.reset();
    updateStats(/*inBackground=*/true);
  }
  if (hovered && !io.KeyShift && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2)) {
    axis_.panPixels(io.MouseDelta.x);
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
    changed = true;
  }
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !io.KeyShift &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0).x == 0 && io.MouseDragMaxDistanceSqr[0] < 9) {
    selected_ = hovered_;
    selectedDetails_.reset();
    selectedSliceId_ = -1;
    if (selected_) {
      const Lane& lane = *session_.lanes()[selected_->lane];
      const auto& row = lane.rows[selected_->row];
      selectedSliceId_ = row.sliceId[selected_->index];
      selectedDetails_ = session_.details(lane, selectedSliceId_, row.start[selected_->index]);
    }
  }
  if (hovered && hovered_ && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    const auto& row = session_.lanes()[hovered_->lane]->rows[hovered_->row];
    const double s = double(row.start[hovered_->index]), e = double(row.end[hovered_->index]);
    const double pad = std::max(1.0, (e - s) * 0.05);
    axis_.fit(s - pad, e + pad);
    changed = true;
  }
  if (ImGui::IsWindowFocused() || hovered) {
    const float step = plotSize.x * 0.02f;
    if (ImGui::IsKeyDown(GLFW_KEY_W)) { axis_.zoomAround(plotSize.x / 2, 1.05); changed = true; }
    if (ImGui::IsKeyDown(GLFW_KEY_S)) { axis_.zoomAround(plotSize.x / 2, 1 / 1.05); changed = true; }
    if (ImGui::IsKeyDown(GLFW_KEY_A)) { axis_.panPixels(step); changed = true; }
    if (ImGui::IsKeyDown(GLFW_KEY_D)) { axis_.panPixels(-step); changed = true; }
    if (ImGui::IsKeyPressed(GLFW_KEY_F, false)) { fitCapturedRuns(); changed = true; }
    if (ImGui::IsKeyPressed(GLFW_KEY_HOME, false)) { fitAll(); changed = true; }
  }
  if (changed) axis_.clampTo(lo, hi);

  // Hover details: one indexed query when the hovered slice changes.
  const std::int64_t hoveredId =
      hovered_ ? session_.lanes()[hovered_->lane]->rows[hovered_->row].sliceId[hovered_->index] : -1;
  if (hoveredId != hoveredSliceId_) {
    hoveredSliceId_ = hoveredId;
    hoveredDetails_.reset();
    if (hovered_) {
      const Lane& lane = *session_.lanes()[hovered_->lane];
      hoveredDetails_ = session_.details(lane, hoveredId, lane.rows[hovered_->row].start[hovered_->index]);
    }
  }
  if (hovered && hoveredDetails_) {
    const auto& d = *hoveredDetails_;
    ImGui::SetTooltip("%s\n%s, %s\nstart %s", d.row.name.c_str(), d.row.category.c_str(),
                      formatCyclesWithTime(d.row.dur, session_.clockHz()).c_str(),
                      formatCycles(d.row.ts).c_str());
  } else if (hovered && !hoveredFold_.empty()) {
    ImGui::SetTooltip("%s", hoveredFold_.c_str());
  }
}

void TraceView::drawSidePanel() {
  collectStats();
  const double hz = session_.clockHz();
  ImGui::TextUnformatted("Search slices by name");
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 70);
  if (ImGui::InputText("##search", searchInput_, sizeof searchInput_, ImGuiInputTextFlags_EnterReturnsTrue)) {
    if (search_.query() == searchInput_ && search_.count() > 0) nextMatch();
    else search(searchInput_);
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("##previous", ImGuiDir_Left)) previousMatch();
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) nextMatch();
  if (!search_.query().empty()) {
    if (search_.count() == 0) ImGui::TextDisabled("no slice named like '%s'", search_.query().c_str());
    else ImGui::Text("match %zu of %zu", search_.position() + 1, search_.count());
  }
  ImGui::Spacing();
  ImGui::TextUnformatted("Selected slice");
  ImGui::Separator();
  if (selectedDetails_) {
    const auto& d = *selectedDetails_;
    ImGui::TextWrapped("Name: %s", d.row.name.c_str());
    ImGui::Text("Category: %s", d.row.category.c_str());
    ImGui::Text("Track: %s", d.trackName.c_str());
    ImGui::Text("Cycles: %s", formatCyclesWithTime(d.row.dur, hz).c_str());
    ImGui::Text("Start: %s", formatCyclesWithTime(d.row.ts, hz).c_str());
    if (d.row.runId >= 0) ImGui::Text("Engine::run #%lld", static_cast<long long>(d.row.runId));
    if (d.row.bytes >= 0) ImGui::Text("Bytes: %s", formatCycles(d.row.bytes).c_str());
    if (!d.programPath.empty()) ImGui::TextWrapped("Program: %s", d.programPath.c_str());
    if (!d.layer.empty() || !d.op.empty()) ImGui::Text("Workload: %s / %s", d.layer.c_str(), d.op.c_str());
  } else {
    ImGui::TextDisabled("click a slice (double-click fits it)");
  }
  ImGui::Spacing();
  ImGui::TextUnformatted("Range statistics");
  ImGui::Separator();
  if (!selection_) {
    ImGui::TextDisabled("right-drag or shift-drag to select a range");
    return;
  }
  if (!statsError_.empty()) {
    ImGui::TextWrapped("%s", statsError_.c_str());
    return;
  }
  if (!stats_) {
    if (statsJob_.valid()) ImGui::TextDisabled("computing...");
    return;
  }
  const auto& s = *stats_;
  ImGui::Text("From %s", formatCycles(s.from).c_str());
  ImGui::Text("To   %s", formatCycles(s.to).c_str());
  ImGui::Text("Span %s", formatCyclesWithTime(s.cycles, hz).c_str());
  for (const auto& ipu : s.ipus) {
    ImGui::Spacing();
    ImGui::Text("IPU %lld", static_cast<long long>(ipu.ipu));
    const std::pair<const char*, std::int64_t> parts[] = {{"compute", ipu.compute},
                                                          {"exchange", ipu.exchange},
                                                          {"IPU link", ipu.ipuLink},
                                                          {"collective", ipu.collective},
                                                          {"sync", ipu.sync},
                                                          {"stream copy", ipu.streamCopy},
                                                          {"Streaming Mem", ipu.streamingMemory},
                                                          {"idle", ipu.idle}};
    const Rgba colours[] = {computeColour(2), palette::kExchange,      palette::kIpuLink,         palette::kCollective,
                            palette::kSync,   palette::kStreamCopyMid, palette::kStreamingMemory, palette::kIdle};
    for (std::size_t i = 0; i < 8; ++i) {
      // IPU link and collective: multi-IPU only; Streaming Memory: offloaded state only.
      if ((i == 2 || i == 3 || i == 6) && parts[i].second == 0) continue;
      ImGui::ColorButton("##c", ImGui::ColorConvertU32ToFloat4(colours[i]), ImGuiColorEditFlags_NoTooltip,
                         ImVec2(10, 10));
      ImGui::SameLine();
      ImGui::Text("%-11s %8s  %s", parts[i].first, pct(s.share(parts[i].second)).c_str(),
                  formatCycles(parts[i].second).c_str());
    }
    if (ipu.hasTileDetail)
      ImGui::Text("tile balance %s, parallel efficiency %s", pct(ipu.tileBalance).c_str(),
                  pct(ipu.parallelEfficiency).c_str());
    else
      ImGui::TextDisabled("no tile detail in range");
  }
  ImGui::Spacing();
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("(each cycle counted once: compute > exchange > IPU link > sync > stream copy > Streaming Memory > idle)");
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  ImGui::Text("IPU waiting for the host: %s  %s", pct(s.share(s.ipuWaitingForHostCycles)).c_str(),
              formatCycles(s.ipuWaitingForHostCycles).c_str());
  ImGui::Text("  of which StreamCopy Begin: %s", formatCycles(s.hostWaitCycles).c_str());
  ImGui::Text("Host-link transfer (Mid): %s", formatCycles(s.hostTransferCycles).c_str());
  ImGui::Text("Compute/IO overlap: %s of transfer cycles", pct(s.computeIoOverlap()).c_str());
  ImGui::Text("To device: %s bytes, to host: %s bytes", formatCycles(s.bytesToDevice).c_str(),
              formatCycles(s.bytesToHost).c_str());
  for (const auto& [stream, bytes] : s.bytesByStream)
    ImGui::Text("  %s %s: %s", bytes.toHost ? "<-" : "->", stream.c_str(), formatCycles(bytes.bytes).c_str());
}

}  // namespace ipusim::viewer
