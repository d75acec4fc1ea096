// ReduceSum, ReduceMax over a rows x cols matrix `in`, along `axis`:
//   axis 0 -> out has cols (each column reduced over the rows),
//   axis 1 -> out has rows (each row reduced over its columns).
// ReduceSum multiplies the result by `scale`; with `accumulate` the result is
// added to (ReduceSum) or max-ed with (ReduceMax) what `out` holds.
// ReduceSum<half,float> (half in, float out) and ReduceSum<half,half> (half in
// and out) accumulate in float and round a half out once, as popops reduces
// half data with a wider accumulator (poplibs' ReduceIntermediatePrec test
// adds many small halves to a large one and checks none is lost); their
// vector loops read 4 halves per vector.
//
// Timing (worker cycles) is popops' reduction estimate (constants and sources
// in cycle_model.hpp), with V = elementsPerVector(in) (2 floats or 4 halves):
//   axis 1 (each row folded to one value, ALL_REGIONS_CONTINUOUS):
//     kContinuousReduceOverhead + rows * (kContinuousReduceRowOverhead + cols / V)
//       + (cols odd ? kContinuousReduceOddTail : 0) + (accumulate ? kReduceUpdateCycles : 0)
//   axis 0 (rows accumulated into a cols vector, STRIDED_REDUCE; outputs in
//   groups of gcd(V, cols)):
//     kStridedReduceOverhead + ceil(cols / group) * (kStridedReduceGroupOverhead
//       + completion(op) + (accumulate ? kStridedReduceUpdateStore : kStridedReduceStore) + rows - 1)
// The half variants take the FLOAT-partials constants with 4 halves per
// vector (estimate: the accumulation is in float either way).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>
#include <numeric>

