#include "viewer/shell/app.hpp"

#include "profiler/analysis/run_summary.hpp"
#include "viewer/core/colours.hpp"
#include "viewer/core/error_text.hpp"
#include "viewer/core/memory_tooltip.hpp"
#include "viewer/core/run_framing.hpp"
#include "viewer/core/time_axis.hpp"

#include <imgui.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <iostream>
#include <stdexcept>

namespace ipusim::viewer {

namespace {

// Percentages as "12.3 %" (deltas in points), large whole numbers (cycles,
// steps) with thousands separators, the rest with six significant digits.
std::string formatCompareValue(double v, bool percent, bool signedDelta) {
  if (std::isnan(v)) return "n/a";  // (nothing measured: no captured run)
  char text[64];
  if (percent) {
    std::snprintf(text, sizeof text, signedDelta ? "%+.1f pt" : "%.1f %%", v * 100);
    return text;
  }
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 9e18) {
    const std::string digits = formatCycles(std::llround(v));
    return signedDelta && v > 0 ? "+" + digits : digits;
  }
  std::snprintf(text, sizeof text, signedDelta ? "%+.6g" : "%.6g", v);
  return text;
}

}  // namespace

ViewKind viewKindFromString(const std::string& name) {
  if (name == "trace") return ViewKind::Trace;
  if (name == "summary") return ViewKind::Summary;
  if (name == "memory") return ViewKind::Memory;
  if (name == "operations") return ViewKind::Operations;
  if (name == "liveness") return ViewKind::Liveness;
  if (name == "insights") return ViewKind::Insights;
  if (name == "compare") return ViewKind::Compare;
  if (name == "start") return ViewKind::Start;
  throw std::invalid_argument("--view: unknown view '" + name +
                              "' (expected trace, summary, operations, liveness, insights, memory, compare or start)");
}

ViewerApp::ViewerApp(RecentProfiles recent) : recent_(std::move(recent)) {}

bool ViewerApp::open(const std::string& path, bool background) {
  try {
    OpenProfile p;
    // (A POD256's 16 profiles take about half a minute to combine: said once on stderr, before any window.)
    p.source = std::make_unique<profiler::analysis::ProfileSource>(path, [&](std::uint64_t done, std::uint64_t total) {
      if (done == 1)
        std::cerr << "ipusim-view: " << path << ": combining its instance profiles (" << total << " steps)\n";
    });
    p.session = std::make_unique<ProfileSession>(p.source->path(), background);
    p.session->setShownPath(path);
    p.trace = std::make_unique<TraceView>(*p.session);
    if (openOnCapturedRuns_) p.trace->openOnCapturedRuns(background);
    profiles_.push_back(std::move(p));
    recent_.remember(path);
    compareRows_.reset();
    return true;
  } catch (const std::exception& e) {
    errors_.push_back(errorText(e));
    return false;
  }
}

void ViewerApp::setRange(std::int64_t from, std::int64_t to) {
  for (auto& p : profiles_) p.trace->setRange(from, to);
  compareFramed_ = true;
}

void ViewerApp::setRunRange(std::int64_t firstRun, std::int64_t lastRun) {
  for (auto& p : profiles_) p.trace->setRunRange(firstRun, lastRun);
  compareFramed_ = true;
}

bool ViewerApp::selectSliceNamed(const std::string& name) {
  bool found = false;
  for (auto& p : profiles_) {
    p.session->waitUntilVisibleLoaded();
    found = p.trace->search(name) > 0 || found;
    if (ensureOperations(p) && p.operations->selectNamed(name)) {
      p.trace->highlightPrograms(p.operations->selectedPrograms());
      found = true;
    }
  }
  return found;
}

void ViewerApp::waitUntilLoaded() {
  for (auto& p : profiles_) p.session->waitUntilVisibleLoaded();
}

