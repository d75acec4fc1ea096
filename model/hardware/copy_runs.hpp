#pragma once
// CopyRuns: the byte moves of an exchange, stored compactly and performed
// with little work per move.
//
// An exchange of the tutorial moves ~130,000 pieces of 8-112 bytes a step
// (rows of operand blocks gathered onto tiles, partials onto the reducing
// tiles). Moving them one by one through memmove cost more in the call and
// its size dispatch, and in reading a 24-byte descriptor per piece, than in
// the bytes. Here consecutive moves of the same size whose source and
// destination advance by constant steps form one run (a strided 2-D copy:
// a gather of 11 rows of 24 floats is one run), and a run of a common small
// size is copied by a loop whose copy size is a compile-time constant
// (inline vector moves, no call).
#include <cstdint>
#include <vector>

namespace ipusim::model::hardware {

struct ExchangeTransfer {  // one contiguous byte move
  const std::uint8_t* src;
  std::uint8_t* dst;
  std::uint64_t bytes;
};

// `count` moves of `bytes` each: move c goes from src + c * srcStep to
// dst + c * dstStep.
struct CopyRun {
  const std::uint8_t* src = nullptr;
  std::uint8_t* dst = nullptr;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::int64_t srcStep = 0;
  std::int64_t dstStep = 0;
};

class CopyRuns {
 public:
  CopyRuns() = default;
  // The moves, in order. `independent`: no destination byte meets another
  // move's source or destination, so the moves may run in any order, be cut
  // anywhere and run concurrently (plain copies); otherwise they run in order,
  // each as a memmove (a move may overlap its own source).
  CopyRuns(const std::vector<ExchangeTransfer>& transfers, bool independent);

  // Every move, in order.
  void execute() const;
  // The moves' bytes [total * part / parts, total * (part + 1) / parts)
  // (a move may be cut). Only when independent: parts may run concurrently.
  void executePart(unsigned part, unsigned parts) const;

  std::uint64_t totalBytes() const { return starts_.empty() ? 0 : starts_.back(); }
  std::size_t numRuns() const { return runs_.size(); }
  std::size_t numMoves() const { return moves_; }
  bool independent() const { return independent_; }

 private:
  std::vector<CopyRun> runs_;
  std::vector<std::uint64_t> starts_;  // bytes before runs_[i]; one more entry: the total
  std::size_t moves_ = 0;
  bool independent_ = false;
};

}  // namespace ipusim::model::hardware
