#pragma once
// ViewerApp: the whole ipusim-view window: a start page (argument and recent
// profiles, open errors), and per open profile the views: execution trace,
// summary and program tree, memory, and a comparison of two profiles.
#include "viewer/core/compare_summary.hpp"
#include "profiler/analysis/insights.hpp"
#include "profiler/analysis/instance_profiles.hpp"
#include "profiler/analysis/liveness_summary.hpp"
#include "viewer/core/memory_summary.hpp"
#include "viewer/core/operations_table.hpp"
#include "viewer/core/profile_session.hpp"
#include "viewer/core/recent_profiles.hpp"
#include "viewer/shell/trace_view.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::viewer {

enum class ViewKind { Start, Trace, Summary, Operations, Liveness, Insights, Memory, Compare };
ViewKind viewKindFromString(const std::string& name);  // throws std::invalid_argument

struct OpenProfile {
  // The file the session reads (a combination of instance profiles lives as long as the session: declared first).
  std::unique_ptr<profiler::analysis::ProfileSource> source;
  std::unique_ptr<ProfileSession> session;
  std::unique_ptr<TraceView> trace;
  std::optional<MemorySummary> memory;  // built on first use
  // The analyses' tabs, built on first use (an error names the file instead).
  std::optional<OperationsTable> operations;
  std::optional<profiler::analysis::LivenessSummary> liveness;
  std::optional<profiler::analysis::ProfileFacts> facts;
  std::vector<profiler::analysis::Insight> insights;
  std::string analysisError;
};

class ViewerApp {
 public:
  explicit ViewerApp(RecentProfiles recent);
  // Opens a profile; on failure records the error for the start page and
  // returns false (the message names the file and the problem).
  bool open(const std::string& path, bool background = true);
  // Profiles opened from now on open on their first two captured runs,
  // selected (statistics in the side panel). Off by default (the bench).
  void setOpenOnCapturedRuns(bool on) { openOnCapturedRuns_ = on; }
  const std::vector<std::string>& errors() const { return errors_; }
  std::size_t openCount() const { return profiles_.size(); }
  OpenProfile& profile(std::size_t i) { return profiles_.at(i); }

  void show(ViewKind view) { requested_ = view; }
  // Selects, in every open profile's trace, the first slice whose name
  // contains `name`, and the first operations row whose layer/op does (its
  // slices highlighted in the trace); returns false when no profile has either.
  bool selectSliceNamed(const std::string& name);
  void setRange(std::int64_t from, std::int64_t to);
  // Shows Engine::run calls firstRun..lastRun in every open profile (throws
  // std::invalid_argument naming the profile that lacks one).
  void setRunRange(std::int64_t firstRun, std::int64_t lastRun);
  void waitUntilLoaded();
  // Waits for every open profile's background checks (ProfileSession) and
  // refuses those that failed them (see frame()); false when one was refused.
  bool waitForChecks();
  // True while some open profile still loads lanes (the window should keep
  // redrawing to show them arrive); false when only input changes anything.
  bool loading() const;
  // Draws one frame covering the whole window. First refuses any open
  // profile whose background checks have failed: its data is dropped and the
  // start page names the file and the failed check, as for a failed open.
  void frame();

 private:
  void refuseDamagedProfiles();
  void drawStartPage();
  void drawTrace(OpenProfile& p);
  void drawSummary(OpenProfile& p);
  void drawProgramNode(OpenProfile& p, std::int64_t id);
  void drawMemory(OpenProfile& p);
  // viewer/shell/analysis_views.cpp
  void drawOperations(OpenProfile& p);
  void drawLiveness(OpenProfile& p);
  void drawInsights(OpenProfile& p);
  // Builds the operations table once; false (with analysisError set) when the profile cannot give one.
  bool ensureOperations(OpenProfile& p);
  void drawCompare();

  RecentProfiles recent_;
  std::vector<OpenProfile> profiles_;
  std::vector<std::string> errors_;
  std::optional<ViewKind> requested_;
  std::size_t current_ = 0;
  std::int64_t selectedProgram_ = -1;
  bool alignAtStart_ = true;
  bool compareFramed_ = false;
  bool openOnCapturedRuns_ = false;  // the compare view opened on both profiles' captured runs
  std::optional<std::vector<CompareRow>> compareRows_;
  std::string compareError_;
  char pathInput_[1024] = "";
};

}  // namespace ipusim::viewer
