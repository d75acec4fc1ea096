#include "viewer/core/lane_loader.hpp"

#include <algorithm>
#include <exception>

namespace ipusim::viewer {

namespace {

// Puts slices, given in (ts, depth, id) order, on rows: per depth the first
// row where the slice does not overlap the row's last one, a new row of that
// depth when there is none.
class RowBuilder {
 public:
  explicit RowBuilder(Lane& lane) : lane_(lane), keepPhases_(lane.trackKind == "bsp") {}

  void add(std::int64_t ts, std::int64_t dur, std::int64_t id, std::int64_t depth, std::uint32_t name,
           std::uint32_t category, std::int64_t programId, std::int64_t phaseId) {
    const std::int64_t end = ts + std::max<std::int64_t>(0, dur);
    const auto d = static_cast<std::size_t>(std::max<std::int64_t>(0, depth));
    if (d >= rowsOfDepth_.size()) rowsOfDepth_.resize(d + 1);
    std::vector<std::size_t>& candidates = rowsOfDepth_[d];
    std::size_t target = rows_.size();
    for (std::size_t r : candidates) {
      if (rows_[r].empty() || rows_[r].end.back() <= ts) {
        target = r;
        break;
      }
    }
    if (target == rows_.size()) {
      rows_.emplace_back();
      rowDepth_.push_back(static_cast<int>(d));
      candidates.push_back(target);
    }
    rows_[target].push(ts, end, id, name, static_cast<std::uint8_t>(std::min<std::uint32_t>(category, 255)),
                       static_cast<std::int32_t>(programId));
    if (keepPhases_) rows_[target].phaseId.push_back(phaseId);
    ++lane_.sliceCount;
  }

  // Hands the rows to the lane: by depth, extra rows of a depth right below its first.
  void finish() {
    for (const auto& candidates : rowsOfDepth_)
      for (std::size_t r : candidates) {
        lane_.rows.push_back(std::move(rows_[r]));
        lane_.rowDepth.push_back(rowDepth_[r]);
      }
    if (lane_.rows.empty()) {
      lane_.rows.emplace_back();
      lane_.rowDepth.push_back(0);
    }
  }

 private:
  Lane& lane_;
  bool keepPhases_;
  std::vector<std::vector<std::size_t>> rowsOfDepth_;
  std::vector<SliceColumns> rows_;
  std::vector<int> rowDepth_;
};

// From the packed copy: columns in the writer's order, sorted here by
// (ts, depth, id) only when the writer did not write them so.
bool loadPackedSlices(const traces::ProfileReader& reader, Lane& lane) {
  traces::PackedSlices p;
  if (!reader.readPackedSlices(lane.trackId, p)) return false;
  const std::size_t n = p.size();
  const auto before = [&](std::size_t a, std::size_t b) {
    if (p.ts[a] != p.ts[b]) return p.ts[a] < p.ts[b];
    if (p.depth[a] != p.depth[b]) return p.depth[a] < p.depth[b];
    return p.id[a] < p.id[b];
  };
  std::vector<std::size_t> order;
  bool sorted = true;
  for (std::size_t i = 1; i < n && sorted; ++i) sorted = !before(i, i - 1);
  if (!sorted) {
    order.resize(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), before);
  }
  // Profile string ids -> the lane's own, interned on first use.
  std::vector<std::int64_t> laneString(p.strings.size(), -1);
  const auto local = [&](std::uint32_t s) {
    if (laneString[s] < 0) laneString[s] = lane.strings.intern(p.strings[s]);
    return static_cast<std::uint32_t>(laneString[s]);
  };
  RowBuilder rows(lane);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = sorted ? k : order[k];
    rows.add(p.ts[i], p.dur[i], p.id[i], p.depth[i], local(p.name[i]), local(p.category[i]), p.programId[i],
             p.phaseId[i]);
  }
  rows.finish();
  return true;
}

void loadSlices(const traces::ProfileReader& reader, Lane& lane) {
  if (loadPackedSlices(reader, lane)) return;
  // A profile without the packed copy: row by row (slower, same result).
  RowBuilder rows(lane);
  reader.forEachSlice(lane.trackId, [&](const traces::SliceRow& s) {
    rows.add(s.ts, s.dur, s.id, s.depth, lane.strings.intern(s.name), lane.strings.intern(s.category),
             s.programId, s.phaseId);
  });
  rows.finish();
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
