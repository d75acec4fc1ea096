#include "model/codelets/typed_codelet.hpp"

#include "model/numeric/half.hpp"

#include <stdexcept>

namespace ipusim::model {

std::string typedCodeletName(const std::string& base, std::initializer_list<ir::DType> types) {
  bool allFloat = true;
  for (ir::DType t : types) allFloat = allFloat && t == ir::DType::Float;
  if (allFloat) return base;
  std::string name = base + "<";
  bool first = true;
  for (ir::DType t : types) {
    if (!first) name += ",";
    name += ir::toString(t);
    first = false;
  }
  return name + ">";
}

HalfCodelet::HalfCodelet(std::string name, std::unique_ptr<Codelet> floatCodelet, std::vector<ir::DType> fieldTypes)
    : name_(std::move(name)), base_(std::move(floatCodelet)) {
  if (!base_) throw std::invalid_argument("HalfCodelet " + name_ + ": null float codelet");
  fields_ = base_->fields();
  if (fieldTypes.size() != fields_.size())
    throw std::invalid_argument("HalfCodelet " + name_ + ": " + std::to_string(fieldTypes.size()) +
                                " field types for " + std::to_string(fields_.size()) + " fields");
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const bool widenable = fields_[i].dtype == ir::DType::Float &&
                           (fieldTypes[i] == ir::DType::Half || fieldTypes[i] == ir::DType::Float);
    if (!widenable && fieldTypes[i] != fields_[i].dtype)
      throw std::invalid_argument("HalfCodelet " + name_ + ": field '" + fields_[i].name + "' is " +
                                  ir::toString(fields_[i].dtype) + " in " + base_->name() + ", cannot be " +
                                  ir::toString(fieldTypes[i]));
    fields_[i].dtype = fieldTypes[i];
  }
}

void HalfCodelet::validate(const VertexShape& shape) const {
  try {
    base_->validate(shape);
  } catch (const std::invalid_argument& e) {
    // The float codelet names itself; say which vertex type was meant.
    const std::string message = e.what();
    const std::string prefix = "codelet " + base_->name() + ":";
    if (message.rfind(prefix, 0) == 0) throw std::invalid_argument("codelet " + name_ + ":" + message.substr(prefix.size()));
    throw;
  }
}

void HalfCodelet::computeOne(const FieldData* fields, const double* params) const {
  // One float buffer per half field, reused across vertices and per thread
  // (the model may run a compute set's vertices on several host threads).
  thread_local std::vector<std::vector<float>> scratch;
  thread_local std::vector<FieldData> widened;
  if (scratch.size() < fields_.size()) scratch.resize(fields_.size());
  widened.assign(fields, fields + fields_.size());
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].dtype != ir::DType::Half) continue;
    std::vector<float>& buffer = scratch[i];
    buffer.resize(fields[i].size);
    if (fields_[i].access != FieldAccess::Out) {
      const auto* in = fields[i].as<const numeric::HalfBits>();
      for (std::uint64_t k = 0; k < fields[i].size; ++k) buffer[k] = numeric::halfToFloat(in[k]);
    }
    widened[i] = FieldData{buffer.data(), fields[i].size};
  }
  // computeBatch of one vertex: the float codelet's flat kernel, no vectors built.
  base_->computeBatch(widened.data(), fields_.size(), params, 0, 1);
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].dtype != ir::DType::Half || fields_[i].access == FieldAccess::In) continue;
    auto* out = fields[i].as<numeric::HalfBits>();
    const float* buffer = scratch[i].data();
    for (std::uint64_t k = 0; k < fields[i].size; ++k) out[k] = numeric::floatToHalf(buffer[k]);
  }
}

void HalfCodelet::compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const {
  computeOne(fields.data(), params.data());
}

void HalfCodelet::computeBatch(const FieldData* fields, std::size_t numFields, const double* params,
                               std::size_t numParams, std::size_t count) const {
  for (std::size_t i = 0; i < count; ++i) computeOne(fields + i * numFields, params + i * numParams);
}

}  // namespace ipusim::model
