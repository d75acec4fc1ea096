#pragma once
// LaneLoader: fills lanes on a background thread, in display order, skipping
// lanes that are hidden until they are shown again. It reads through its own
// ProfileReader (its own SQLite connection), so the UI thread can keep
// querying through another.
#include "traces/profile_reader.hpp"
#include "viewer/core/lane.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ipusim::viewer {

// Fills one lane from `reader` and marks it loaded (the loader thread and
// tests call it). A read error is kept in lane.loadError, not thrown.
void loadLane(const traces::ProfileReader& reader, Lane& lane);

class LaneLoader {
 public:
  // `lanes` must outlive the loader; the loader stops in its destructor.
  LaneLoader(std::string profilePath, std::vector<Lane*> lanes);
  ~LaneLoader();
  LaneLoader(const LaneLoader&) = delete;
  LaneLoader& operator=(const LaneLoader&) = delete;

  // Call after making a hidden lane visible, so the loader picks it up.
  void wake();
  bool finished() const;
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
  std::thread thread_;
};

}  // namespace ipusim::viewer
