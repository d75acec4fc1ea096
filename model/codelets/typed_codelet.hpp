#pragma once
// Typed codelet names and the half-precision adapter. Internal to
// model/codelets.
//
// Naming, as PopLibs names its vertices (popops::ScaledAdd<half>,
// poplin::ConvPartial1x1Out<half,float,...>): a codelet's all-float form keeps
// its plain name ("Relu", "MatMulPartial"), so existing graphs keep running;
// a typed variant carries its element types in angle brackets, without
// spaces: "Relu<half>", "MatMulPartial<half,float>", "Cast<float,half>".
// typedCodeletName() builds these names (the compiler should use it).
//
// HalfCodelet: a half variant of a float codelet. Its fields are the float
// codelet's, with the dtypes given; compute() widens every half input to
// float (exact), runs the float codelet's kernel, and rounds every half
// output to the nearest half, ties to even (model/numeric/half.hpp). So a
// half vertex computes in float and rounds once per half store. Timing is
// the wrapped codelet's cycles(): build it for the element type its vector
// loops run on (e.g. ElementwiseBinary<AddOp>(ir::DType::Half)).
#include "model/codelets/codelet.hpp"
#include "model/codelets/cycle_model.hpp"

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace ipusim::model {

// Cycles per vector of an elementwise op for element type `type` (a vector is
// 2 floats or 4 halves): Op::kHalfCyclesPerVector for half when the op
// declares one (popops' OpPerformanceInfo gives transcendentals and divide
// their own half cost), else Op::kCyclesPerVector.
template <class Op, class = void>
struct HasHalfCycles : std::false_type {};
template <class Op>
struct HasHalfCycles<Op, std::void_t<decltype(Op::kHalfCyclesPerVector)>> : std::true_type {};
template <class Op>
constexpr ir::Cycles cyclesPerVector(ir::DType type) {
  if constexpr (HasHalfCycles<Op>::value)
    if (type == ir::DType::Half) return Op::kHalfCyclesPerVector;
  return Op::kCyclesPerVector;
}

// The loops of an elementwise op over n elements: ceil(n / Op::kElementsPerLoop)
// when the op declares how many elements one loop takes (popops' table
// entries {c, false, u} with u below the vector width, e.g. GELU_ERF's 1),
// else one loop per vector (cycles::vectors).
template <class Op, class = void>
struct HasElementsPerLoop : std::false_type {};
template <class Op>
struct HasElementsPerLoop<Op, std::void_t<decltype(Op::kElementsPerLoop)>> : std::true_type {};
template <class Op>
std::uint64_t loopsOf(std::uint64_t n, const Target& target, ir::DType type) {
  if constexpr (HasElementsPerLoop<Op>::value) return (n + Op::kElementsPerLoop - 1) / Op::kElementsPerLoop;
  return cycles::vectors(n, target, type);
}

// "Base" for an all-float list (or an empty one), else "Base<t1,t2,...>".
std::string typedCodeletName(const std::string& base, std::initializer_list<ir::DType> types);

class HalfCodelet final : public Codelet {
 public:
  // fieldTypes: one per field of `floatCodelet`, Float or Half where the float
  // codelet has Float (other dtypes must be kept as they are).
  HalfCodelet(std::string name, std::unique_ptr<Codelet> floatCodelet, std::vector<ir::DType> fieldTypes);

  std::string name() const override { return name_; }
  std::vector<FieldSpec> fields() const override { return fields_; }
  std::vector<std::string> params() const override { return base_->params(); }
  std::vector<ParamDefault> paramDefaults() const override { return base_->paramDefaults(); }
  void validate(const VertexShape& shape) const override;
  bool isSupervisor() const override { return base_->isSupervisor(); }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return base_->cycles(shape, target);
  }
  void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const override;
  void computeBatch(const FieldData* fields, std::size_t numFields, const double* params, std::size_t numParams,
                    std::size_t count) const override;

 private:
  void computeOne(const FieldData* fields, const double* params) const;

  std::string name_;
  std::unique_ptr<Codelet> base_;
  std::vector<FieldSpec> fields_;
};

// Registers the float codelet C() and its all-half variant "<name><half>":
// C(ir::DType::Half) (built for half vector loops) behind a HalfCodelet whose
// every field is half. For codelets whose fields are all float.
template <class C>
void addFloatAndHalf(CodeletRegistry& registry) {
  registry.add(std::make_unique<C>());
  auto half = std::make_unique<C>(ir::DType::Half);
  std::string name = typedCodeletName(half->name(), {ir::DType::Half});
  std::vector<ir::DType> types(half->fields().size(), ir::DType::Half);
  registry.add(std::make_unique<HalfCodelet>(std::move(name), std::move(half), std::move(types)));
}

// Registers C() and "<name><half>": C(ir::DType::Half) behind a HalfCodelet
// whose fields named in `halfFields` are half (the activations), the others
// float (statistics kept in float, as Keras normalises float16 in float32).
template <class C>
void addWithHalfActivations(CodeletRegistry& registry, std::initializer_list<const char*> halfFields) {
  registry.add(std::make_unique<C>());
  auto half = std::make_unique<C>(ir::DType::Half);
  std::vector<ir::DType> types;
  for (const FieldSpec& f : half->fields()) {
    bool isHalf = false;
    for (const char* h : halfFields) isHalf = isHalf || f.name == h;
    types.push_back(isHalf ? ir::DType::Half : f.dtype);
  }
  std::string name = typedCodeletName(half->name(), {ir::DType::Half});
  registry.add(std::make_unique<HalfCodelet>(std::move(name), std::move(half), std::move(types)));
}

}  // namespace ipusim::model
