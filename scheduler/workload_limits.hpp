#pragma once
// Up-front limits on a workload's sizes, checked by parseWorkload() before
// anything is compiled or allocated: every size the file can give is held
// against what the target and the host can hold, and a value over its limit
// is an error naming the file, the key, the value and the limit, e.g.
//   "w.json: model.layers[1].units: 1000000 needs 3136000000 bytes of float
//    weights (fan-in 784); one ipu2 IPU holds 940572672 bytes: at most 299943".
// Only sizes are checked here; whether a model fits after planning is the
// compiler's decision.
#include "scheduler/workload.hpp"

#include <cstdint>

namespace ipusim::scheduler {

// Host memory for the dataset held in memory (examples x features bytes) and
// for the batches buffered by the feeds (design choice: 4 GiB, so that a
// mistyped size fails at once rather than after minutes of allocation).
inline constexpr std::uint64_t kMaxHostDatasetBytes = 4ull << 30;
// Labels are stored as unsigned bytes (as in IDX label files): at most 256 classes.
inline constexpr std::uint32_t kMaxClasses = 256;
// Steps per run and in total (design choice: 2^40, far beyond a training job,
// while step counters and cycle totals stay exact).
inline constexpr std::uint64_t kMaxSteps = 1ull << 40;
// Losses the outfeed buffers (design choice: the tutorial uses 10).
inline constexpr std::uint32_t kMaxOutfeedDepth = 65536;

// Throws std::invalid_argument("<source>: <key>: ...") for the first size over its limit.
void checkWorkloadLimits(const Workload& w, const std::string& source);

}  // namespace ipusim::scheduler
