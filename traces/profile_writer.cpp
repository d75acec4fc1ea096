#include "traces/profile_writer.hpp"

#include "traces/profile_rules.hpp"

#include "traces/counter_value.hpp"
#include "traces/internal/counter_summary_builder.hpp"
#include "traces/internal/counter_summary_rows.hpp"
#include "traces/internal/little_endian_blobs.hpp"
#include "traces/internal/profile_schema.hpp"
#include "traces/internal/slice_chunk_codec.hpp"
#include "traces/internal/slice_summary_builder.hpp"
#include "traces/internal/slice_batch_inserter.hpp"
#include "traces/internal/sqlite_statement.hpp"
#include "traces/internal/temporary_profile_file.hpp"
#include "traces/internal/track_slice_stats.hpp"
#include "traces/profile_verification.hpp"

#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <unordered_map>

#include <unistd.h>

namespace fs = std::filesystem;

namespace ipusim::traces {

using internal::Statement;
using internal::TrackSliceStats;

namespace {

// The writer owns these keys; a caller setting them would defeat the checks
// the reader makes on open.
bool isReservedMetaKey(const std::string& key) {
  return key == "schema_version" || key == "complete" || key == kRowCountsMetaKey;
}

// Settings for one bulk load into a private temporary file. Durability is not
// needed: a crash leaves only the temporary file, never a profile.
constexpr const char* kBulkWritePragmas =
    "PRAGMA page_size=65536;"
    "PRAGMA journal_mode=OFF;"
    "PRAGMA synchronous=OFF;"
    "PRAGMA locking_mode=EXCLUSIVE;"
    "PRAGMA temp_store=MEMORY;"
    "PRAGMA cache_size=-65536;";  // KiB: 64 MiB of page cache

}  // namespace

struct ProfileWriter::Impl {
  enum class State { Writing, Committed, Closed };

  std::string path;
  std::string temporaryPath;
  sqlite3* db = nullptr;
  State state = State::Writing;
  std::string failure;  // why the writer stopped accepting rows, if it did
  bool claimedTemporary = false;

  Statement insertMeta, insertRun, insertTrack, insertProgram, insertPhase,
      insertTilePhase, insertTileMemory, insertTileMemoryPeak, insertCounter, insertProgramWork, insertTensor,
      insertProgramOrder, insertTensorLifetime;
  internal::SliceBatchInserter slices;

  std::int64_t nextTrackId = 1;
  std::int64_t nextSliceId = 1;
  std::uint64_t slicesWritten = 0;
  std::unordered_map<std::int64_t, TrackSliceStats> trackStats;
  // The packed copy of the slices (slice_chunks, slice_strings): per track
  // the chunk being encoded and how many were written; names interned.
  struct TrackChunks {
    internal::SliceChunkEncoder encoder;
    std::int64_t written = 0;
    // A track cycles through a few names and categories: the last ones seen
    // are compared before hashing (this halves the cost of packing).
    std::array<std::pair<std::string, std::uint32_t>, 8> recent;
    std::size_t nextRecent = 0;
  };
  std::unordered_map<std::int64_t, TrackChunks> trackChunks;
  std::unordered_map<std::string, std::uint32_t> sliceStrings;
  std::int64_t lastChunksTrack = -1;
  TrackChunks* lastChunks = nullptr;
  Statement insertChunk;
  // Consecutive slices are usually on one track: skip the hash lookup then.
  std::int64_t lastStatsTrack = -1;
  TrackSliceStats* lastStats = nullptr;
  // Per counter track: how many values and their ts range (counter_summary).
  struct CounterTrackStats {
    std::int64_t count = 0, minTs = 0, maxTs = 0;
  };
  std::unordered_map<std::int64_t, CounterTrackStats> counterStats;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // Also runs when the constructor throws: no connection or file may leak.
  ~Impl() {
    closeDatabase();
    if (state != State::Committed) removeTemporary();
  }

