#include "viewer/core/lane_loader.hpp"

#include "viewer/core/error_text.hpp"
#include "traces/counter_value.hpp"
#include "traces/profile_error.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <initializer_list>

#include <time.h>

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
  RowBuilder(LaneWindow& out, bool keepPhases, std::size_t expectedSlices = 0)
      : out_(out), keepPhases_(keepPhases), expected_(expectedSlices) {}

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
      if (out_.firstPhaseId < 0 && phaseId >= 0) out_.firstPhaseId = phaseId;
    }
    ++out_.sliceCount;
  }

  // Hands the rows over: by depth, extra rows of a depth right below its first.
  void finish() {
    for (const auto& candidates : rowsOfDepth_)
      for (std::size_t r : candidates) {
        out_.rows.push_back(std::move(rows_[r]));
        out_.rowDepth.push_back(rowDepth_[r]);
      }
    if (out_.rows.empty()) {
      out_.rows.emplace_back();
      out_.rowDepth.push_back(0);
    }
  }

 private:
  LaneWindow& out_;
  bool keepPhases_;
  std::size_t expected_;
  std::vector<std::vector<std::size_t>> rowsOfDepth_;
  std::vector<SliceColumns> rows_;
  std::vector<int> rowDepth_;
};

// The profile's slice strings as the lane's own interned ones.
class LocalStrings {
 public:
  LocalStrings(const std::vector<std::string>& strings, StringTable& table)
      : strings_(strings), table_(table), local_(strings.size(), -1) {}
  std::uint32_t operator()(std::uint32_t s) {
    if (local_[s] < 0) local_[s] = table_.intern(strings_[s]);
    return static_cast<std::uint32_t>(local_[s]);
  }

