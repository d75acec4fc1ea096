#include "viewer/core/lane_loader.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <exception>

namespace ipusim::viewer {

namespace {

// Puts slices, given in (ts, depth, id) order, on rows: per depth the first
// row where the slice does not overlap the row's last one, a new row of that
// depth when there is none.
class RowBuilder {
 public:
  // `expectedSlices`: the track's slice count when known (0 if not). Each new
  // row reserves room for all of them: address space only, pages are touched
  // as they fill, but the columns never grow by copying. Copying a growing
  // 30 MB column, and unmapping the old one, stalled the UI thread for
  // hundreds of ms on 2 cores (TLB shootdowns) while lanes loaded.
  explicit RowBuilder(Lane& lane, std::size_t expectedSlices = 0)
      : lane_(lane), keepPhases_(lane.trackKind == "bsp"), expected_(expectedSlices) {}

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
      if (expected_ > 0) rows_.back().reserve(expected_, keepPhases_);
      rowDepth_.push_back(static_cast<int>(d));
      candidates.push_back(target);
    }
    rows_[target].push(ts, end, id, name, static_cast<std::uint8_t>(std::min<std::uint32_t>(category, 255)),
                       static_cast<std::int32_t>(programId));
    if (keepPhases_) {
      rows_[target].phaseId.push_back(phaseId);
      if (lane_.firstPhaseId < 0 && phaseId >= 0) lane_.firstPhaseId = phaseId;
    }
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
  std::size_t expected_;
  std::vector<std::vector<std::size_t>> rowsOfDepth_;
  std::vector<SliceColumns> rows_;
  std::vector<int> rowDepth_;
};

// The track's slice count from slice_track_stats (0 when unknown).
std::size_t trackSliceCount(const traces::ProfileReader& reader, std::int64_t trackId) {
  sqlite3_stmt* stmt = nullptr;
  std::size_t count = 0;
  if (sqlite3_prepare_v2(reader.db(), "SELECT slice_count FROM slice_track_stats WHERE track_id = ?1", -1, &stmt,
                         nullptr) == SQLITE_OK) {
    sqlite3_bind_int64(stmt, 1, trackId);
    if (sqlite3_step(stmt) == SQLITE_ROW) count = static_cast<std::size_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(stmt, 0)));
  }
  sqlite3_finalize(stmt);
  return count;
}

// Before `b` in (ts, depth, id) order, the order rows are built in.
bool before(std::int64_t ts, std::int64_t depth, std::int64_t id, std::int64_t bts, std::int64_t bdepth,
            std::int64_t bid) {
  if (ts != bts) return ts < bts;
  if (depth != bdepth) return depth < bdepth;
  return id < bid;
}

// From the packed copy, chunk by chunk, as long as the writer wrote the track
// in (ts, depth, id) order (the usual case): no second copy of the track.
// Returns false, the lane untouched, when there is no packed copy or the
// order breaks (the caller then sorts).
bool loadPackedInOrder(const traces::ProfileReader& reader, Lane& lane,
                       const std::vector<std::string>& strings) {
  std::vector<std::int64_t> laneString(strings.size(), -1);
  StringTable laneStrings;
  const auto local = [&](std::uint32_t s) {
    if (laneString[s] < 0) laneString[s] = laneStrings.intern(strings[s]);
    return static_cast<std::uint32_t>(laneString[s]);
  };
  Lane scratch;  // filled here, moved into `lane` only when the order held
  scratch.trackKind = lane.trackKind;
  RowBuilder rows(scratch, trackSliceCount(reader, lane.trackId));
  bool ordered = true;
  std::int64_t lastTs = 0, lastDepth = 0, lastId = 0;
  bool first = true;
  const bool found = reader.forEachPackedChunk(lane.trackId, [&](const traces::PackedSlices& p) {
    for (std::size_t i = 0; i < p.size() && ordered; ++i) {
      if (!first && before(p.ts[i], p.depth[i], p.id[i], lastTs, lastDepth, lastId)) {
        ordered = false;
        break;
      }
      first = false;
      lastTs = p.ts[i], lastDepth = p.depth[i], lastId = p.id[i];
      rows.add(p.ts[i], p.dur[i], p.id[i], p.depth[i], local(p.name[i]), local(p.category[i]), p.programId[i],
               p.phaseId[i]);
    }
  });
  if (!found || !ordered) return false;
  rows.finish();
  lane.rows = std::move(scratch.rows);
  lane.rowDepth = std::move(scratch.rowDepth);
  lane.strings = std::move(laneStrings);
  lane.sliceCount = scratch.sliceCount;
  lane.firstPhaseId = scratch.firstPhaseId;
  return true;
}

// From the packed copy of a track written out of order: all of it, sorted.
bool loadPackedSorted(const traces::ProfileReader& reader, Lane& lane) {
  traces::PackedSlices p;
  if (!reader.readPackedSlices(lane.trackId, p)) return false;
  const std::size_t n = p.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return before(p.ts[a], p.depth[a], p.id[a], p.ts[b], p.depth[b], p.id[b]);
  });
  std::vector<std::int64_t> laneString(p.strings.size(), -1);
  const auto local = [&](std::uint32_t s) {
    if (laneString[s] < 0) laneString[s] = lane.strings.intern(p.strings[s]);
    return static_cast<std::uint32_t>(laneString[s]);
  };
  RowBuilder rows(lane, n);
  for (const std::size_t i : order)
    rows.add(p.ts[i], p.dur[i], p.id[i], p.depth[i], local(p.name[i]), local(p.category[i]), p.programId[i],
             p.phaseId[i]);
  rows.finish();
  return true;
}

void loadSlices(const traces::ProfileReader& reader, Lane& lane) {
  const auto strings = reader.packedSliceStrings();
  if (!strings.empty() && (loadPackedInOrder(reader, lane, strings) || loadPackedSorted(reader, lane))) return;
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
