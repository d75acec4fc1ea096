#pragma once
// FusedMatMulPlan: an ir::FusedMatMul resolved at load: where a, b and out
// lie in tile memory, to compute the product whole.
//
// Why: lowered tile by tile, the tutorial's two large products move ~6 MB a
// step through the exchange (each tile's operand blocks, then the partials)
// and run ~1,500 small products (11 x 24 x 12) and their reductions: two
// thirds of a functional run's host time. Computed whole, a and b are read
// once and the product runs on full rows.
//
// The result is the tile program's, bit for bit: each element is summed in
// the same order by the same kernel (model/codelets/matmul_kernel.hpp): each
// k slice from +0 in MatMulPartial's order, then the slices' partials added
// in slice order, as ReduceSum adds its rows (from the first, times a scale
// of 1), and rounded once to the output type (a half output: the AMP's
// wider sum, or the reduction's float partials, rounded once).
//
// When: the whole product runs at the lowering's last program, and the
// lowering's programs do nothing else. That is the tile program's result
// because they write nothing but the product's temporaries and out: a and b
// are unchanged since the first program read them. What differs: the
// temporaries (the gathered blocks, the partials) are never written, so tile
// memory holds no copy of them. The timing is not touched: the lowering's
// phases run and are counted as always.
#include "model/hardware/memory_layout.hpp"
#include "model/ir/fused_matmul.hpp"

#include <functional>
#include <vector>

namespace ipusim::model::hardware {

// The operands and result of the product being computed, as float: a
// row-major, b packed in panels of columns; shared by all products (one runs
// at a time), grown to the largest.
struct FusedScratch {
  std::vector<float> a, b, result;
  std::vector<float> stored;  // an operand as read, before its layout
};

class FusedMatMulPlan {
 public:
  // Throws std::invalid_argument naming the product when its regions do not
  // have its shape's elements or its types are not float or half.
  FusedMatMulPlan(const ir::FusedMatMul& product, const MemoryLayout& memory);

  // a and b from tile memory into scratch, as float: a row-major (aRows x
  // k), b in panels of columns (each k x width, the kernel's b).
  void gather(FusedScratch& scratch) const;
  // Part `part` of `parts` of the product into scratch.result: whole panels
  // of columns, or with one panel, whole blocks of 4 rows. Parts may be
  // computed concurrently (after gather()).
  void computePart(FusedScratch& scratch, unsigned part, unsigned parts) const;
  // scratch.result into out's tile memory.
  void store(const FusedScratch& scratch) const;

  // The most parts computePart() can cut the product into.
  std::uint64_t maxParts() const;
  // Bytes the product reads and writes (the pool's threshold).
  std::uint64_t workBytes() const { return 4 * (f_.aRows * f_.k + f_.k * f_.n + f_.m * f_.n); }

 private:
  struct Span {  // `elements` elements of one tile's memory at `data`, from region element `first`
    std::uint8_t* data;
    std::uint64_t first, elements;
  };
  static std::vector<Span> spans(const ir::TensorRef& ref, const MemoryLayout& memory);
  static void read(const std::vector<Span>& from, ir::DType type, float* to);

  ir::FusedMatMul f_;
  std::vector<Span> a_, b_, out_;
};

// The products a functional run computes whole, grouped by their programs
// (a replicated graph's replicas share them), and each program's group.
struct FusedMatMuls {
  struct Group {
    std::vector<FusedMatMulPlan> plans;
    ir::Id last = ir::kNoId;  // the group's last program: where its products run
  };
  std::vector<Group> groups;
  std::vector<std::int32_t> groupOfProgram;  // per program: its group, or -1 (none)
  FusedScratch scratch;
  bool empty() const { return groups.empty(); }
};

// The executable's fused products whose programs are Execute and Copy
// programs that run only as one consecutive run of one Sequence's children
// (never as an entry point, a callee, another program's child, nor in two
// products): only then does nothing run between them. The others run tile
// by tile.
// `keep`: the products computed (a share of the tiles: LoadOptions::functionalTiles);
// a group keeps its programs' work skipped whatever it keeps.
FusedMatMuls planFusedMatMuls(const ir::Executable& exe, const MemoryLayout& memory,
                              const std::function<bool(const ir::FusedMatMul&)>& keep = {});

}  // namespace ipusim::model::hardware
