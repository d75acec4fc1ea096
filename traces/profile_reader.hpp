#pragma once
// ProfileReader: opens a profile for the report commands, the analyses and
// the viewer. Checks on open that the file exists, is SQLite, is an ipusim
// profile and has a schema version this build reads; otherwise throws
// ProfileError naming the file and the problem.
#include "traces/counter_summary.hpp"
#include "traces/packed_slices.hpp"
#include "traces/profile_error.hpp"
#include "traces/profile_rows.hpp"
#include "traces/slice_summary.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace ipusim::traces {

class ProfileReader {
 public:
  // How much of SCHEMA.md's "Verifying a profile" the constructor does.
  enum class Checks {
    All,        // every check
    // All but the two that read the whole file (quick_check, row counts):
    // for a reader that reads a profile piecemeal and runs them elsewhere
    // (the viewer, on a background thread through a second reader).
    WholeFileDeferred,
  };
  // `path` is a profile file or a report directory holding profile.pop.
  // `vfs`: the SQLite VFS to read it through (nullptr: SQLite's default).
  explicit ProfileReader(const std::string& path, Checks checks = Checks::All, const char* vfs = nullptr);
  ~ProfileReader();
  ProfileReader(const ProfileReader&) = delete;
  ProfileReader& operator=(const ProfileReader&) = delete;

  const std::string& path() const;
  std::map<std::string, std::string> meta() const;
  std::string metaValue(const std::string& key, const std::string& fallback = "") const;
  std::vector<RunRow> runs() const;
  std::vector<TrackRow> tracks() const;
  std::vector<ProgramRow> programs() const;
  std::vector<PhaseRow> phases() const;
  std::vector<TilePhaseRow> tilePhases(std::int64_t phaseId) const;
  std::vector<TileMemoryRow> tileMemory() const;
  // Per-tile peaks, by (ipu, tile); empty for profiles written before the
  // tile_memory_peak table existed.
  std::vector<TileMemoryPeakRow> tileMemoryPeaks() const;
  std::vector<CounterRow> counters(std::int64_t trackId) const;
  // The counter track's summary (counter_summary): nullopt for a track of
  // too few values to have one, or a profile written before it existed.
  // Throws ProfileError naming the file when the row does not hold what it says.
  std::optional<CounterSummary> counterSummary(std::int64_t trackId) const;
  // The executable's facts for the operations and liveness reports. Each is
  // empty for a profile written before its table existed.
  std::vector<ProgramWorkRow> programWork() const;
  std::vector<TensorRow> tensors() const;
  std::vector<ProgramOrderRow> programOrder() const;         // by entry point, position
  std::vector<TensorLifetimeRow> tensorLifetimes() const;    // by entry point, tensor
  bool hasTable(const std::string& name) const;

  // Slices of a track overlapping [from, to), ordered by ts.
  std::vector<SliceRow> slices(std::int64_t trackId, std::int64_t from, std::int64_t to) const;
  // Every slice of a track, streamed in ts order without materialising them all.
  void forEachSlice(std::int64_t trackId, const std::function<void(const SliceRow&)>& fn) const;
  // Every slice of a track, drawing columns only, from the packed copy
  // (slice_chunks): many times faster than forEachSlice. Returns false and
  // leaves `out` empty when the profile has no packed copy (written before
  // it existed); throws ProfileError naming the file when it is corrupt.
  bool readPackedSlices(std::int64_t trackId, PackedSlices& out) const;
  // The same, chunk by chunk (at most 65,536 slices each, `strings` left
  // empty: see packedSliceStrings()), so a caller never holds a second copy
  // of a whole track. Returns false, calling nothing, without a packed copy.
  bool forEachPackedChunk(std::int64_t trackId, const std::function<void(const PackedSlices&)>& fn) const;
  // Only chunks firstChunk .. lastChunk (inclusive) of the track.
  bool forEachPackedChunk(std::int64_t trackId, std::int64_t firstChunk, std::int64_t lastChunk,
                          const std::function<void(const PackedSlices&)>& fn) const;
  // The track's chunks by number, without their data: slice counts and time
  // spans (empty without a packed copy).
  std::vector<PackedChunkSpan> packedChunkSpans(std::int64_t trackId) const;
  // The track's busy-time summary, one per depth (slice_summary; empty for
  // a track of one chunk or less). Throws ProfileError naming the file when
  // a row does not hold what it says.
  std::vector<SliceSummary> sliceSummaries(std::int64_t trackId) const;
  // slice_strings by id (empty without a packed copy).
  std::vector<std::string> packedSliceStrings() const;
  std::int64_t sliceCount() const;
  // [min ts, max ts+dur] over all slices; {0,0} when there are none.
  std::pair<std::int64_t, std::int64_t> timeExtent() const;

  // For analyses that need plain SQL. Owned by the reader.
  sqlite3* db() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ipusim::traces