  void open();
  void prepareStatements();
  void requireWriting(const char* action) const;
  void recordStats(const SliceRow& row);
  void writeTrackStats();
  std::uint32_t internSliceString(const std::string& text);
  std::uint32_t internSliceString(const std::string& text, TrackChunks& chunks);
  void packSlice(const SliceRow& row);
  void writeChunk(std::int64_t trackId, TrackChunks& chunks);
  void writePackedRemainder();
  void writeSliceSummaries();
  void writeSliceSummary(std::int64_t trackId, Statement& insert);
  void recordCounterStats(const CounterRow& row);
  void writeCounterSummaries();
  void closeStatements() noexcept;
  void closeDatabase() noexcept;
  void removeTemporary() noexcept;
  void releaseClaim() noexcept;

  // Runs `body`; on failure stops accepting rows and removes the temporary
  // file, so that no later call can produce a partial profile.
  template <typename Body>
  void guarded(Body&& body) {
    try {
      body();
    } catch (const std::exception& error) {
      failure = error.what();
      closeDatabase();
      removeTemporary();
      state = State::Closed;
      throw;
    }
  }
};

void ProfileWriter::Impl::open() {
  if (path.empty()) throw ProfileError("profile path is empty: expected a file name such as profile.pop");
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec))
    throw ProfileError(path + ": is a directory; expected a profile file path such as " +
                       (target / "profile.pop").string());
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw ProfileError(path + ": cannot create directory " + target.parent_path().string() +
                         ": " + ec.message());
  }
  internal::removeStaleTemporaries(path);
  const std::string temporary = internal::temporaryProfilePath(path);
  if (!internal::claimTemporaryPath(temporary))
    throw ProfileError(path + ": another ProfileWriter of this process is writing it");
  claimedTemporary = true;
  temporaryPath = temporary;
  ::unlink(temporaryPath.c_str());  // a leftover of this very pid is stale too

  const int rc = sqlite3_open_v2(temporaryPath.c_str(), &db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    // SQLite's "unable to open database file" hides the reason, and its
    // errno is that of its last fallback attempt: name the usual cause first.
    const std::string directory =
        target.has_parent_path() ? target.parent_path().string() : std::string(".");
    std::string cause = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (::access(directory.c_str(), W_OK | X_OK) != 0) {
      cause = "directory " + directory + " is not writable (" + std::strerror(errno) + ")";
    } else if (const int systemError = db ? sqlite3_system_errno(db) : 0; systemError != 0) {
      cause += std::string(" (") + std::strerror(systemError) + ")";
    }
    sqlite3_close_v2(db);
    db = nullptr;
    throw ProfileError(path + ": cannot create temporary file " + temporaryPath + ": " + cause);
  }
  guarded([&] {
    // Checked once our own temporary exists: of two runs starting together, neither can miss the other.
    if (const long other = internal::otherLiveWriter(path))
      throw ProfileError(path + ": another run (process " + std::to_string(other) +
                         ") is writing this profile; wait for it to finish or write elsewhere "
                         "(e.g. another autoReport.directory)");
    internal::execSql(db, kBulkWritePragmas, path, "cannot set up the database for writing");
    internal::execSql(db, "BEGIN", path, "cannot start the transaction");
    internal::execSql(db, internal::kCreateSchemaSql, path, "cannot create the tables");
    internal::execSql(db, tileSlicesViewSql().c_str(), path, "cannot create the view tile_slices");
    prepareStatements();
    const std::string version = std::to_string(kSchemaVersion);
    insertMeta.bindText(1, "schema_version");
    insertMeta.bindText(2, version);
    insertMeta.execute("cannot write meta schema_version");
  });
}

