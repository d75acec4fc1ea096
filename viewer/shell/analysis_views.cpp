// The analysis tabs of ipusim-view: Operations (the operations summary, a
// row selects its slices in the trace), Liveness and Insights. Each shows
// what profiler/analysis computes for `ipusim report --ops`, `report
// --liveness` and `ipusim insights`: one definition per figure.
#include "viewer/core/colours.hpp"
#include "viewer/core/error_text.hpp"
#include "viewer/core/memory_tooltip.hpp"
#include "viewer/core/time_axis.hpp"
#include "viewer/shell/app.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ipusim::viewer {

namespace analysis = profiler::analysis;

namespace {

std::string percent(double fraction) {
  if (std::isnan(fraction)) return "n/a";  // (nothing measured: no captured run)
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", fraction * 100);
  return text;
}

// Runs `build` once; an exception becomes the tab's error text.
template <typename Build>
bool ensureBuilt(OpenProfile& p, Build&& build) {
  if (!p.analysisError.empty()) {
    ImGui::TextWrapped("%s", p.analysisError.c_str());
    return false;
  }
  try {
    build();
  } catch (const std::exception& e) {
    p.analysisError = errorText(e);
    ImGui::TextWrapped("%s", p.analysisError.c_str());
    return false;
  }
  return true;
}

}  // namespace

bool ViewerApp::ensureOperations(OpenProfile& p) {
  if (p.operations) return true;
  if (!p.analysisError.empty()) return false;
  try {
    p.operations.emplace(analysis::summarizeOperations(p.session->reader()));
  } catch (const std::exception& e) {
    p.analysisError = errorText(e);
  }
  return p.operations.has_value();
}

