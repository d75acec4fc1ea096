#pragma once
// ShapeCheck: the validation every codelet's validate() starts with. It checks
// the vertex has one size per field and one value per param, then answers
// typed questions ("m is a positive integer", "a has m*k elements"), throwing
// std::invalid_argument with a message that names the codelet, the field or
// param, the value found and what was expected.
#include "model/codelets/codelet.hpp"

#include <cstdint>
#include <string>

namespace ipusim::model {

class ShapeCheck {
 public:
  ShapeCheck(const Codelet& codelet, const VertexShape& shape);

  // Elements of a field, by its name in Codelet::fields().
  std::uint64_t size(const std::string& field) const;
  // A param's value, by its name in Codelet::params().
  double param(const std::string& name) const;
  // A param that must be a whole number >= 1 (a dimension).
  std::uint64_t dimension(const std::string& name) const;
  // A param that must be 0 or 1.
  bool flag(const std::string& name) const;

  void expectSize(const std::string& field, std::uint64_t expected, const std::string& why) const;
  void expectSameSize(const std::string& field, const std::string& reference) const;
  void expectNonEmpty(const std::string& field) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::size_t fieldIndex(const std::string& field) const;
  std::size_t paramIndex(const std::string& name) const;

  std::string codeletName_;
  std::vector<FieldSpec> fields_;
  std::vector<std::string> params_;
  const VertexShape& shape_;
};

}  // namespace ipusim::model
