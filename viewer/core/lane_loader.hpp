#pragma once
// LaneLoader: fills lanes on a background thread, in display order, skipping
// lanes that are hidden until they are shown again. It reads through its own
// ProfileReader (its own SQLite connection), so the UI thread can keep
// querying through another.
#include "traces/profile_reader.hpp"
#include "viewer/core/lane.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ipusim::viewer {

// Fills one lane from `reader` and marks it loaded (the loader thread and
// tests call it). A read error is kept in lane.loadError, not thrown. A track
// of several packed chunks with a summary becomes a windowed lane: only its
// chunk spans and summary are read (lane_window.hpp).
void loadLane(const traces::ProfileReader& reader, Lane& lane);
// The same with the profile's slice strings already read (packedSliceStrings).
void loadLane(const traces::ProfileReader& reader, Lane& lane, const std::vector<std::string>& strings);

// The slices of a windowed lane's planned chunks that meet the plan's window,
// as rows; for a counter lane with a summary, its values in the window (the
// loader thread and tests call it). Throws ProfileError.
std::unique_ptr<LaneWindow> loadWindow(const traces::ProfileReader& reader, const Lane& lane, const WindowPlan& plan,
                                       const std::vector<std::string>& strings);

// UI thread: swaps in the window the loader left in lane.pendingWindow, if
// any. Returns true when the lane's rows changed (slice indexes into them
// are then stale).
bool adoptPendingWindow(Lane& lane);

class LaneLoader {
 public:
  // `lanes` must outlive the loader; the loader stops in its destructor.
  LaneLoader(std::string profilePath, std::vector<Lane*> lanes);
  ~LaneLoader();
  LaneLoader(const LaneLoader&) = delete;
  LaneLoader& operator=(const LaneLoader&) = delete;

  // Call after making a hidden lane visible, so the loader picks it up.
  void wake();
  // Asks for a windowed lane's window (replacing an earlier request for it).
  void requestWindow(Lane* lane, WindowPlan plan);
  // Whether a requested window is still being read (bench, tests).
  bool windowsPending() const;
  bool finished() const;
  // CPU time the loader thread has used so far, in ms (bench).
  double cpuMs() const { return cpuMs_.load(); }
  // Blocks until every visible lane is loaded (tests, screenshots, bench).
  void waitForVisible() const;

 private:
  void run();
  std::string path_;
  std::vector<Lane*> lanes_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool stop_ = false;
  bool finished_ = false;
  bool building_ = false;  // a window is being read
  std::map<Lane*, WindowPlan> requests_;
  std::atomic<double> cpuMs_{0};
  std::thread thread_;
};

}  // namespace ipusim::viewer