 private:
  const std::vector<std::string>& strings_;
  StringTable& table_;
  std::vector<std::int64_t> local_;
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
// Returns false, `out` untouched, when there is no packed copy or the order
// breaks (the caller then sorts).
bool loadPackedInOrder(const traces::ProfileReader& reader, const Lane& lane, const std::vector<std::string>& strings,
                       LaneWindow& out) {
  LaneWindow scratch;  // filled here, moved into `out` only when the order held
  LocalStrings local(strings, scratch.strings);
  RowBuilder rows(scratch, lane.trackKind == "bsp", trackSliceCount(reader, lane.trackId));
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
  out = std::move(scratch);
  return true;
}

// Packed slices in (ts, depth, id) order into rows, sorting them first when
// the writer did not write them in that order.
void buildRows(const traces::PackedSlices& p, const std::vector<std::string>& strings, bool keepPhases,
               LaneWindow& out) {
  const std::size_t n = p.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  const auto less = [&](std::size_t a, std::size_t b) {
    return before(p.ts[a], p.depth[a], p.id[a], p.ts[b], p.depth[b], p.id[b]);
  };
  if (!std::is_sorted(order.begin(), order.end(), less)) std::sort(order.begin(), order.end(), less);
  LocalStrings local(strings, out.strings);
  RowBuilder rows(out, keepPhases, n);
  for (const std::size_t i : order)
    rows.add(p.ts[i], p.dur[i], p.id[i], p.depth[i], local(p.name[i]), local(p.category[i]), p.programId[i],
             p.phaseId[i]);
  rows.finish();
}

// From the packed copy of a track written out of order: all of it, sorted.
bool loadPackedSorted(const traces::ProfileReader& reader, const Lane& lane, LaneWindow& out) {
  traces::PackedSlices p;
  if (!reader.readPackedSlices(lane.trackId, p)) return false;
  buildRows(p, p.strings, lane.trackKind == "bsp", out);
  return true;
}

// A track of several chunks with a summary: only its spans and summary now.
bool loadWindowed(const traces::ProfileReader& reader, Lane& lane, const std::vector<std::string>& strings) {
  auto chunks = reader.packedChunkSpans(lane.trackId);
  if (chunks.size() <= 1) return false;
  const auto summaries = reader.sliceSummaries(lane.trackId);
  if (summaries.empty()) return false;
  for (const auto& s : summaries) lane.summary.emplace_back(s, strings);
  for (const auto& c : chunks) lane.sliceCount += std::uint64_t(std::max<std::int64_t>(0, c.sliceCount));
  lane.chunks = std::move(chunks);
  lane.rows.assign(lane.summary.size(), SliceColumns{});
  lane.rowDepth.clear();
  for (const auto& s : lane.summary) lane.rowDepth.push_back(int(s.depth()));
  lane.windowed = true;
  return true;
}

void takeWindow(Lane& lane, LaneWindow&& w) {
  lane.rows = std::move(w.rows);
  lane.rowDepth = std::move(w.rowDepth);
  lane.strings = std::move(w.strings);
  lane.sliceCount = w.sliceCount;
  lane.firstPhaseId = w.firstPhaseId;
}

void loadSlices(const traces::ProfileReader& reader, Lane& lane, const std::vector<std::string>& strings) {
  if (!strings.empty() && loadWindowed(reader, lane, strings)) return;
  LaneWindow whole;
  if (!strings.empty() &&
      (loadPackedInOrder(reader, lane, strings, whole) || loadPackedSorted(reader, lane, whole))) {
    takeWindow(lane, std::move(whole));
    return;
  }
  // A profile without the packed copy: row by row (slower, same result).
  RowBuilder rows(whole, lane.trackKind == "bsp");
  reader.forEachSlice(lane.trackId, [&](const traces::SliceRow& s) {
    rows.add(s.ts, s.dur, s.id, s.depth, whole.strings.intern(s.name), whole.strings.intern(s.category),
             s.programId, s.phaseId);
  });
  rows.finish();
  takeWindow(lane, std::move(whole));
}

// Runs `sql` (binding the lane's track as ?1 and `bounds` as ?2, ?3, ...)
// and appends the (ts, value) rows to `ts` and `value`.
void readCounterValues(const traces::ProfileReader& reader, const Lane& lane, const char* sql,
                       std::initializer_list<std::int64_t> bounds, std::vector<std::int64_t>& ts,
                       std::vector<double>& value) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(reader.db(), sql, -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    throw traces::ProfileError(reader.path() + ": cannot read counters: " + sqlite3_errmsg(reader.db()));
  }
  sqlite3_bind_int64(stmt, 1, lane.trackId);
  int index = 2;
  for (const std::int64_t b : bounds) sqlite3_bind_int64(stmt, index++, b);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const std::int64_t t = sqlite3_column_int64(stmt, 0);
    if (t < 0) {
      sqlite3_finalize(stmt);
      throw traces::ProfileError(reader.path() + ": counters of track " + std::to_string(lane.trackId) + ": ts " +
                                 std::to_string(t) + " is negative");
    }
    ts.push_back(t);
    try {
      value.push_back(traces::counterValue(stmt, 1, reader.path(), lane.trackId, t));
    } catch (...) {
      sqlite3_finalize(stmt);
      throw;
    }
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE)
    throw traces::ProfileError(reader.path() + ": cannot read counters: " + sqlite3_errstr(rc));
}

// The counter's values in ts order (as ProfileReader::counters gives them:
// ts, then writing order). A track with a counter_summary keeps only the
// summary now; its values are read by window (loadWindow). Others are read
// whole in table order, which for a writer that records values as time
// passes is already ts order, and sorted otherwise.
void loadCounter(const traces::ProfileReader& reader, Lane& lane) {
  if (auto summary = reader.counterSummary(lane.trackId)) {
    lane.counterSummary.emplace(*summary);
    lane.counterMin = lane.counterSummary->min();
    lane.counterMax = lane.counterSummary->max();
    return;
  }
  readCounterValues(reader, lane, "SELECT ts, value FROM counters WHERE track_id = ?1 ORDER BY rowid", {},
                    lane.counterTs, lane.counterValue);
  if (!std::is_sorted(lane.counterTs.begin(), lane.counterTs.end())) {
    std::vector<std::size_t> order(lane.counterTs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return lane.counterTs[a] < lane.counterTs[b]; });
    std::vector<std::int64_t> ts(order.size());
    std::vector<double> value(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) ts[i] = lane.counterTs[order[i]], value[i] = lane.counterValue[order[i]];
    lane.counterTs = std::move(ts);
    lane.counterValue = std::move(value);
  }
  // The range skips NaN values (a diverging training's loss), as the report's summary does, unless all are NaN.
  bool first = true;
  for (const double v : lane.counterValue) {
    if (std::isnan(v) && !first) continue;
    if (first || std::isnan(lane.counterMin) || v < lane.counterMin) lane.counterMin = v;
    if (first || std::isnan(lane.counterMax) || v > lane.counterMax) lane.counterMax = v;
    first = false;
  }
}

