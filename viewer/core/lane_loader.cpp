#include "viewer/core/lane_loader.hpp"

#include <algorithm>
#include <exception>
#include <map>

namespace ipusim::viewer {

namespace {

// Per depth, the rows it uses (usually one) and where each row ends so far.
struct DepthRows {
  std::vector<std::size_t> rowIndex;
};

void loadSlices(const traces::ProfileReader& reader, Lane& lane) {
  std::map<std::int64_t, DepthRows> byDepth;
  std::vector<SliceColumns> rows;
  std::vector<int> rowDepth;
  const bool keepPhases = lane.trackKind == "bsp";
  reader.forEachSlice(lane.trackId, [&](const traces::SliceRow& s) {
    DepthRows& depth = byDepth[s.depth];
    const std::int64_t end = s.ts + std::max<std::int64_t>(0, s.dur);
    // The first row of this depth where the slice does not overlap the last one.
    std::size_t target = rows.size();
    for (std::size_t r : depth.rowIndex) {
      if (rows[r].empty() || rows[r].end.back() <= s.ts) {
        target = r;
        break;
      }
    }
    if (target == rows.size()) {
      rows.emplace_back();
      rowDepth.push_back(static_cast<int>(s.depth));
      depth.rowIndex.push_back(target);
    }
    const auto category = lane.strings.intern(s.category);
    rows[target].push(s.ts, end, s.id, lane.strings.intern(s.name),
                      static_cast<std::uint8_t>(std::min<std::uint32_t>(category, 255)),
                      static_cast<std::int32_t>(s.programId));
    if (keepPhases) rows[target].phaseId.push_back(s.phaseId);
    ++lane.sliceCount;
  });
  // Draw rows by depth, extra rows of a depth right below its first.
  std::vector<std::size_t> order;
  for (auto& [depth, d] : byDepth)
    for (std::size_t r : d.rowIndex) order.push_back(r);
  for (std::size_t r : order) {
    lane.rows.push_back(std::move(rows[r]));
    lane.rowDepth.push_back(rowDepth[r]);
  }
  if (lane.rows.empty()) {
    lane.rows.emplace_back();
    lane.rowDepth.push_back(0);
  }
}

void loadCounter(const traces::ProfileReader& reader, Lane& lane) {
  for (const auto& c : reader.counters(lane.trackId)) {
    lane.counterTs.push_back(c.ts);
    lane.counterValue.push_back(c.value);
  }
  if (!lane.counterValue.empty()) {
    auto [lo, hi] = std::minmax_element(lane.counterValue.begin(), lane.counterValue.end());
    lane.counterMin = *lo;
    lane.counterMax = *hi;
  }
}

}  // namespace

void loadLane(const traces::ProfileReader& reader, Lane& lane) {
  try {
    if (lane.kind == LaneKind::Counter) loadCounter(reader, lane);
    else loadSlices(reader, lane);
  } catch (const std::exception& e) {
    lane.rows.assign(1, SliceColumns{});
    lane.rowDepth.assign(1, 0);
    lane.loadError = e.what();
  }
  lane.loaded.store(true, std::memory_order_release);
}

LaneLoader::LaneLoader(std::string profilePath, std::vector<Lane*> lanes)
    : path_(std::move(profilePath)), lanes_(std::move(lanes)) {
  thread_ = std::thread([this] { run(); });
}

LaneLoader::~LaneLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LaneLoader::wake() {
  // Taking the lock orders this wake-up after the loader's last check.
  { std::lock_guard<std::mutex> lock(mutex_); }
  changed_.notify_all();
}

bool LaneLoader::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

void LaneLoader::waitForVisible() const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] {
    if (finished_ || stop_) return true;
    return std::all_of(lanes_.begin(), lanes_.end(),
                       [](const Lane* l) { return !l->visible.load() || l->isLoaded(); });
  });
}

void LaneLoader::run() {
  std::unique_ptr<traces::ProfileReader> reader;
  try {
    reader = std::make_unique<traces::ProfileReader>(path_);
  } catch (const std::exception& e) {
    for (Lane* lane : lanes_) {
      lane->loadError = e.what();
      lane->rows.assign(1, SliceColumns{});
      lane->rowDepth.assign(1, 0);
      lane->loaded.store(true, std::memory_order_release);
    }
  }
  for (;;) {
    Lane* next = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] {
        if (stop_) return true;
        next = nullptr;
        bool anyLeft = false;
        for (Lane* lane : lanes_) {
          if (lane->isLoaded()) continue;
          anyLeft = true;
          if (lane->visible.load()) {
            next = lane;
            break;
          }
        }
        if (!anyLeft) finished_ = true;
        return next != nullptr || finished_;
      });
      if (stop_ || finished_) break;
    }
    loadLane(*reader, *next);
    wake();
  }
  wake();
}

}  // namespace ipusim::viewer
