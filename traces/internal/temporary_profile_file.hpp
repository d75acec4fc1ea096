#pragma once
// Internal to traces/: naming and clean-up of the temporary file a profile is
// written to before commit renames it onto its final path. The name is
// "<path>.tmp-<pid>" in the same directory, so the rename stays within one
// file system and is atomic on POSIX.
#include <string>

namespace ipusim::traces::internal {

std::string temporaryProfilePath(const std::string& path);

// Two writers of one path in one process would share a temporary name and
// destroy each other's file: the second claim of a temporary path fails
// (returns false) until the first is released. A claimed path is registered
// for removal on interrupt (traces/interrupt_cleanup.hpp) until released.
bool claimTemporaryPath(const std::string& temporaryPath);
void releaseTemporaryPath(const std::string& temporaryPath) noexcept;

// Removes "<path>.tmp-<pid>" files left by processes that no longer exist
// (a crash or kill -9 of an earlier run). Files of live processes are kept:
// another run may be writing the same profile right now. Best effort: it
// never throws.
void removeStaleTemporaries(const std::string& path) noexcept;

// The pid of another live process writing `path` (its "<path>.tmp-<pid>"
// exists), or 0. Two runs into one autoReport directory would otherwise
// both report profile.pop while only the last one survives.
long otherLiveWriter(const std::string& path) noexcept;

}  // namespace ipusim::traces::internal
