#include "model/hardware/copy_runs.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace ipusim::model::hardware {
namespace {

template <std::uint64_t kBytes>
using Fixed = std::integral_constant<std::uint64_t, kBytes>;

// The moves [first, last) of run r, each of `bytes` (the run's size: a
// Fixed<N> makes it a compile-time constant, so memcpy becomes inline moves).
template <class Bytes>
void copyEach(const CopyRun& r, std::uint64_t first, std::uint64_t last, Bytes bytes) {
  const std::uint8_t* src = r.src + std::int64_t(first) * r.srcStep;
  std::uint8_t* dst = r.dst + std::int64_t(first) * r.dstStep;
  for (std::uint64_t c = first; c < last; ++c, src += r.srcStep, dst += r.dstStep) std::memcpy(dst, src, bytes);
}

// Moves [first, last) of an independent run, whole.
void copyMoves(const CopyRun& r, std::uint64_t first, std::uint64_t last) {
  // The sizes of the compiled programs' pieces: rows of 1-32 floats.
  switch (r.bytes) {
    case 4: return copyEach(r, first, last, Fixed<4>{});
    case 8: return copyEach(r, first, last, Fixed<8>{});
    case 12: return copyEach(r, first, last, Fixed<12>{});
    case 16: return copyEach(r, first, last, Fixed<16>{});
    case 20: return copyEach(r, first, last, Fixed<20>{});
    case 24: return copyEach(r, first, last, Fixed<24>{});
    case 32: return copyEach(r, first, last, Fixed<32>{});
    case 48: return copyEach(r, first, last, Fixed<48>{});
    case 64: return copyEach(r, first, last, Fixed<64>{});
    case 96: return copyEach(r, first, last, Fixed<96>{});
    case 112: return copyEach(r, first, last, Fixed<112>{});
    case 128: return copyEach(r, first, last, Fixed<128>{});
    default: return copyEach(r, first, last, r.bytes);
  }
}

}  // namespace

CopyRuns::CopyRuns(const std::vector<ExchangeTransfer>& transfers, bool independent)
    : moves_(transfers.size()), independent_(independent) {
  for (const ExchangeTransfer& t : transfers) {
    if (!runs_.empty()) {
      CopyRun& last = runs_.back();
      const std::int64_t srcStep = t.src - (last.src + (std::int64_t(last.count) - 1) * last.srcStep);
      const std::int64_t dstStep = t.dst - (last.dst + (std::int64_t(last.count) - 1) * last.dstStep);
      if (last.bytes == t.bytes && (last.count == 1 || (srcStep == last.srcStep && dstStep == last.dstStep))) {
        last.srcStep = srcStep;
        last.dstStep = dstStep;
        ++last.count;
        continue;
      }
    }
    runs_.push_back({t.src, t.dst, t.bytes, 1, 0, 0});
  }
  starts_.reserve(runs_.size() + 1);
  std::uint64_t total = 0;
  for (const CopyRun& r : runs_) {
    starts_.push_back(total);
    total += r.bytes * r.count;
  }
  starts_.push_back(total);
}

void CopyRuns::execute() const {
  if (!independent_) {
    for (const CopyRun& r : runs_) {
      const std::uint8_t* src = r.src;
      std::uint8_t* dst = r.dst;
      for (std::uint64_t c = 0; c < r.count; ++c, src += r.srcStep, dst += r.dstStep) std::memmove(dst, src, r.bytes);
    }
    return;
  }
  for (const CopyRun& r : runs_) copyMoves(r, 0, r.count);
}

void CopyRuns::executePart(unsigned part, unsigned parts) const {
  const std::uint64_t begin = totalBytes() * part / parts;
  const std::uint64_t end = totalBytes() * (part + 1) / parts;
  // The first run that ends after `begin`.
  std::size_t i = std::size_t(std::upper_bound(starts_.begin(), starts_.end() - 1, begin) - starts_.begin());
  if (i) --i;
  for (; i < runs_.size() && starts_[i] < end; ++i) {
    const CopyRun& r = runs_[i];
    if (r.bytes == 0) continue;
    if (starts_[i] >= begin && starts_[i + 1] <= end) {  // the whole run: no divisions (most runs)
      copyMoves(r, 0, r.count);
      continue;
    }
    const std::uint64_t lo = std::max(begin, starts_[i]) - starts_[i];  // bytes into the run
    const std::uint64_t hi = std::min(end, starts_[i + 1]) - starts_[i];
    if (lo >= hi) continue;
    // Whole moves [first, last); the cut moves at either end byte by range.
    std::uint64_t first = (lo + r.bytes - 1) / r.bytes, last = hi / r.bytes;
    auto piece = [&](std::uint64_t move, std::uint64_t from, std::uint64_t to) {  // bytes [from, to) of a move
      std::memcpy(r.dst + std::int64_t(move) * r.dstStep + from, r.src + std::int64_t(move) * r.srcStep + from,
                  to - from);
    };
    if (first > last) {  // lo and hi cut the same move
      piece(lo / r.bytes, lo % r.bytes, hi - lo / r.bytes * r.bytes);
      continue;
    }
    if (lo % r.bytes) piece(lo / r.bytes, lo % r.bytes, r.bytes);
    copyMoves(r, first, last);
    if (hi % r.bytes) piece(last, 0, hi % r.bytes);
  }
}

}  // namespace ipusim::model::hardware