namespace ipusim::model {
namespace {

// combineInto(a, b): a = a (+ or max) b, in that operand order. By reference:
// a GCC vector of 8 floats passed or returned by value changes the ABI without
// AVX (GCC's -Wpsabi), and these are used in the kernels' AVX2 clones.
struct SumReduction {
  static constexpr const char* kName = "ReduceSum";
  static constexpr bool kScaled = true;
  static constexpr ir::Cycles kStridedCompletion = cycles::kStridedReduceAddCompletion;
  static float reduceRow(const float* in, std::uint64_t n) { return vec::sum(in, n); }
  template <class V>
  static void combineInto(V& a, const V& b) { a = a + b; }
};
struct MaxReduction {
  static constexpr const char* kName = "ReduceMax";
  static constexpr bool kScaled = false;
  static constexpr ir::Cycles kStridedCompletion = cycles::kStridedReduceMaxCompletion;
  static float reduceRow(const float* in, std::uint64_t n) { return vec::max(in, n); }
  template <class V>  // float, or a GCC vector of floats (elementwise)
  static void combineInto(V& a, const V& b) { a = a > b ? a : b; }
};

using Float8 = float __attribute__((vector_size(32)));
using Float4 = float __attribute__((vector_size(16)));

// Always inlined into the kernel (compiled on its own it would be the
// baseline code even in the kernel's AVX2 clone).
template <class R, class V>
inline __attribute__((always_inline)) void reduceColumnBlock(const float* __restrict in, float* __restrict out,
                                                             std::uint64_t c, std::uint64_t rows,
                                                             std::uint64_t cols, float scale, bool accumulate) {
  V acc, row;
  __builtin_memcpy(&acc, in + c, sizeof(V));
  for (std::uint64_t r = 1; r < rows; ++r) {
    __builtin_memcpy(&row, in + r * cols + c, sizeof(V));
    R::combineInto(acc, row);
  }
  V result = scale * acc;
  if (accumulate) {
    V old;
    __builtin_memcpy(&old, out + c, sizeof(V));
    R::combineInto(old, result);
    result = old;
  }
  __builtin_memcpy(out + c, &result, sizeof(V));
}

// out[c] = scale * (combine over rows r of in[r][c], starting from row 0),
// combined with out[c] when accumulating: per column, the rows in order; the
// columns 8 (then 4, then 1) at a time with the running result in registers.
template <class R>
IPUSIM_KERNEL void reduceColumns(const float* __restrict in, float* __restrict out, std::uint64_t rows,
                                 std::uint64_t cols, float scale, bool accumulate) {
  std::uint64_t c = 0;
  for (; c + 8 <= cols; c += 8) reduceColumnBlock<R, Float8>(in, out, c, rows, cols, scale, accumulate);
  for (; c + 4 <= cols; c += 4) reduceColumnBlock<R, Float4>(in, out, c, rows, cols, scale, accumulate);
  for (; c < cols; ++c) reduceColumnBlock<R, float>(in, out, c, rows, cols, scale, accumulate);
}

template <class R>
class Reduce final : public FlatCodelet<Reduce<R>> {
 public:
  // inputType: the element type of `in`, whose vector loop the cycles count.
  explicit Reduce(ir::DType inputType = ir::DType::Float) : inputType_(inputType) {}
  std::string name() const override { return R::kName; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::InOut}};
  }
  std::vector<std::string> params() const override {
    if (R::kScaled) return {"rows", "cols", "axis", "scale", "accumulate"};
    return {"rows", "cols", "axis", "accumulate"};
  }
  std::vector<ParamDefault> paramDefaults() const override {
    if (R::kScaled) return {{"scale", 1}, {"accumulate", 0}};
    return {{"accumulate", 0}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    const bool axisIsRows = check.flag("axis");  // 0 or 1, as the flag check demands
    check.flag("accumulate");
    check.expectSize("in", rows * cols, "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols));
    if (axisIsRows)
      check.expectSize("out", rows, "axis 1: one value per row");
    else
      check.expectSize("out", cols, "axis 0: one value per column");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]), cols = std::uint64_t(shape.params[1]);
    const bool axisIsRows = shape.params[2] != 0;
    const bool accumulate = shape.params[R::kScaled ? 4 : 3] != 0;
    const std::uint64_t perVector = cycles::elementsPerVector(target, inputType_);
    if (axisIsRows)
      return cycles::kContinuousReduceOverhead + rows * (cycles::kContinuousReduceRowOverhead + cols / perVector) +
             (cols % 2 ? cycles::kContinuousReduceOddTail : 0) + (accumulate ? cycles::kReduceUpdateCycles : 0);
    const std::uint64_t group = std::gcd(perVector, cols);
    const ir::Cycles perGroup = cycles::kStridedReduceGroupOverhead + R::kStridedCompletion +
                                (accumulate ? cycles::kStridedReduceUpdateStore : cycles::kStridedReduceStore) +
                                (rows - 1);
    return cycles::kStridedReduceOverhead + cycles::ceilDiv(cols, group) * perGroup;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    const bool axisIsRows = params[2] != 0;
    const float scale = R::kScaled ? static_cast<float>(params[3]) : 1.0f;
    const bool accumulate = params[R::kScaled ? 4 : 3] != 0;
    const float* in = f[0].as<const float>();
    float* out = f[1].as<float>();
    if (axisIsRows) {
      for (std::uint64_t r = 0; r < rows; ++r) {
        const float value = scale * R::reduceRow(in + r * cols, cols);
        if (accumulate)
          R::combineInto(out[r], value);
        else
          out[r] = value;
      }
      return;
    }
    if (in < out + cols && out < in + rows * cols) {
      // out overlaps in (a hand-built graph may do that): every element of
      // in is read before out is written, as if the columns were reduced first.
      thread_local std::vector<float> copy;
      copy.assign(in, in + rows * cols);
      in = copy.data();
    }
    reduceColumns<R>(in, out, rows, cols, scale, accumulate);
  }

 private:
  ir::DType inputType_;
};

}  // namespace

void addReduceCodelets(CodeletRegistry& registry) {
  constexpr auto H = ir::DType::Half, F = ir::DType::Float;
  registry.add(std::make_unique<Reduce<SumReduction>>());
  registry.add(std::make_unique<Reduce<MaxReduction>>());
  for (ir::DType out : {F, H})
    registry.add(std::make_unique<HalfCodelet>(typedCodeletName("ReduceSum", {H, out}),
                                               std::make_unique<Reduce<SumReduction>>(H), std::vector{H, out}));
  // Float partials (a half reduction's intermediate stage) into a half result.
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("ReduceSum", {F, H}),
                                             std::make_unique<Reduce<SumReduction>>(F), std::vector{F, H}));
}

}  // namespace ipusim::model
