#pragma once
// FlatCodelet<Derived>: a Codelet whose functional model is written once, as
//   void computeFlat(const FieldData* fields, const double* params) const;
// (fields in fields() order, params in params() order), and used by both
// compute() and computeBatch(). computeBatch() is then a plain loop with the
// call inlined: no virtual call, no vector indirection per vertex. Internal
// to model/codelets.
#include "model/codelets/codelet.hpp"

namespace ipusim::model {

template <class Derived>
class FlatCodelet : public Codelet {
 public:
  void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const final {
    self().computeFlat(fields.data(), params.data());
  }
  void computeBatch(const FieldData* fields, std::size_t numFields, const double* params, std::size_t numParams,
                    std::size_t count) const final {
    for (std::size_t i = 0; i < count; ++i) self().computeFlat(fields + i * numFields, params + i * numParams);
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace ipusim::model
