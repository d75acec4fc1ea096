#pragma once
// The job's total simulated cycles: the one definition `ipusim run`, `report`,
// `compare` and the viewer show. The job starts at cycle 0 (the simulation's
// start: the host's first dispatch is part of the job) and ends when the host
// holds every result (meta job_end_cycle, written by the Engine when the job
// is over; it includes the last outfeed drain). A profile without that key
// ends at its last run's end.
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

// Throws traces::ProfileError when meta job_end_cycle is not a non-negative integer.
std::int64_t jobCycles(const traces::ProfileReader& reader);
// The same from what a caller has already read: meta job_end_cycle's text
// (empty when absent) and the runs (the viewer holds 416,667 runs of a
// 100-million-slice profile: reading them twice took a third of opening).
// `path` names the profile in the error.
std::int64_t jobCycles(const std::string& jobEndCycle, const std::vector<traces::RunRow>& runs,
                       const std::string& path);

}  // namespace ipusim::profiler::analysis