// A counter window: the values in [from, to) through the (track_id, ts)
// index, with the last value before and the first after it.
void loadCounterWindow(const traces::ProfileReader& reader, const Lane& lane, LaneWindow& window) {
  std::vector<std::int64_t> beforeTs;
  std::vector<double> beforeValue;
  readCounterValues(reader, lane,
                    "SELECT ts, value FROM counters WHERE track_id = ?1 AND ts < ?2 ORDER BY ts DESC, rowid DESC "
                    "LIMIT 1",
                    {window.from}, beforeTs, beforeValue);
  window.counterTs = std::move(beforeTs);
  window.counterValue = std::move(beforeValue);
  readCounterValues(reader, lane,
                    "SELECT ts, value FROM counters WHERE track_id = ?1 AND ts >= ?2 AND ts < ?3 ORDER BY ts, rowid",
                    {window.from, window.to}, window.counterTs, window.counterValue);
  readCounterValues(reader, lane,
                    "SELECT ts, value FROM counters WHERE track_id = ?1 AND ts >= ?2 ORDER BY ts, rowid LIMIT 1",
                    {window.to}, window.counterTs, window.counterValue);
}

}  // namespace

void loadLane(const traces::ProfileReader& reader, Lane& lane) { loadLane(reader, lane, reader.packedSliceStrings()); }

void loadLane(const traces::ProfileReader& reader, Lane& lane, const std::vector<std::string>& strings) {
  try {
    if (lane.kind == LaneKind::Counter) loadCounter(reader, lane);
    else loadSlices(reader, lane, strings);
  } catch (const std::exception& e) {
    lane.rows.assign(1, SliceColumns{});
    lane.rowDepth.assign(1, 0);
    lane.loadError = errorText(e);
  }
  lane.loaded.store(true, std::memory_order_release);
}

std::unique_ptr<LaneWindow> loadWindow(const traces::ProfileReader& reader, const Lane& lane, const WindowPlan& plan,
                                       const std::vector<std::string>& strings) {
  auto window = std::make_unique<LaneWindow>();
  window->from = plan.from;
  window->to = plan.to;
  if (lane.kind == LaneKind::Counter) {
    loadCounterWindow(reader, lane, *window);
    return window;
  }
  // The slices of the planned chunks that meet the window (a chunk may hold
  // a long slice reaching far beyond the others: only what meets counts).
  traces::PackedSlices meeting;
  const auto keep = [&](const traces::PackedSlices& p) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      const std::int64_t end = p.ts[i] + std::max<std::int64_t>(0, p.dur[i]);
      if (p.ts[i] >= plan.to || end < plan.from) continue;
      meeting.id.push_back(p.id[i]);
      meeting.ts.push_back(p.ts[i]);
      meeting.dur.push_back(p.dur[i]);
      meeting.depth.push_back(p.depth[i]);
      meeting.name.push_back(p.name[i]);
      meeting.category.push_back(p.category[i]);
      meeting.programId.push_back(p.programId[i]);
      meeting.phaseId.push_back(p.phaseId[i]);
    }
  };
  // Consecutive chunks in one query.
  for (std::size_t i = 0; i < plan.chunks.size();) {
    std::size_t j = i;
    while (j + 1 < plan.chunks.size() && plan.chunks[j + 1] == plan.chunks[j] + 1) ++j;
    reader.forEachPackedChunk(lane.trackId, plan.chunks[i], plan.chunks[j], keep);
    i = j + 1;
  }
  buildRows(meeting, strings, lane.trackKind == "bsp", *window);
  return window;
}