void ProfileWriter::Impl::prepareStatements() {
  insertMeta = Statement(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", path);
  insertRun = Statement(db,
      "INSERT INTO runs(id, entry_point, name, start_cycle, end_cycle, steps, captured) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", path);
  insertTrack = Statement(db,
      "INSERT INTO tracks(id, parent_id, kind, name, ipu, tile, sort_order) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", path);
  slices = internal::SliceBatchInserter(db, path);
  insertProgram = Statement(db,
      "INSERT INTO programs(id, parent_id, kind, name, layer, op, ordinal) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", path);
  insertPhase = Statement(db,
      "INSERT INTO phases(id, kind, name, program_id, bytes) VALUES (?1, ?2, ?3, ?4, ?5)", path);
  insertTilePhase = Statement(db,
      "INSERT INTO tile_phase_cycles(phase_id, ipu, tile, cycles, vertices) "
      "VALUES (?1, ?2, ?3, ?4, ?5)", path);
  insertTileMemory = Statement(db,
      "INSERT INTO tile_memory(ipu, tile, category, always_live, bytes) "
      "VALUES (?1, ?2, ?3, ?4, ?5)", path);
  insertTileMemoryPeak = Statement(db,
      "INSERT INTO tile_memory_peak(ipu, tile, peak_bytes, always_live_bytes, not_always_live_peak_bytes) "
      "VALUES (?1, ?2, ?3, ?4, ?5)", path);
  insertCounter = Statement(db,
      "INSERT INTO counters(track_id, ts, value, run_id, step) VALUES (?1, ?2, ?3, ?4, ?5)", path);
  insertProgramWork = Statement(db,
      "INSERT INTO program_work(program_id, flops, vertices, tiles) VALUES (?1, ?2, ?3, ?4)", path);
  insertTensor = Statement(db,
      "INSERT INTO tensors(id, name, category, always_live, bytes, tiles, layer, op) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", path);
  insertProgramOrder = Statement(db,
      "INSERT INTO program_order(entry_point, position, program_id) VALUES (?1, ?2, ?3)", path);
  insertTensorLifetime = Statement(db,
      "INSERT INTO tensor_lifetimes(entry_point, tensor_id, first_position, last_position) "
      "VALUES (?1, ?2, ?3, ?4)", path);
}

void ProfileWriter::Impl::requireWriting(const char* action) const {
  switch (state) {
    case State::Writing:
      return;
    case State::Committed:
      throw ProfileError(path + ": cannot " + action + ": the profile is already committed");
    case State::Closed:
      throw ProfileError(path + ": cannot " + action + ": the writer was abandoned" +
                         (failure.empty() ? std::string() : " after an error: " + failure));
  }
}

void ProfileWriter::Impl::recordStats(const SliceRow& row) {
  if (row.trackId != lastStatsTrack || lastStats == nullptr) {
    lastStatsTrack = row.trackId;
    lastStats = &trackStats[row.trackId];  // unordered_map nodes are stable across rehashing
  }
  lastStats->add(row.id, row.ts, row.dur);
}

std::uint32_t ProfileWriter::Impl::internSliceString(const std::string& text) {
  const auto [it, inserted] = sliceStrings.emplace(text, static_cast<std::uint32_t>(sliceStrings.size()));
  return it->second;
}

std::uint32_t ProfileWriter::Impl::internSliceString(const std::string& text, TrackChunks& chunks) {
  for (const auto& [recentText, id] : chunks.recent)
    if (recentText.size() == text.size() && recentText == text && !text.empty()) return id;
  const std::uint32_t id = internSliceString(text);
  if (!text.empty()) {
    chunks.recent[chunks.nextRecent] = {text, id};
    chunks.nextRecent = (chunks.nextRecent + 1) % chunks.recent.size();
  }
  return id;
}

void ProfileWriter::Impl::packSlice(const SliceRow& row) {
  if (row.trackId != lastChunksTrack || lastChunks == nullptr) {
    lastChunksTrack = row.trackId;
    lastChunks = &trackChunks[row.trackId];  // nodes are stable across rehashing
  }
  TrackChunks& chunks = *lastChunks;
  const std::uint32_t name = internSliceString(row.name, chunks);
  const std::uint32_t category = internSliceString(row.category, chunks);
  chunks.encoder.add(row.id, row.ts, row.dur, row.depth, name, category, row.programId, row.phaseId);
  if (chunks.encoder.full()) writeChunk(row.trackId, chunks);
}

void ProfileWriter::Impl::writeChunk(std::int64_t trackId, TrackChunks& chunks) {
  if (!insertChunk)
    insertChunk = Statement(db, "INSERT INTO slice_chunks(track_id, chunk, slice_count, min_ts, max_end, data) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6)", path);
  insertChunk.bindInt(1, trackId);
  insertChunk.bindInt(2, chunks.written);
  insertChunk.bindInt(3, static_cast<std::int64_t>(chunks.encoder.count()));
  insertChunk.bindInt(4, chunks.encoder.minTs());
  insertChunk.bindInt(5, chunks.encoder.maxEnd());
  insertChunk.bindBlob(6, chunks.encoder.take());
  insertChunk.execute("cannot write slice_chunks");
  ++chunks.written;
}

void ProfileWriter::Impl::writePackedRemainder() {
  for (auto& [trackId, chunks] : trackChunks)
    if (chunks.encoder.count() > 0) writeChunk(trackId, chunks);
  Statement insertString(db, "INSERT INTO slice_strings(id, text) VALUES (?1, ?2)", path);
  for (const auto& [text, id] : sliceStrings) {
    insertString.bindInt(1, id);
    insertString.bindText(2, text);
    insertString.execute("cannot write slice_strings");
  }
}

// A track of more than one chunk gets a summary (tracks that fit one chunk
// load whole at once). Built from the chunks just written, read back one at a
// time: the slices are not kept in memory while writing.
void ProfileWriter::Impl::writeSliceSummaries() {
  Statement insert(db,
      "INSERT INTO slice_summary(track_id, depth, origin_ts, bucket_cycles, bucket_count, busy, category) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", path);
  for (const auto& [trackId, chunks] : trackChunks)
    if (chunks.written > 1) writeSliceSummary(trackId, insert);
}

void ProfileWriter::Impl::writeSliceSummary(std::int64_t trackId, Statement& insert) {
  const TrackSliceStats& stats = trackStats.at(trackId);
  internal::SliceSummaryBuilder builder(stats.minTs(), stats.maxEnd(), stats.count());
  Statement chunks(db, "SELECT slice_count, data FROM slice_chunks WHERE track_id = ?1 ORDER BY chunk", path);
  chunks.bindInt(1, trackId);
  PackedSlices decoded;
  while (chunks.step()) {
    const auto [data, size] = chunks.columnBlob(1);
    decoded.clear();
    internal::decodeSliceChunk(data, size, static_cast<std::size_t>(chunks.columnInt(0)), decoded, path);
    for (std::size_t i = 0; i < decoded.size(); ++i)
      builder.add(decoded.ts[i], decoded.dur[i], decoded.depth[i], decoded.category[i]);
  }
  for (const SliceSummary& s : builder.take()) {
    insert.bindInt(1, trackId);
    insert.bindInt(2, s.depth);
    insert.bindInt(3, s.originTs);
    insert.bindInt(4, s.bucketCycles);
    insert.bindInt(5, static_cast<std::int64_t>(s.size()));
    insert.bindBlob(6, internal::encodeWords(s.busy));
    insert.bindBlob(7, internal::encodeWords(s.category));
    insert.execute("cannot write slice_summary");
  }
}

void ProfileWriter::Impl::recordCounterStats(const CounterRow& row) {
  CounterTrackStats& stats = counterStats[row.trackId];
  stats.minTs = stats.count == 0 ? row.ts : std::min(stats.minTs, row.ts);
  stats.maxTs = stats.count == 0 ? row.ts : std::max(stats.maxTs, row.ts);
  ++stats.count;
}

// A counter track of more than CounterSummaryBuilder::kMinValues values gets
// a summary, built from its values read back through counters_by_track_ts
// (so the indexes must exist) in (ts, writing) order: the values are not
// kept in memory while writing.
void ProfileWriter::Impl::writeCounterSummaries() {
  Statement values(db, "SELECT ts, value FROM counters WHERE track_id = ?1 ORDER BY ts, rowid", path);
  for (const auto& [trackId, stats] : counterStats) {
    if (stats.count <= internal::CounterSummaryBuilder::kMinValues) continue;
    internal::CounterSummaryBuilder builder(stats.minTs, stats.maxTs, stats.count);
    values.reset();
    values.bindInt(1, trackId);
    while (values.step()) {
      const std::int64_t ts = values.columnInt(0);
      builder.add(ts, counterValue(values.get(), 1, path, trackId, ts));
    }
    internal::writeCounterSummary(db, path, trackId, builder.take());
  }
}

void ProfileWriter::Impl::writeTrackStats() {
  Statement insertStats(db,
      "INSERT INTO slice_track_stats(track_id, slice_count, min_ts, max_end, max_dur, look_back) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)", path);
  Statement insertLong(db, "INSERT INTO long_slices(track_id, slice_id) VALUES (?1, ?2)", path);
  for (const auto& [trackId, stats] : trackStats) {
    insertStats.bindInt(1, trackId);
    insertStats.bindInt(2, stats.count());
    insertStats.bindInt(3, stats.minTs());
    insertStats.bindInt(4, stats.maxEnd());
    insertStats.bindInt(5, stats.maxDur());
    insertStats.bindInt(6, stats.lookBack());
    insertStats.execute("cannot write slice_track_stats");
    for (const std::int64_t sliceId : stats.longSliceIds()) {
      insertLong.bindInt(1, trackId);
      insertLong.bindInt(2, sliceId);
      insertLong.execute("cannot write long_slices");
    }
  }
}

void ProfileWriter::Impl::closeStatements() noexcept {
  for (Statement* statement : {&insertMeta, &insertRun, &insertTrack,
                               &insertProgram, &insertPhase, &insertTilePhase,
                               &insertTileMemory, &insertTileMemoryPeak, &insertCounter, &insertChunk,
                               &insertProgramWork, &insertTensor, &insertProgramOrder,
                               &insertTensorLifetime})
    *statement = Statement();
  slices.close();
}

void ProfileWriter::Impl::closeDatabase() noexcept {
  closeStatements();
  if (db) sqlite3_close_v2(db);
  db = nullptr;
}

void ProfileWriter::Impl::removeTemporary() noexcept {
  if (!temporaryPath.empty()) ::unlink(temporaryPath.c_str());
  releaseClaim();
}

void ProfileWriter::Impl::releaseClaim() noexcept {
  if (claimedTemporary) internal::releaseTemporaryPath(temporaryPath);
  claimedTemporary = false;
}

ProfileWriter::ProfileWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->open();
}

