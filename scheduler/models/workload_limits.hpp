#pragma once
// Up-front limits on a workload's sizes, checked by parseWorkload() before
// anything is compiled or allocated: every size the file can give is held
// against what the simulator can hold, and a value over its limit is an
// error naming the file, the key, the value and the limit, e.g.
//   "w.json: model.layers[1].units: 1000000 needs 3136000000 bytes of float
//    weights (fan-in 784); the limit for one tensor is 1073741824 bytes: at most 342392".
// Only sizes are checked here; whether a model fits the IPU's tiles is the
// compiler's decision (its message names the tile), and with
// debug.allowOutOfMemory a model larger than the IPU may still be simulated.
#include "scheduler/models/workload.hpp"

#include <cstdint>

#include <string>

namespace ipusim::scheduler {

// Host memory for the dataset held in memory (examples x features bytes) and
// for the batches buffered by the feeds (design choice: 4 GiB, so that a
// mistyped size fails at once rather than after minutes of allocation).
inline constexpr std::uint64_t kMaxHostDatasetBytes = 4ull << 30;
// One tensor (a layer's weights or activations, a batch of input): at most
// 1 GiB, the whole memory of the largest IPU (Mk2: 1472 x 624 KiB = 897 MiB,
// M2000 datasheet) rounded up. Even out of memory (debug.allowOutOfMemory)
// the simulator holds every byte on the host, so this bounds host memory.
inline constexpr std::uint64_t kMaxTensorBytes = 1ull << 30;
// Labels are stored as 16-bit class indices on the host (IDX label files
// hold bytes, so at most 256 classes there): at most 65,536 classes, beyond
// ImageNet-21k's 21,841.
inline constexpr std::uint32_t kMaxClasses = 65536;
// Steps per run and in total (design choice: 2^40, far beyond a training job,
// while step counters and cycle totals stay exact).
inline constexpr std::uint64_t kMaxSteps = 1ull << 40;
// Losses the outfeed buffers (design choice: the tutorial uses 10).
inline constexpr std::uint32_t kMaxOutfeedDepth = 65536;

// Throws std::invalid_argument("<source>: <key>: ...") for the first size over its limit.
void checkWorkloadLimits(const Workload& w, const std::string& source);

// For the layers' own checks (Layer::checkLimits): products of three sizes
// may pass 64 bits, so they are computed in 128; their decimal text; and
// "the limit for one tensor is N bytes".
using WideCount = unsigned __int128;
std::string wideText(WideCount v);
std::string tensorLimitText();

}  // namespace ipusim::scheduler
