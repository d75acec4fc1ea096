// Accuracy: correct[r] = 1 when the first largest of probs[r][0..classes) is
// at labels[r], else 0 (Keras's sparse_categorical_accuracy: argmax of the
// prediction equals the label; tf.argmax takes the first of equal maxima).
// Fields: probs (float, rows x classes), labels (int, rows), correct (float,
// rows); params rows, classes.
// Timing, estimate (popnn's CalcAccuracy vertex does this job; its estimator
// is not read here): per row, the continuous-reduce row of a ReduceMax over
// the classes (kContinuousReduceRowOverhead + one cycle per 64-bit vector),
// the label look-up and one compare and store; the reduce's call overhead once.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"

#include <stdexcept>

namespace ipusim::model {
namespace {

class Accuracy final : public FlatCodelet<Accuracy> {
 public:
  std::string name() const override { return "Accuracy"; }
  std::vector<FieldSpec> fields() const override {
    return {{"probs", ir::DType::Float, FieldAccess::In},
            {"labels", ir::DType::Int, FieldAccess::In},
            {"correct", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "classes"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const std::uint64_t rows = check.dimension("rows"), classes = check.dimension("classes");
    check.expectSize("probs", rows * classes, "rows x classes");
    check.expectSize("labels", rows, "rows");
    check.expectSize("correct", rows, "rows");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const std::uint64_t rows = shape.fieldSizes[1];
    const std::uint64_t classes = rows ? shape.fieldSizes[0] / rows : 0;
    return cycles::kContinuousReduceOverhead +
           rows * (cycles::kContinuousReduceRowOverhead + cycles::vectors(classes, target, ir::DType::Float) +
                   cycles::kLabelLookupCycles + cycles::kAddSubMulCyclesPerVector);
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* probs = f[0].as<const float>();
    const std::int32_t* labels = f[1].as<const std::int32_t>();
    float* correct = f[2].as<float>();
    const std::uint64_t rows = std::uint64_t(p[0]), classes = std::uint64_t(p[1]);
    for (std::uint64_t r = 0; r < rows; ++r) {
      const float* row = probs + r * classes;
      std::uint64_t best = 0;
      for (std::uint64_t c = 1; c < classes; ++c)
        if (row[c] > row[best]) best = c;
      if (labels[r] < 0 || std::uint64_t(labels[r]) >= classes)
        throw std::invalid_argument("Accuracy: label " + std::to_string(labels[r]) + " is outside [0, " +
                                    std::to_string(classes) + ")");
      correct[r] = std::uint64_t(labels[r]) == best ? 1.0f : 0.0f;
    }
  }
};

}  // namespace

void addAccuracyCodelet(CodeletRegistry& registry) { registry.add(std::make_unique<Accuracy>()); }

}  // namespace ipusim::model
