#include "model/codelets/shape_check.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace ipusim::model {
namespace {

std::string formatNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

ShapeCheck::ShapeCheck(const Codelet& codelet, const VertexShape& shape)
    : codeletName_(codelet.name()), fields_(codelet.fields()), params_(codelet.params()), shape_(shape) {
  if (shape.fieldSizes.size() != fields_.size())
    fail("has " + std::to_string(shape.fieldSizes.size()) + " field sizes, expected " +
         std::to_string(fields_.size()) + " (one per field, in fields() order)");
  if (shape.params.size() != params_.size())
    fail("has " + std::to_string(shape.params.size()) + " params, expected " + std::to_string(params_.size()) +
         " (one per param, in params() order)");
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (!std::isfinite(shape.params[i]))
      fail("param '" + params_[i] + "' = " + formatNumber(shape.params[i]) + ", expected a finite number");
}

void ShapeCheck::fail(const std::string& what) const {
  throw std::invalid_argument("codelet " + codeletName_ + ": " + what);
}

std::size_t ShapeCheck::fieldIndex(const std::string& field) const {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == field) return i;
  throw std::logic_error("codelet " + codeletName_ + " has no field '" + field + "'");
}

std::size_t ShapeCheck::paramIndex(const std::string& name) const {
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (params_[i] == name) return i;
  throw std::logic_error("codelet " + codeletName_ + " has no param '" + name + "'");
}

std::uint64_t ShapeCheck::size(const std::string& field) const { return shape_.fieldSizes[fieldIndex(field)]; }

double ShapeCheck::param(const std::string& name) const { return shape_.params[paramIndex(name)]; }

std::uint64_t ShapeCheck::dimension(const std::string& name) const {
  const double value = param(name);
  if (value < 1 || value != std::floor(value) || value > 1e15)
    fail("param '" + name + "' = " + formatNumber(value) + ", expected a whole number >= 1");
  return static_cast<std::uint64_t>(value);
}

bool ShapeCheck::flag(const std::string& name) const {
  const double value = param(name);
  if (value != 0 && value != 1) fail("param '" + name + "' = " + formatNumber(value) + ", expected 0 or 1");
  return value == 1;
}

void ShapeCheck::expectSize(const std::string& field, std::uint64_t expected, const std::string& why) const {
  const std::uint64_t actual = size(field);
  if (actual != expected)
    fail("field '" + field + "' has " + std::to_string(actual) + " elements, expected " + std::to_string(expected) +
         " (" + why + ")");
}

void ShapeCheck::expectSameSize(const std::string& field, const std::string& reference) const {
  expectSize(field, size(reference), "the size of '" + reference + "'");
}

void ShapeCheck::expectNonEmpty(const std::string& field) const {
  if (size(field) == 0) fail("field '" + field + "' is empty, expected at least one element");
}

}  // namespace ipusim::model
