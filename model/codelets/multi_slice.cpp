// The embedding lookup's vertices, as popops' MultiSlice and MultiUpdateAdd
// (graphcore/poplibs lib/popops/codelets/MultiSlice.cpp, MultiUpdateAdd.cpp),
// over one tile's block of a table: `rows` consecutive table rows from
// `rowBegin` (of `totalRows`), each `cols` values, row-major.
//   MultiSlice: for each of the `n` offsets (int ids) in [rowBegin, rowBegin
//     + rows), subT's row i = baseT's row (id - rowBegin); other rows of subT
//     are left as they are (the lowering zeroes partials beforehand).
//   MultiUpdateAdd: for each offset in range, baseT's row (id - rowBegin) +=
//     scale subT's row i. A supervisor vertex over the whole block.
// Offsets outside the block are skipped, as popops skips them.
// Timing: popops' estimators (lib/popops/PerformanceEstimation.cpp,
// getMultiSliceCycleEstimate and getMultiUpdateOpCycleEstimate), with the
// offsets in range taken as popops' planner takes them for uniformly drawn
// ids: ceil(n x the block's share of the table's rows). The <half> variants
// widen the values to float and round each stored value once.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace ipusim::model {
namespace {

constexpr ir::DType kSliceFloat = ir::DType::Float;

struct MultiSliceBlock {
  std::uint64_t n, rows, cols, rowBegin, totalRows;
  static std::vector<std::string> params() { return {"n", "rows", "cols", "rowBegin", "totalRows"}; }
  static MultiSliceBlock of(const double* p) {
    return {std::uint64_t(p[0]), std::uint64_t(p[1]), std::uint64_t(p[2]), std::uint64_t(p[3]), std::uint64_t(p[4])};
  }
  static MultiSliceBlock check(const Codelet& c, const VertexShape& shape) {
    ShapeCheck check(c, shape);
    const MultiSliceBlock s{check.dimension("n"), check.dimension("rows"), check.dimension("cols"),
                       std::uint64_t(check.param("rowBegin")), check.dimension("totalRows")};
    if (s.rowBegin + s.rows > s.totalRows)
      throw std::invalid_argument(c.name() + ": rows [" + std::to_string(s.rowBegin) + ", " +
                                  std::to_string(s.rowBegin + s.rows) + ") lie outside the table's " +
                                  std::to_string(s.totalRows) + " rows");
    check.expectSize("offsets", s.n, "n");
    check.expectSize("baseT", s.rows * s.cols, "rows x cols = " + std::to_string(s.rows) + " x " + std::to_string(s.cols));
    check.expectSize("subT", s.n * s.cols, "n x cols = " + std::to_string(s.n) + " x " + std::to_string(s.cols));
    return s;
  }
  // Offsets in range, as popops' planner counts them for uniform ids.
  static std::uint64_t inRange(std::uint64_t n, std::uint64_t rows, std::uint64_t totalRows) {
    return std::min<std::uint64_t>(n, (n * rows + totalRows - 1) / totalRows);
  }
};

class MultiSlice final : public FlatCodelet<MultiSlice> {
 public:
  explicit MultiSlice(ir::DType valueType = kSliceFloat) : valueType_(valueType) {}
  std::string name() const override { return "MultiSlice"; }
  std::vector<FieldSpec> fields() const override {
    return {{"offsets", ir::DType::Int, FieldAccess::In}, {"baseT", kSliceFloat, FieldAccess::In}, {"subT", kSliceFloat, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return MultiSliceBlock::params(); }
  void validate(const VertexShape& shape) const override { MultiSliceBlock::check(*this, shape); }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const MultiSliceBlock s = MultiSliceBlock::of(shape.params.data());
    const std::uint64_t in = MultiSliceBlock::inRange(s.n, s.rows, s.totalRows);
    const std::uint64_t perVector = cycles::multiSliceElementsPerVector(target, valueType_);
    return cycles::kMultiSliceOverhead +
           in * (cycles::kMultiSlicePerOffsetInRange + (s.cols + perVector - 1) / perVector * cycles::kMultiSliceCyclesPerVector) +
           (s.n - in) * cycles::kMultiSlicePerOffsetOutOfRange;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const MultiSliceBlock s = MultiSliceBlock::of(params);
    const std::int32_t* offsets = f[0].as<const std::int32_t>();
    const float* base = f[1].as<const float>();
    float* sub = f[2].as<float>();
    for (std::uint64_t i = 0; i < s.n; ++i) {
      const std::int64_t row = std::int64_t(offsets[i]) - std::int64_t(s.rowBegin);
      if (row < 0 || std::uint64_t(row) >= s.rows) continue;
      std::memcpy(sub + i * s.cols, base + std::uint64_t(row) * s.cols, s.cols * sizeof(float));
    }
  }

 private:
  ir::DType valueType_;
};

class MultiUpdateAdd final : public FlatCodelet<MultiUpdateAdd> {
 public:
  explicit MultiUpdateAdd(ir::DType valueType = kSliceFloat) : valueType_(valueType) {}
  std::string name() const override { return "MultiUpdateAdd"; }
  std::vector<FieldSpec> fields() const override {
    return {{"offsets", ir::DType::Int, FieldAccess::In}, {"baseT", kSliceFloat, FieldAccess::InOut}, {"subT", kSliceFloat, FieldAccess::In}};
  }
  std::vector<std::string> params() const override {
    std::vector<std::string> p = MultiSliceBlock::params();
    p.push_back("scale");
    return p;
  }
  bool isSupervisor() const override { return true; }
  void validate(const VertexShape& shape) const override { MultiSliceBlock::check(*this, shape); }
  // popops: every worker scans every offset and updates the rows of its
  // share of the block; the supervisor waits for the slowest.
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const MultiSliceBlock s = MultiSliceBlock::of(shape.params.data());
    const bool half = valueType_ == ir::DType::Half;
    const std::uint32_t workers = std::max<std::uint32_t>(1, target.tile.workerContexts);
    const std::uint64_t rowsPerWorker = (s.rows + workers - 1) / workers;
    const std::uint64_t in = MultiSliceBlock::inRange(s.n, rowsPerWorker, s.totalRows);
    const std::uint64_t bytes = half ? 2 : 4;
    const std::uint64_t elementsPerAtom = std::max<std::uint64_t>(1, cycles::kAtomicStoreBytes / bytes);
    ir::Cycles perOffset = half ? cycles::kMultiUpdateAddHalfPerOffsetInRange : cycles::kMultiUpdateAddFloatPerOffsetInRange;
    if (s.cols % elementsPerAtom) perOffset += s.cols * cycles::kMultiUpdateAddSubWordCyclesPerElement;
    else perOffset += (s.cols / elementsPerAtom - 1) * cycles::kMultiUpdateAddCyclesPerAtom;
    const ir::Cycles worker = cycles::kMultiUpdateAddWorkerEntry +
                              (half ? cycles::kMultiUpdateAddHalfSetup : cycles::kMultiUpdateAddFloatSetup) +
                              cycles::kMultiUpdateAddScaledSetup + in * perOffset +
                              (s.n - in) * cycles::kMultiUpdateAddPerOffsetOutOfRange;
    return worker * workers + cycles::kMultiUpdateAddSupervisor;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const MultiSliceBlock s = MultiSliceBlock::of(params);
    const float scale = float(params[5]);
    const std::int32_t* offsets = f[0].as<const std::int32_t>();
    float* base = f[1].as<float>();
    const float* sub = f[2].as<const float>();
    for (std::uint64_t i = 0; i < s.n; ++i) {
      const std::int64_t row = std::int64_t(offsets[i]) - std::int64_t(s.rowBegin);
      if (row < 0 || std::uint64_t(row) >= s.rows) continue;
      float* dst = base + std::uint64_t(row) * s.cols;
      for (std::uint64_t c = 0; c < s.cols; ++c) dst[c] += scale * sub[i * s.cols + c];
    }
  }

 private:
  ir::DType valueType_;
};

}  // namespace

void addMultiSliceCodelets(CodeletRegistry& registry) {
  addWithHalfActivations<MultiSlice>(registry, {"baseT", "subT"});
  addWithHalfActivations<MultiUpdateAdd>(registry, {"baseT", "subT"});
  // A half table sliced into float partials (summed over row blocks in float).
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("MultiSlice", {ir::DType::Half, kSliceFloat}),
                                             std::make_unique<MultiSlice>(ir::DType::Half),
                                             std::vector<ir::DType>{ir::DType::Int, ir::DType::Half, kSliceFloat}));
}

}  // namespace ipusim::model
