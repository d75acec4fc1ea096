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

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace ipusim::model {

// The element type an op's vector loop runs on in a codelet of element type
// `type`: half vectorises 4-wide (f16v4 instructions) unless the op declares
// `static constexpr bool kFloatWidthOnly = true` (no 4-wide half form: charged
// per 2 elements as in float, an estimate).
template <class Op, class = void>
struct FloatWidthOnly : std::false_type {};
template <class Op>
struct FloatWidthOnly<Op, std::void_t<decltype(Op::kFloatWidthOnly)>> : std::bool_constant<Op::kFloatWidthOnly> {};
template <class Op>
ir::DType loopElementType(ir::DType type) {
  return FloatWidthOnly<Op>::value ? ir::DType::Float : type;
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

}  // namespace ipusim::model
