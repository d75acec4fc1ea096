#pragma once
// A functional run holds every byte of simulated tile memory on the host:
// with debug.allowOutOfMemory an over-full model's tiles may hold far more
// than the chip (a Dense of 8e6 units planned 96 GB), which the run would
// try to allocate until the system killed it. The tiles' bytes in all are
// held to a bound before the run, naming the file and what to do instead.
#include "model/ir/executable.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace ipusim::sim {

// 8 GiB of simulated tile memory (design choice: nine Mk2 IPUs' 897 MiB,
// rounded up; measured about 1.8 bytes of host memory a simulated byte, 392
// MB of tiles ran in 732 MB, so about 15 GB of host memory at the bound).
inline constexpr std::uint64_t kMaxSimulatedTileBytes = 8ull << 30;

// Throws std::invalid_argument("<file>: ...") when the executable's tiles
// hold more than kMaxSimulatedTileBytes in all: per tile the highest byte
// its placed tensors use (as ir::tileMemoryUsage counts; the few buffers
// placed only at load, such as a replica's received gradients, are left out).
inline void checkSimulatedTileBytes(const ir::Executable& exe, const std::string& file) {
  std::map<std::uint32_t, std::uint64_t> top;
  for (const ir::Tensor& t : exe.tensors)
    for (const ir::TileInterval& iv : t.mapping)
      if (iv.address != ir::TileInterval::kUnplaced && iv.end > iv.begin) {
        std::uint64_t& highest = top[iv.tile];
        highest = std::max(highest, iv.address + (iv.end - iv.begin) * ir::sizeOf(t.dtype));
      }
  // (Saturating: two tiles holding a byte at 2^63 summed to 0, passed, and
  // the load wrote outside the memory it had allocated: SIGSEGV.)
  std::uint64_t total = 0;
  for (const auto& [tile, bytes] : top) total += std::min(bytes, std::numeric_limits<std::uint64_t>::max() - total);
  if (total <= kMaxSimulatedTileBytes) return;
  const bool saturated = total == std::numeric_limits<std::uint64_t>::max();
  throw std::invalid_argument(file + ": the compiled model's tiles hold " + (saturated ? "at least " : "") +
                              std::to_string(total) +
                              " bytes in all, over the " + std::to_string(kMaxSimulatedTileBytes) +
                              " bytes a functional run simulates on the host (sim/cli/simulated_memory_bound.hpp); "
                              "--synthetic-data times it without the values");
}

}  // namespace ipusim::sim