bool adoptPendingWindow(Lane& lane) {
  std::lock_guard<std::mutex> lock(lane.windowMutex);
  if (!lane.pendingWindow) return false;
  auto old = std::make_unique<LaneWindow>();
  old->rows = std::move(lane.rows);
  old->rowDepth = std::move(lane.rowDepth);
  old->strings = std::move(lane.strings);
  old->counterTs = std::move(lane.counterTs);
  old->counterValue = std::move(lane.counterValue);
  LaneWindow& w = *lane.pendingWindow;
  lane.counterTs = std::move(w.counterTs);
  lane.counterValue = std::move(w.counterValue);
  lane.rows = std::move(w.rows);
  lane.rowDepth = std::move(w.rowDepth);
  lane.strings = std::move(w.strings);
  if (lane.firstPhaseId < 0) lane.firstPhaseId = w.firstPhaseId;
  lane.window = std::make_pair(w.from, w.to);
  // Fewer rows than summarised depths would shrink the lane while drawing.
  while (lane.rows.size() < lane.summary.size()) {
    lane.rows.emplace_back();
    lane.rowDepth.push_back(int(lane.summary[lane.rows.size() - 1].depth()));
  }
  lane.pendingWindow.reset();
  lane.retiredWindow = std::move(old);  // a previous retired one, if any, is freed here (rare)
  return true;
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

void LaneLoader::requestWindow(Lane* lane, WindowPlan plan) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_[lane] = std::move(plan);  // a newer view replaces an older request
  }
  changed_.notify_all();
}

bool LaneLoader::windowsPending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !requests_.empty() || building_;
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
  std::vector<std::string> strings;
  try {
    // The session runs the whole-file checks on a thread of its own.
    reader = std::make_unique<traces::ProfileReader>(path_, traces::ProfileReader::Checks::WholeFileDeferred);
    strings = reader->packedSliceStrings();  // once for every lane and window
  } catch (const std::exception& e) {
    for (Lane* lane : lanes_) {
      lane->loadError = errorText(e);
      lane->rows.assign(1, SliceColumns{});
      lane->rowDepth.assign(1, 0);
      lane->loaded.store(true, std::memory_order_release);
    }
    reader.reset();
  }
  for (;;) {
    Lane* next = nullptr;
    Lane* windowLane = nullptr;
    WindowPlan plan;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      building_ = false;
      changed_.wait(lock, [&] {
        if (stop_) return true;
        next = nullptr;
        bool anyLeft = false;
        // Slice lanes first, then the windows asked for, then counter lanes
        // (millions of values on a long profile).
        Lane* counter = nullptr;
        for (Lane* lane : lanes_) {
          if (lane->isLoaded()) continue;
          anyLeft = true;
          if (!lane->visible.load()) continue;
          if (lane->kind == LaneKind::Counter) {
            if (!counter) counter = lane;
            continue;
          }
          next = lane;
          break;
        }
        if (!next && (requests_.empty() || !reader)) next = counter;
        if (!anyLeft) finished_ = true;
        return next != nullptr || (!requests_.empty() && reader);
      });
      if (stop_) break;
      if (!next) {
        windowLane = requests_.begin()->first;
        plan = std::move(requests_.begin()->second);
        requests_.erase(requests_.begin());
        building_ = true;
      }
    }
    if (next) {
      loadLane(*reader, *next, strings);
    } else {
      std::unique_ptr<LaneWindow> window;
      try {
        window = loadWindow(*reader, *windowLane, plan, strings);
      } catch (const std::exception& e) {
        window = std::make_unique<LaneWindow>();  // empty: the summary stays, the error shows
        window->from = plan.from;
        window->to = plan.to;
        std::lock_guard<std::mutex> lock(windowLane->windowMutex);
        if (windowLane->loadError.empty()) windowLane->windowError = errorText(e);
      }
      std::unique_ptr<LaneWindow> retired;
      {
        std::lock_guard<std::mutex> lock(windowLane->windowMutex);
        windowLane->pendingWindow = std::move(window);
        retired = std::move(windowLane->retiredWindow);
      }
      retired.reset();  // freed here, off the UI thread
    }
    timespec cpu{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    cpuMs_.store(double(cpu.tv_sec) * 1e3 + double(cpu.tv_nsec) / 1e6);
    wake();
  }
  wake();
}

}  // namespace ipusim::viewer