void ViewerApp::refuseDamagedProfiles() {
  for (std::size_t i = 0; i < profiles_.size();) {
    const std::string error = profiles_[i].session->verificationError();
    if (error.empty()) {
      ++i;
      continue;
    }
    // The message names the file and the check (ProfileError's convention).
    errors_.push_back(error + " (refused by the checks that run after opening; nothing of it is shown)");
    profiles_.erase(profiles_.begin() + std::ptrdiff_t(i));
    compareRows_.reset();
    requested_ = ViewKind::Start;
  }
  current_ = std::min(current_, profiles_.empty() ? 0 : profiles_.size() - 1);
}

bool ViewerApp::waitForChecks() {
  for (auto& p : profiles_) p.session->waitForChecks();
  const std::size_t before = errors_.size();
  refuseDamagedProfiles();
  return errors_.size() == before;
}

void ViewerApp::frame() {
  refuseDamagedProfiles();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("ipusim-view", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  if (profiles_.empty()) {
    drawStartPage();
    ImGui::End();
    return;
  }
  if (profiles_.size() > 1) {
    for (std::size_t i = 0; i < profiles_.size(); ++i) {
      if (i) ImGui::SameLine();
      if (ImGui::RadioButton(profiles_[i].session->shownPath().c_str(), current_ == i)) current_ = i;
    }
  }
  OpenProfile& p = profiles_[std::min(current_, profiles_.size() - 1)];
  auto flagsFor = [&](ViewKind v) {
    return requested_ && *requested_ == v ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
  };
  if (ImGui::BeginTabBar("views")) {
    if (ImGui::BeginTabItem("Start", nullptr, flagsFor(ViewKind::Start))) {
      drawStartPage();
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Execution trace", nullptr, flagsFor(ViewKind::Trace))) {
      drawTrace(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Summary", nullptr, flagsFor(ViewKind::Summary))) {
      drawSummary(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Operations", nullptr, flagsFor(ViewKind::Operations))) {
      drawOperations(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Liveness", nullptr, flagsFor(ViewKind::Liveness))) {
      drawLiveness(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Insights", nullptr, flagsFor(ViewKind::Insights))) {
      drawInsights(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Memory", nullptr, flagsFor(ViewKind::Memory))) {
      drawMemory(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Compare", nullptr, flagsFor(ViewKind::Compare))) {
      drawCompare();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  requested_.reset();
  ImGui::End();
}

void ViewerApp::drawStartPage() {
  ImGui::TextUnformatted("ipusim-view: execution traces of ipusim profiles");
  ImGui::Separator();
  if (!errors_.empty()) {
    ImGui::TextColored(ImVec4(0.75f, 0.05f, 0.05f, 1), "Could not open:");
    for (const auto& e : errors_) ImGui::BulletText("%s", e.c_str());
    ImGui::Separator();
  }
  if (!profiles_.empty()) {
    ImGui::TextUnformatted("Open profiles:");
    for (const auto& p : profiles_)
      ImGui::BulletText("%s  (%s slices)", p.session->shownPath().c_str(),
                        formatCycles(p.session->sliceCount()).c_str());
    ImGui::Separator();
  }
  ImGui::TextUnformatted("Open a profile (profile.pop or its report directory):");
  ImGui::SetNextItemWidth(600);
  const bool entered = ImGui::InputText("##path", pathInput_, sizeof pathInput_, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || entered) && pathInput_[0]) open(pathInput_);
  ImGui::Spacing();
  ImGui::TextUnformatted("Recent profiles:");
  if (recent_.paths().empty()) ImGui::TextDisabled("none yet (%s)", recent_.file().c_str());
  std::string toOpen;
  for (const auto& path : recent_.paths())
    if (ImGui::Selectable(path.c_str())) toOpen = path;
  if (!toOpen.empty()) open(toOpen);
}

void ViewerApp::drawTrace(OpenProfile& p) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = 380;
  ImGui::BeginChild("trace", ImVec2(avail.x - side - 8, avail.y), false, ImGuiWindowFlags_NoScrollWithMouse);
  p.trace->draw("lanes", ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("side", ImVec2(side, avail.y), true);
  p.trace->drawSidePanel();
  ImGui::EndChild();
}

void ViewerApp::drawSummary(OpenProfile& p) {
  const ProfileSession& s = *p.session;
  ImGui::BeginChild("summary", ImVec2(ImGui::GetContentRegionAvail().x * 0.5f, 0), true);
  ImGui::Text("Profile: %s", s.shownPath().c_str());
  ImGui::Text("Workload: %s", s.metaValue("workload", "?").c_str());
  if (const std::string task = s.metaValue("task", ""); !task.empty()) ImGui::Text("Task: %s", task.c_str());
  ImGui::Text("Target: %s, %lld IPU(s) x %lld tiles, %s Hz", s.metaValue("arch", "?").c_str(),
              static_cast<long long>(s.numIpus()), static_cast<long long>(s.tilesPerIpu()),
              s.metaValue("clock_hz", "?").c_str());
  // The runs as `report` counts them (profiler/analysis/run_summary.hpp), by entry point when
  // there are several (fit with validation: "train 225 runs, validation 36 runs").
  try {
    const profiler::analysis::RunSummary runs = profiler::analysis::summarizeRuns(s.runs(), s.path());
    ImGui::Text("Engine::run calls: %lld (%lld with detail), steps: %lld", static_cast<long long>(runs.runs),
                static_cast<long long>(runs.capturedRuns), static_cast<long long>(runs.steps));
    if (runs.byEntryPoint.size() > 1)
      for (const auto& e : runs.byEntryPoint)
        ImGui::BulletText("%s: %lld runs, %lld steps", e.name.c_str(), static_cast<long long>(e.runs),
                          static_cast<long long>(e.steps));
  } catch (const std::exception& e) {
    ImGui::TextWrapped("Engine::run calls: %s", e.what());
  }
  ImGui::Text("Total: %s", formatCyclesWithTime(s.jobCycles(), s.clockHz()).c_str());
  if (const auto wait = s.hostWaitIfReady(); wait && !wait->measured())
    ImGui::Text("IPU waiting for the host: n/a (no run captured to measure it over)");
  else if (wait)
    ImGui::Text("IPU waiting for the host: %.1f%% (captured runs and the host time before each)",
                100.0 * wait->share());
  else
    ImGui::TextDisabled("IPU waiting for the host: computing (while the profile is checked)...");
  ImGui::Text("Slices: %s", formatCycles(s.sliceCount()).c_str());
  ImGui::Separator();
  ImGui::TextUnformatted("Engine options");
  const std::string options = s.metaValue("engine_options", "");
  if (!options.empty()) {
    try {
      // Engine options are one flat object; anything else is shown as it is
      // (dump() recurses: a value nested 100,000 deep would overflow the stack).
      const auto parsed = nlohmann::json::parse(options);
      const bool flat = parsed.is_object() && std::all_of(parsed.begin(), parsed.end(), [](const nlohmann::json& v) {
                          return v.is_primitive();
                        });
      ImGui::TextUnformatted(flat ? parsed.dump(2).c_str() : options.c_str());
    } catch (const std::exception&) {
      ImGui::TextUnformatted(options.c_str());
    }
  }
  ImGui::Separator();
  if (ImGui::BeginTable("meta", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
    for (const auto& [k, v] : s.meta()) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(k.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", v.c_str());
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("programs", ImVec2(0, 0), true);
  ImGui::TextUnformatted("Program tree (select to highlight its slices in the trace)");
  ImGui::Separator();
  for (std::int64_t root : s.programs().roots()) drawProgramNode(p, root);
  ImGui::EndChild();
}

void ViewerApp::drawProgramNode(OpenProfile& p, std::int64_t id) {
  const auto* row = p.session->programs().find(id);
  if (!row) return;
  const auto& children = p.session->programs().children(id);
  std::string category = "program";
  if (row->kind == "Execute") category = "compute";
  else if (row->kind == "Copy") category = "exchange";
  else if (row->kind == "StreamCopy") category = "stream_copy";
  else if (row->kind == "Sync") category = "sync";
  ImGui::ColorButton("##k", ImGui::ColorConvertU32ToFloat4(categoryColour(category, 1)),
                     ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
  ImGui::SameLine();
  ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_OpenOnArrow | ImGuiTreeNodeFlags_DefaultOpen;
  if (children.empty()) flags |= ImGuiTreeNodeFlags_Leaf;
  if (selectedProgram_ == id) flags |= ImGuiTreeNodeFlags_Selected;
  std::string label = programLabel(*row);
  if (!row->layer.empty()) label += "  [" + row->layer + "/" + row->op + "]";
  const bool open = ImGui::TreeNodeEx(reinterpret_cast<void*>(static_cast<intptr_t>(id)), flags, "%s", label.c_str());
  if (ImGui::IsItemClicked()) {
    selectedProgram_ = selectedProgram_ == id ? -1 : id;
    p.trace->highlightProgram(selectedProgram_);
  }
  if (open) {
    for (std::int64_t c : children) drawProgramNode(p, c);
    ImGui::TreePop();
  }
}

bool ViewerApp::loading() const {
  for (const auto& p : profiles_)
    if (p.session && !p.session->fullyLoaded()) return true;
  return false;
}

void ViewerApp::drawMemory(OpenProfile& p) {
  const ProfileSession& s = *p.session;
  if (!p.memory) {
    std::int64_t capacity = 0;
    try {
      // The profiler writes tile_memory_bytes; bytes_per_tile is SCHEMA.md's older name.
      capacity = std::stoll(s.metaValue("tile_memory_bytes", s.metaValue("bytes_per_tile", "0")));
    } catch (const std::exception&) {
      capacity = 0;
    }
    p.memory = summarizeMemory(s.tileMemory(), s.tileMemoryPeaks(), s.ipusHeld() * s.tilesPerIpu(), capacity);
  }
  const MemorySummary& m = *p.memory;
  ImGui::Text("Tile memory (%s): %zu tiles, max %s bytes on a tile, capacity %s bytes per tile, %lld tile(s) over",
              m.fromPeaks ? "peak per tile" : "sum of tensors per tile: profile has no peaks", m.tileCount(), formatCycles(m.maxTotal).c_str(), m.capacity ? formatCycles(m.capacity).c_str() : "?",
              static_cast<long long>(m.tilesOverCapacity));
  // Legend: each category's colour and its bytes over all tiles.
  ImGui::TextUnformatted("Categories:");
  for (std::size_t c = 0; c < m.categories.size(); ++c) {
    const std::int64_t bytes = m.categoryBytes[c];
    ImGui::SameLine(0, c == 0 ? 8 : 18);
    ImGui::ColorButton("##m", ImGui::ColorConvertU32ToFloat4(memoryCategoryColour(m.categories[c], c)),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
    ImGui::SameLine();
    ImGui::Text("%s (%s bytes)", m.categories[c].c_str(), formatCycles(bytes).c_str());
  }
  if (m.tileCount() == 0) {
    ImGui::TextDisabled("no tile_memory rows in this profile");
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Bar chart: one column per pixel; each column stacks the busiest tile it covers.
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float w = avail.x, h = std::max(100.0f, avail.y * 0.45f);
  dl->AddRectFilled(o, ImVec2(o.x + w, o.y + h), IM_COL32(252, 252, 252, 255));
  // Against the capacity when the fullest tile uses a fair share of it; else
  // against the fullest tile (bars of 0.2 % of the capacity would not show).
  const bool capacityOnScale = m.capacity > 0 && m.capacity <= 4 * m.maxTotal;
  const double top = double(capacityOnScale ? std::max(m.maxTotal, m.capacity) : m.maxTotal) * 1.05 + 1;
  const std::size_t n = m.tileCount();
  for (int px = 0; px < int(w); ++px) {
    const std::size_t t0 = std::size_t(double(px) / w * n), t1 = std::max(t0 + 1, std::size_t(double(px + 1) / w * n));
    std::size_t worst = t0;
    for (std::size_t t = t0; t < std::min(t1, n); ++t)
      if (m.total[t] > m.total[worst]) worst = t;
    if (worst >= n) break;
    float y = o.y + h;
    for (std::size_t c = 0; c < m.categories.size(); ++c) {
      const float bh = float(double(m.bytes[worst][c]) / top * h);
      dl->AddRectFilled(ImVec2(o.x + px, y - bh), ImVec2(o.x + px + 1, y), memoryCategoryColour(m.categories[c], c));
      y -= bh;
    }
  }
  // The bar under the mouse: its tile's bytes by category.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsMouseHoveringRect(o, ImVec2(o.x + w, o.y + h))) {
    const int px = int(mouse.x - o.x);
    const std::size_t t0 = std::size_t(double(px) / w * n), t1 = std::max(t0 + 1, std::size_t(double(px + 1) / w * n));
    std::size_t worst = std::min(t0, n - 1);
    for (std::size_t t = t0; t < std::min(t1, n); ++t)
      if (m.total[t] > m.total[worst]) worst = t;
    ImGui::SetTooltip("%s", tileMemoryTooltip(m, s.tileMemory(), worst, s.tilesPerIpu()).c_str());
  }
  if (m.capacity > 0 && !capacityOnScale) {
    char note[160];
    std::snprintf(note, sizeof note, "scale: fullest tile; capacity %s bytes is off scale (fullest tile uses %.2f %%)",
                  formatCycles(m.capacity).c_str(), 100.0 * double(m.maxTotal) / double(m.capacity));
    dl->AddText(ImVec2(o.x + 4, o.y + 2), IM_COL32(120, 120, 120, 255), note);
  }
  if (capacityOnScale) {
    const float cy = o.y + h - float(double(m.capacity) / top * h);
    dl->AddLine(ImVec2(o.x, cy), ImVec2(o.x + w, cy), IM_COL32(200, 0, 0, 255), 2);
    dl->AddText(ImVec2(o.x + 4, cy - 16), IM_COL32(200, 0, 0, 255), "capacity");
  }
  ImGui::Dummy(ImVec2(w, h + 8));
  // Tile map heat map: tiles in a grid, colour by use against the capacity (or the max).
  ImGui::Text("Tile map: bytes per tile, from white (0) to red (%s)",
              capacityOnScale ? "capacity" : "the fullest tile");
  const ImVec2 g = ImGui::GetCursorScreenPos();
  const int columns = int(std::ceil(std::sqrt(double(n) * 4)));
  const int rows = int((n + columns - 1) / columns);
  const float cell = std::max(2.0f, std::min({24.0f, w / columns, (ImGui::GetContentRegionAvail().y - 4) / std::max(1, rows)}));
  const double scale = double(capacityOnScale ? m.capacity : std::max<std::int64_t>(1, m.maxTotal));
  for (std::size_t t = 0; t < n; ++t) {
    const float x = g.x + float(t % columns) * cell, y = g.y + float(t / columns) * cell;
    const double f = std::clamp(double(m.total[t]) / scale, 0.0, 1.0);
    const Rgba c = m.total[t] > (m.capacity > 0 ? m.capacity : INT64_MAX)
                       ? rgb(120, 0, 0)
                       : rgb(unsigned(255 - 30 * f), unsigned(245 - 190 * f), unsigned(235 - 180 * f));
    dl->AddRectFilled(ImVec2(x, y), ImVec2(x + cell - 1, y + cell - 1), c);
    if (ImGui::IsMouseHoveringRect(ImVec2(x, y), ImVec2(x + cell, y + cell)))
      ImGui::SetTooltip("%s", tileMemoryTooltip(m, s.tileMemory(), t, s.tilesPerIpu()).c_str());
  }
  ImGui::Dummy(ImVec2(w, rows * cell));
}

void ViewerApp::drawCompare() {
  if (profiles_.size() < 2) {
    ImGui::TextDisabled("open two profiles to compare: ipusim-view A B");
    return;
  }
  OpenProfile& a = profiles_[0];
  OpenProfile& b = profiles_[1];
  if (ImGui::RadioButton("aligned at first captured run (same scale)", alignAtStart_)) alignAtStart_ = true;
  ImGui::SameLine();
  if (ImGui::RadioButton("each fitted", !alignAtStart_)) alignAtStart_ = false;
  if (!compareRows_ && compareError_.empty()) {
    try {
      compareRows_ = compareProfiles(*a.session, *b.session);
    } catch (const std::exception& e) {
      compareError_ = errorText(e);
    }
  }
  if (!compareFramed_) {
    // Open on the first captured runs of the longer-running profile: both
    // show the same span from their first captured run, so the faster
    // profile visibly covers more steps in it.
    if (const auto window = compareWindow(a.session->runs(), b.session->runs()))
      a.trace->showCycles(window->shownFrom, window->shownTo);
    a.trace->dropOpeningSelection();
    b.trace->dropOpeningSelection();
    compareFramed_ = true;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // The table scrolls (header frozen): a third of the height, at least 230 px.
  const float tableH = std::max(230.0f, avail.y * 0.34f), each = (avail.y - tableH - 12) / 2;
  ImGui::BeginChild("cmpA", ImVec2(avail.x, each), true, ImGuiWindowFlags_NoScrollWithMouse);
  const bool changedA = a.trace->draw("lanesA", ImGui::GetContentRegionAvail(), true);
  ImGui::EndChild();
  // Synchronise: B follows A's offset from its run start and A's scale.
  if (alignAtStart_) {
    // Each profile's anchor is the start of its first captured run.
    TimeAxis& ax = a.trace->axis();
    const double anchorA = double(alignmentAnchor(a.session->runs(), a.session->startCycle()));
    const double anchorB = double(alignmentAnchor(b.session->runs(), b.session->startCycle()));
    const double offset = ax.startCycle() - anchorA;
    b.trace->showCycles(anchorB + offset, anchorB + offset + ax.cyclesPerPixel() * ax.widthPx());
  }
  (void)changedA;  // each fitted: B keeps its own axis, navigated on its own
  ImGui::BeginChild("cmpB", ImVec2(avail.x, each), true, ImGuiWindowFlags_NoScrollWithMouse);
  b.trace->draw("lanesB", ImGui::GetContentRegionAvail(), true);
  ImGui::EndChild();
  if (!compareError_.empty()) {
    ImGui::TextWrapped("%s", compareError_.c_str());
    return;
  }
  if (compareRows_ && ImGui::BeginTable("deltas", 5,
                                        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                            ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable,
                                        ImVec2(0, tableH))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("Metric");
    ImGui::TableSetupColumn("A");
    ImGui::TableSetupColumn("B");
    ImGui::TableSetupColumn("B - A");
    ImGui::TableSetupColumn("B / A");
    ImGui::TableHeadersRow();
    for (const auto& r : *compareRows_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.metric.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(formatCompareValue(r.a, r.percent, false).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(formatCompareValue(r.b, r.percent, false).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(formatCompareValue(r.delta(), r.percent, true).c_str());
      ImGui::TableNextColumn();
      if (r.a != 0 && !std::isnan(r.ratio())) ImGui::Text("%.3fx", r.ratio());
    }
    ImGui::EndTable();
  }
}

}  // namespace ipusim::viewer