ProfileWriter::~ProfileWriter() {
  if (impl_ && impl_->state == Impl::State::Writing) abandon();
}

void ProfileWriter::setMeta(const std::string& key, const std::string& value) {
  impl_->requireWriting("set meta");
  if (isReservedMetaKey(key))
    throw ProfileError(impl_->path + ": meta key '" + key +
                       "' is written by the profile writer itself and cannot be set");
  impl_->guarded([&] {
    impl_->insertMeta.bindText(1, key);
    impl_->insertMeta.bindText(2, value);
    impl_->insertMeta.execute(("cannot write meta key '" + key + "'").c_str());
  });
}

std::int64_t ProfileWriter::addTrack(TrackRow row) {
  impl_->requireWriting("add a track");
  if (row.id == 0) row.id = impl_->nextTrackId;
  impl_->nextTrackId = std::max(impl_->nextTrackId, row.id + 1);
  impl_->guarded([&] {
    Statement& s = impl_->insertTrack;
    s.bindInt(1, row.id);
    s.bindOptionalInt(2, row.parentId);
    s.bindText(3, row.kind);
    s.bindText(4, row.name);
    s.bindOptionalInt(5, row.ipu);
    s.bindOptionalInt(6, row.tile);
    s.bindInt(7, row.sortOrder);
    s.execute(("cannot add track " + std::to_string(row.id) + " '" + row.name + "'").c_str());
  });
  return row.id;
}

