#pragma once
// ProfileWriter: writes one profile database. Rows are batched through
// prepared statements inside one transaction; the file is written under a
// temporary name next to the target and renamed onto it by commit(). If the
// writer is destroyed without commit() (an error, an interrupt), the
// temporary file is removed: a profile on disk is complete or absent.
#include "traces/profile_error.hpp"
#include "traces/profile_rows.hpp"

#include <memory>
#include <string>

namespace ipusim::traces {

class ProfileWriter {
 public:
  // Creates the parent directory if needed. Throws ProfileError naming the path.
  explicit ProfileWriter(const std::string& path);
  ~ProfileWriter();
  ProfileWriter(const ProfileWriter&) = delete;
  ProfileWriter& operator=(const ProfileWriter&) = delete;

  void setMeta(const std::string& key, const std::string& value);
  std::int64_t addTrack(TrackRow row);   // assigns row.id when 0; returns it
  void addRun(const RunRow& row);
  std::int64_t addSlice(SliceRow row);   // assigns row.id when 0; returns it
  void addProgram(const ProgramRow& row);
  void addPhase(const PhaseRow& row);
  void addTilePhase(const TilePhaseRow& row);
  void addTileMemory(const TileMemoryRow& row);
  void addTileMemoryPeak(const TileMemoryPeakRow& row);
  void addCounter(const CounterRow& row);
  void addProgramWork(const ProgramWorkRow& row);
  void addTensor(const TensorRow& row);
  void addProgramOrder(const ProgramOrderRow& row);
  void addTensorLifetime(const TensorLifetimeRow& row);

  std::uint64_t slicesWritten() const;
  // Ends the transaction, builds the indexes, closes and renames the file
  // onto `path`. Throws ProfileError (disk full, unwritable directory).
  void commit();
  // Removes the temporary file; safe to call from a signal-driven shutdown path.
  void abandon();
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ipusim::traces
