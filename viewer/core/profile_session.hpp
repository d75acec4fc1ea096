#pragma once
// ProfileSession: one open profile as the viewer sees it. Opening reads the
// small tables (meta, runs, tracks, programs, tile memory) and lays out the
// lanes; the slices themselves stream into the lanes on a background thread
// (LaneLoader), so a profile of 10 million slices shows its structure at once
// and fills in while the user looks. Throws traces::ProfileError naming the
// file when it cannot be opened (missing, truncated, not SQLite, newer schema).
#include "profiler/analysis/host_wait.hpp"
#include "traces/profile_reader.hpp"
#include "viewer/core/lane.hpp"
#include "viewer/core/lane_loader.hpp"
#include "viewer/core/program_tree.hpp"

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::viewer {

// Everything the details panel shows about one slice.
struct SliceDetails {
  traces::SliceRow row;
  std::string trackName;
  std::string programPath;
  std::string layer, op;
};

class ProfileSession {
 public:
  // `loadInBackground` false loads every lane before returning (tests).
  explicit ProfileSession(const std::string& path, bool loadInBackground = true);
  ~ProfileSession();

  const std::string& path() const { return reader_->path(); }
  // The path the user named: path(), or the directory of the instance profiles the session's file combines
  // (profiler/analysis/instance_profiles.hpp).
  const std::string& shownPath() const { return shownPath_.empty() ? path() : shownPath_; }
  void setShownPath(std::string shown) { shownPath_ = std::move(shown); }
  const traces::ProfileReader& reader() const { return *reader_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  std::string metaValue(const std::string& key, const std::string& fallback = "") const;
  double clockHz() const { return clockHz_; }
  std::int64_t tilesPerIpu() const { return tilesPerIpu_; }
  std::int64_t numIpus() const { return numIpus_; }
  // The IPUs whose tracks and tiles the profile holds: numIpus(), or one instance's share of them.
  std::int64_t ipusHeld() const { return ipusHeld_; }
  const std::vector<traces::RunRow>& runs() const { return runs_; }
  const std::vector<traces::TrackRow>& tracks() const { return tracks_; }
  const ProgramTree& programs() const { return programs_; }
  const std::vector<traces::TileMemoryRow>& tileMemory() const { return tileMemory_; }
  const std::vector<traces::TileMemoryPeakRow>& tileMemoryPeaks() const { return tileMemoryPeaks_; }
  std::int64_t sliceCount() const { return sliceCount_; }
  // [first cycle, last cycle] of the run: slices and runs together.
  std::int64_t startCycle() const { return extent_.first; }
  std::int64_t endCycle() const { return extent_.second; }
  // The job-level figures, computed once on open by their one definitions:
  // total cycles (profiler/analysis/job_cycles.hpp) and IPU waiting for the
  // host (profiler/analysis/host_wait.hpp).
  std::int64_t jobCycles() const { return jobCycles_; }
  // Waits for the background checks (below) when they are still running;
  // zeros when they failed.
  const profiler::analysis::HostWaitBreakdown& hostWait() const;
  // Without waiting: nullopt while the background checks run.
  std::optional<profiler::analysis::HostWaitBreakdown> hostWaitIfReady() const;
  // Opening makes the cheap checks of SCHEMA.md "Verifying a profile"; the
  // two that read the whole file (SQLite's quick_check, the row counts: tens
  // of seconds for 100 million slices) run on a thread of their own, which
  // then computes the host-wait figure (it reads every stream slice).
  // The first failure of those checks, once known; empty while running or
  // when the profile passed.
  std::string verificationError() const;
  // Blocks until the background checks are done (screenshots, tests).
  void waitForChecks() const;
  bool backgroundChecksDone() const;
  // CPU time of the background checks, in ms, once done (bench); the
  // loader thread's so far.
  double backgroundChecksCpuMs() const;
  double loaderCpuMs() const { return loader_ ? loader_->cpuMs() : 0.0; }

  // Lanes in display order: engine, host, stream, then per IPU its program
  // flame graph and BSP lane, then counters.
  std::vector<std::unique_ptr<Lane>>& lanes() { return lanes_; }
  const std::vector<std::unique_ptr<Lane>>& lanes() const { return lanes_; }
  void setLaneVisible(std::size_t lane, bool visible);
  bool fullyLoaded() const;
  void waitUntilVisibleLoaded() const;
  // Windowed lanes (lane_window.hpp), UI thread: asks the loader for the
  // window `plan` of lane `lane` (without a background loader, loads it now).
  void requestWindow(std::size_t lane, WindowPlan plan);
  // Whether a requested window is still being read.
  bool windowsPending() const;

  std::optional<SliceDetails> details(const Lane& lane, std::int64_t sliceId, std::int64_t ts) const;

  // Per-tile busy cycles of a static phase on one IPU (cached; tile index
  // relative to the IPU's first tile). Empty without tile detail.
  const std::vector<std::uint32_t>& tileCycles(std::int64_t phaseId, std::int64_t ipu) const;

 private:
  std::unique_ptr<traces::ProfileReader> reader_;
  std::map<std::string, std::string> meta_;
  double clockHz_ = 0;
  std::int64_t tilesPerIpu_ = 0, numIpus_ = 0, ipusHeld_ = 0, sliceCount_ = 0;
  std::string shownPath_;
  std::vector<traces::RunRow> runs_;
  std::vector<traces::TrackRow> tracks_;
  ProgramTree programs_;
  std::vector<traces::TileMemoryRow> tileMemory_;
  std::vector<traces::TileMemoryPeakRow> tileMemoryPeaks_;
  std::pair<std::int64_t, std::int64_t> extent_{0, 0};
  std::int64_t jobCycles_ = 0;
  // The background checks' outcome: the host-wait figure or the error.
  struct BackgroundChecks {
    profiler::analysis::HostWaitBreakdown hostWait;
    std::string error;
    double cpuMs = 0;
  };
  std::shared_future<BackgroundChecks> background_;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<LaneLoader> loader_;
  mutable std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> tileCache_;
};

}  // namespace ipusim::viewer