void ProfileWriter::addRun(const RunRow& row) {
  impl_->requireWriting("add a run");
  if (row.endCycle < row.startCycle)
    throw ProfileError(impl_->path + ": run " + std::to_string(row.id) + " ends (cycle " +
                       std::to_string(row.endCycle) + ") before it starts (cycle " +
                       std::to_string(row.startCycle) + ")");
  impl_->guarded([&] {
    Statement& s = impl_->insertRun;
    s.bindInt(1, row.id);
    s.bindInt(2, row.entryPoint);
    s.bindText(3, row.name);
    s.bindInt(4, row.startCycle);
    s.bindInt(5, row.endCycle);
    s.bindInt(6, row.steps);
    s.bindInt(7, row.captured ? 1 : 0);
    s.execute(("cannot add run " + std::to_string(row.id)).c_str());
  });
}

std::int64_t ProfileWriter::addSlice(SliceRow row) {
  Impl& impl = *impl_;
  impl.requireWriting("add a slice");
  if (row.dur < 0 || row.ts < 0)
    throw ProfileError(impl.path + ": slice '" + row.name + "' on track " +
                       std::to_string(row.trackId) + " has ts " + std::to_string(row.ts) +
                       " and dur " + std::to_string(row.dur) +
                       "; expected non-negative device cycles");
  if (row.id == 0) row.id = impl.nextSliceId;
  impl.nextSliceId = std::max(impl.nextSliceId, row.id + 1);
  impl.recordStats(row);
  ++impl.slicesWritten;
  const std::int64_t id = row.id;
  impl.guarded([&] {
    impl.packSlice(row);
    impl.slices.add(std::move(row));
  });
  return id;
}

