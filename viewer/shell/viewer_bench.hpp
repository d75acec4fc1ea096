#pragma once
// ipusim-view --bench: generates (once) a synthetic profile of N slices with
// the ProfileWriter, shaped like the infeed training loop (runs of ten steps;
// per step a StreamCopy Begin/Mid/End, nested program steps and BSP
// compute/exchange/sync), then times opening it and drawing frames of the
// execution trace at several zoom levels in a real GL window.
#include <cstdint>
#include <string>
#include <utility>

namespace ipusim::bench {

// Returns the process exit status; prints a table of timings to stdout.
int runViewerBench(const std::string& directory, std::int64_t slices, std::pair<int, int> windowSize);

// Writes the synthetic profile; returns the number of slices written.
std::int64_t writeSyntheticProfile(const std::string& path, std::int64_t slices);

}  // namespace ipusim::bench
