#pragma once
// The profiles of one run's instances, read as one system. Under mpirun each
// rank ("instance", as PopDist calls a host process) writes its own profile,
// profile.rankK.pop, as Poplar writes one per process: the host's and the
// engine's tracks, the executable's facts (programs, phases, tensors, work)
// and the tracks, tile cycles and tile memory of its replicas' IPUs (meta
// instance_first_ipu, instance_ipus). Combined, they are the profile one
// process writes for the same run: each IPU's rows from the instance that
// holds it, the rest from instance 0, meta as one process writes it plus
// `instances` (how many profiles were combined).
//
// Every command that reads a profile takes a directory of instance profiles
// where it takes a profile (`ipusim report DIR`, `compare`, `insights`,
// `export`, the viewer): ProfileSource combines them into a temporary file.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

// The instance profiles in `path`, by rank (profile.rank0.pop, profile.rank1.pop, ...), when `path` is a
// directory that holds profile.rank0.pop and no profile.pop; nullopt otherwise (a file, a report directory
// of one process, a directory that does not exist: the reader says what is wrong with those). Throws
// traces::ProfileError naming the directory when a rank's profile is missing (profile.rank0.pop says how
// many instances ran) or an extra one is present.
std::optional<std::vector<std::string>> findInstanceProfiles(const std::string& path);

// Told how far a combination is (done of total steps: a track copied, an instance's tiles copied): a
// POD256's 16 profiles take about half a minute.
using CombineProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Writes the profiles (instance 0 first, as findInstanceProfiles lists them) as one profile at `out`
// (traces::ProfileWriter: a temporary file renamed when complete). Throws traces::ProfileError naming the
// file when a profile is not instance K of the set's number, when two instances' runs differ (a meta value,
// such as job_end_cycle or workload, or their runs), or when their IPUs do not cover the system once each.
void combineInstanceProfiles(const std::vector<std::string>& profiles, const std::string& out,
                             const CombineProgress& progress = {});

// A profile to read: `path` itself, or, for a directory of instance profiles, their combination in a
// temporary file, removed when the source is destroyed (and on SIGINT/SIGTERM: traces/interrupt_cleanup.hpp).
class ProfileSource {
 public:
  explicit ProfileSource(const std::string& path, const CombineProgress& progress = {});
  ~ProfileSource();
  ProfileSource(const ProfileSource&) = delete;
  ProfileSource& operator=(const ProfileSource&) = delete;

  // The file to open with traces::ProfileReader.
  const std::string& path() const { return path_; }
  // The path the user named (for messages).
  const std::string& named() const { return named_; }
  // How many instance profiles were combined; 0 when `path` is read as it is.
  std::size_t instances() const { return instances_; }

 private:
  std::string named_, path_;
  std::size_t instances_ = 0;
  bool temporary_ = false;
};

}  // namespace ipusim::profiler::analysis