void ViewerApp::drawOperations(OpenProfile& p) {
  if (!ensureOperations(p)) {
    ImGui::TextWrapped("%s", p.analysisError.c_str());
    return;
  }
  OperationsTable& table = *p.operations;
  const auto& s = table.summary();
  const char* unit = s.byStep ? "step" : "run";
  ImGui::Text("Operations over %lld captured %ss: %s cycles per %s, of which compute + exchange + sync (+ Streaming "
              "Memory) %s",
              static_cast<long long>(s.windows), unit, formatCycles(std::llround(s.perWindow(s.windowCycles))).c_str(),
              unit, formatCycles(std::llround(s.perWindow(s.busyCycles))).c_str());
  if (s.peakFlopsPerSecond() > 0) {
    ImGui::SameLine();
    ImGui::Text("; AMP float peak %.1f TFLOP/s", s.peakFlopsPerSecond() / 1e12);
  }
  ImGui::TextDisabled("Click a column to sort, a row to highlight its slices in the execution trace.");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("operations", 12, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  const OperationColumn columns[] = {OperationColumn::Name,     OperationColumn::Pass,  OperationColumn::Cycles,
                                     OperationColumn::Share,    OperationColumn::Compute, OperationColumn::Exchange,
                                     OperationColumn::Sync,     OperationColumn::StreamingMemory,
                                     OperationColumn::Flops,    OperationColumn::FlopRate, OperationColumn::Tiles,
                                     OperationColumn::Memory};
  const std::string perUnit = std::string("/") + unit;
  const std::string headers[] = {"layer / op", "pass",        "cycles" + perUnit, "share",  "compute",
                                 "exchange",   "sync",        "Streaming Memory", "FLOPs" + perUnit,
                                 "GFLOP/s (of peak)",         "tiles",            "memory (B)"};
  for (int c = 0; c < 12; ++c)
    ImGui::TableSetupColumn(headers[c].c_str(), c == 2 ? ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending
                                                       : ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs(); sort && sort->SpecsDirty && sort->SpecsCount > 0) {
    table.sortBy(columns[sort->Specs[0].ColumnIndex], sort->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
    sort->SpecsDirty = false;
  }
  for (std::size_t i = 0; i < table.rows().size(); ++i) {
    const auto& r = table.rows()[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string name = r.layer.empty() ? "(no debug info)" : r.layer + "/" + r.op;
    if (ImGui::Selectable(name.c_str(), table.selected() == std::int64_t(i), ImGuiSelectableFlags_SpanAllColumns)) {
      table.select(table.selected() == std::int64_t(i) ? -1 : std::int64_t(i));
      p.trace->highlightPrograms(table.selectedPrograms());
    }
    const double rate = s.flopsPerSecond(r);
    char rateText[64];
    std::snprintf(rateText, sizeof rateText, "%.2f (%s)", rate / 1e9,
                  s.peakFlopsPerSecond() > 0 ? percent(rate / s.peakFlopsPerSecond()).c_str() : "?");
    const std::string cells[] = {r.pass,
                                 formatCycles(std::llround(s.perWindow(r.cycles()))),
                                 percent(s.share(r)),
                                 formatCycles(std::llround(s.perWindow(r.compute))),
                                 formatCycles(std::llround(s.perWindow(r.exchange))),
                                 formatCycles(std::llround(s.perWindow(r.sync))),
                                 formatCycles(std::llround(s.perWindow(r.streamingMemory))),
                                 formatCycles(std::llround(s.perWindow(r.flops))),
                                 rateText,
                                 std::to_string(r.tiles),
                                 groupThousands(r.memoryBytes)};
    for (const auto& cell : cells) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell.c_str());
    }
  }
  ImGui::EndTable();
}

void ViewerApp::drawLiveness(OpenProfile& p) {
  if (!ensureBuilt(p, [&] {
        if (!p.liveness) p.liveness = analysis::summarizeLiveness(p.session->reader());
      }))
    return;
  const auto& l = *p.liveness;
  if (!l.available) {
    ImGui::TextDisabled("no liveness in this profile (written before the program_order table existed)");
    return;
  }
  ImGui::Text("Entry point %lld '%s': %zu program steps; always live %s B; peak %s B", static_cast<long long>(l.entryPoint),
              l.entryName.c_str(), l.steps.size(), groupThousands(l.alwaysLiveBytes).c_str(),
              groupThousands(l.peakBytes()).c_str());
  if (l.steps.empty()) return;
  // The chart: not-always-live bytes per step over the always-live base.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, h = 180;
  dl->AddRectFilled(o, ImVec2(o.x + w, o.y + h), IM_COL32(252, 252, 252, 255));
  const double top = double(l.peakBytes()) * 1.05 + 1;
  const std::size_t n = l.steps.size();
  const float barW = w / float(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x0 = o.x + float(i) * barW, x1 = std::max(x0 + 1, o.x + float(i + 1) * barW - (barW > 3 ? 1 : 0));
    const float baseH = float(double(l.alwaysLiveBytes) / top * h);
    const float varH = float(double(l.steps[i].notAlwaysLiveBytes) / top * h);
    dl->AddRectFilled(ImVec2(x0, o.y + h - baseH), ImVec2(x1, o.y + h), IM_COL32(150, 170, 200, 255));
    const bool peak = std::int64_t(i) == l.peakPosition;
    dl->AddRectFilled(ImVec2(x0, o.y + h - baseH - varH), ImVec2(x1, o.y + h - baseH),
                      peak ? IM_COL32(200, 40, 40, 255) : IM_COL32(230, 140, 60, 255));
    if (ImGui::IsMouseHoveringRect(ImVec2(x0, o.y), ImVec2(x1 + 1, o.y + h)))
      ImGui::SetTooltip("step %zu: %s '%s'\nalways live %s B\nnot always live %s B in %lld tensors", i,
                        l.steps[i].kind.c_str(), l.steps[i].name.c_str(), groupThousands(l.alwaysLiveBytes).c_str(),
                        groupThousands(l.steps[i].notAlwaysLiveBytes).c_str(),
                        static_cast<long long>(l.steps[i].liveTensors));
  }
  ImGui::Dummy(ImVec2(w, h + 4));
  ImGui::TextDisabled("blue: always live; orange: not always live (red: the peak step). Hover a bar for its step.");
  ImGui::Columns(2, "liveness", true);
  ImGui::Text("Live at the peak, step %lld", static_cast<long long>(l.peakPosition));
  if (ImGui::BeginTable("peak", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY,
                        ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h2 : {"tensor", "bytes", "category", "steps"}) ImGui::TableSetupColumn(h2);
    ImGui::TableHeadersRow();
    for (const auto& t : l.liveAtPeak) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(groupThousands(t.bytes).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.category.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld..%lld", static_cast<long long>(t.firstPosition), static_cast<long long>(t.lastPosition));
    }
    ImGui::EndTable();
  }
  ImGui::NextColumn();
  ImGui::TextUnformatted("Always live, by category");
  for (const auto& [category, bytes] : l.alwaysLiveByCategory)
    ImGui::BulletText("%s: %s B", category.c_str(), groupThousands(bytes).c_str());
  ImGui::Columns(1);
}

void ViewerApp::drawInsights(OpenProfile& p) {
  if (!ensureBuilt(p, [&] {
        if (!p.facts) {
          p.facts = analysis::measureProfileFacts(p.session->reader());
          p.insights = analysis::findInsights(*p.facts);
        }
      }))
    return;
  ImGui::Text("The IPU waits for the host %s of the captured time.", percent(p.facts->hostWait.share()).c_str());
  ImGui::Separator();
  if (p.insights.empty()) {
    ImGui::TextDisabled("Nothing stands out: no rule fired.");
    return;
  }
  int n = 1;
  for (const auto& i : p.insights) {
    ImGui::PushID(n);
    ImGui::TextColored(ImVec4(0.55f, 0.1f, 0.1f, 1), "%d.", n);
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextWrapped("%s", i.finding.c_str());
    ImGui::Indent(24);
    ImGui::TextWrapped("Knob: %s", i.knob.c_str());
    ImGui::TextWrapped("Expected gain: %s", i.gain.c_str());
    ImGui::Unindent(24);
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    ImGui::PopID();
    ++n;
  }
}

}  // namespace ipusim::viewer