void ProfileWriter::addProgram(const ProgramRow& row) {
  impl_->requireWriting("add a program");
  impl_->guarded([&] {
    Statement& s = impl_->insertProgram;
    s.bindInt(1, row.id);
    s.bindOptionalInt(2, row.parentId);
    s.bindText(3, row.kind);
    s.bindText(4, row.name);
    s.bindText(5, row.layer);
    s.bindText(6, row.op);
    s.bindInt(7, row.ordinal);
    s.execute(("cannot add program " + std::to_string(row.id)).c_str());
  });
}

void ProfileWriter::addPhase(const PhaseRow& row) {
  impl_->requireWriting("add a phase");
  impl_->guarded([&] {
    Statement& s = impl_->insertPhase;
    s.bindInt(1, row.id);
    s.bindText(2, row.kind);
    s.bindText(3, row.name);
    s.bindOptionalInt(4, row.programId);
    s.bindOptionalInt(5, row.bytes);
    s.execute(("cannot add phase " + std::to_string(row.id)).c_str());
  });
}

void ProfileWriter::addTilePhase(const TilePhaseRow& row) {
  impl_->requireWriting("add tile phase cycles");
  impl_->guarded([&] {
    Statement& s = impl_->insertTilePhase;
    s.bindInt(1, row.phaseId);
    s.bindInt(2, row.ipu);
    s.bindInt(3, row.tile);
    s.bindInt(4, row.cycles);
    s.bindInt(5, row.vertices);
    s.execute(("cannot add cycles of phase " + std::to_string(row.phaseId) + " on ipu " +
               std::to_string(row.ipu) + " tile " + std::to_string(row.tile))
                  .c_str());
  });
}

void ProfileWriter::addTileMemory(const TileMemoryRow& row) {
  impl_->requireWriting("add tile memory");
  impl_->guarded([&] {
    Statement& s = impl_->insertTileMemory;
    s.bindInt(1, row.ipu);
    s.bindInt(2, row.tile);
    s.bindText(3, row.category);
    s.bindInt(4, row.alwaysLive ? 1 : 0);
    s.bindInt(5, row.bytes);
    s.execute("cannot add tile memory");
  });
}

void ProfileWriter::addTileMemoryPeak(const TileMemoryPeakRow& row) {
  impl_->requireWriting("add tile memory peak");
  impl_->guarded([&] {
    Statement& s = impl_->insertTileMemoryPeak;
    s.bindInt(1, row.ipu);
    s.bindInt(2, row.tile);
    s.bindInt(3, row.peakBytes);
    s.bindInt(4, row.alwaysLiveBytes);
    s.bindInt(5, row.notAlwaysLivePeakBytes);
    s.execute("cannot add tile memory peak");
  });
}

void ProfileWriter::addCounter(const CounterRow& row) {
  impl_->requireWriting("add a counter value");
  impl_->guarded([&] {
    Statement& s = impl_->insertCounter;
    s.bindInt(1, row.trackId);
    s.bindInt(2, row.ts);
    bindCounterValue(s.get(), 3, row.value);  // NaN as 'NaN' (traces/counter_value.hpp)
    s.bindOptionalInt(4, row.runId);
    s.bindOptionalInt(5, row.step);
    s.execute("cannot add a counter value");
    impl_->recordCounterStats(row);
  });
}

void ProfileWriter::addProgramWork(const ProgramWorkRow& row) {
  impl_->requireWriting("add program work");
  impl_->guarded([&] {
    Statement& s = impl_->insertProgramWork;
    s.bindInt(1, row.programId);
    s.bindInt(2, row.flops);
    s.bindInt(3, row.vertices);
    s.bindInt(4, row.tiles);
    s.execute("cannot add program work");
  });
}

void ProfileWriter::addTensor(const TensorRow& row) {
  impl_->requireWriting("add a tensor");
  impl_->guarded([&] {
    Statement& s = impl_->insertTensor;
    s.bindInt(1, row.id);
    s.bindText(2, row.name);
    s.bindText(3, row.category);
    s.bindInt(4, row.alwaysLive ? 1 : 0);
    s.bindInt(5, row.bytes);
    s.bindInt(6, row.tiles);
    s.bindText(7, row.layer);
    s.bindText(8, row.op);
    s.execute("cannot add a tensor");
  });
}

void ProfileWriter::addProgramOrder(const ProgramOrderRow& row) {
  impl_->requireWriting("add program order");
  impl_->guarded([&] {
    Statement& s = impl_->insertProgramOrder;
    s.bindInt(1, row.entryPoint);
    s.bindInt(2, row.position);
    s.bindInt(3, row.programId);
    s.execute("cannot add program order");
  });
}

void ProfileWriter::addTensorLifetime(const TensorLifetimeRow& row) {
  impl_->requireWriting("add a tensor lifetime");
  impl_->guarded([&] {
    Statement& s = impl_->insertTensorLifetime;
    s.bindInt(1, row.entryPoint);
    s.bindInt(2, row.tensorId);
    s.bindInt(3, row.firstPosition);
    s.bindInt(4, row.lastPosition);
    s.execute("cannot add a tensor lifetime");
  });
}

std::uint64_t ProfileWriter::slicesWritten() const { return impl_->slicesWritten; }

void ProfileWriter::commit() {
  Impl& impl = *impl_;
  impl.requireWriting("commit");
  impl.guarded([&] {
    impl.slices.flush();
    impl.writeTrackStats();
    impl.writePackedRemainder();
    impl.writeSliceSummaries();
    internal::execSql(impl.db, internal::kCreateIndexesSql, impl.path, "cannot build the indexes");
    impl.writeCounterSummaries();  // reads through counters_by_track_ts
    impl.insertMeta.bindText(1, "complete");
    impl.insertMeta.bindText(2, "1");
    impl.insertMeta.execute("cannot write meta complete");
    // Last row: what every table holds, so a reader can tell a damaged file
    // (traces/profile_verification.hpp). meta counts this row too.
    auto counts = countRows(impl.db, impl.path);
    ++counts["meta"];
    impl.insertMeta.bindText(1, kRowCountsMetaKey);
    impl.insertMeta.bindText(2, nlohmann::json(counts).dump());
    impl.insertMeta.execute("cannot write meta row_counts");
    internal::execSql(impl.db, "COMMIT", impl.path, "cannot commit the profile");
    impl.closeStatements();
    const int rc = sqlite3_close(impl.db);
    if (rc != SQLITE_OK) internal::throwSqliteError(impl.db, rc, impl.path, "cannot close");
    impl.db = nullptr;
    if (std::rename(impl.temporaryPath.c_str(), impl.path.c_str()) != 0)
      throw ProfileError(impl.path + ": cannot rename " + impl.temporaryPath + " onto it: " +
                         std::strerror(errno));
  });
  impl.state = Impl::State::Committed;
  impl.releaseClaim();
}

void ProfileWriter::abandon() {
  if (impl_->state == Impl::State::Committed) return;  // the profile is final
  // Unlink first: it is the one step that matters if we are shutting down.
  impl_->removeTemporary();
  impl_->closeDatabase();
  if (impl_->state == Impl::State::Writing) impl_->state = Impl::State::Closed;
}

const std::string& ProfileWriter::path() const { return impl_->path; }

}  // namespace ipusim::traces
