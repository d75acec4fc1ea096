// Codelet::computeBatch default: compute() per vertex, through two reused
// vectors (codelets that matter for speed override it via FlatCodelet).
#include "model/codelets/codelet.hpp"

namespace ipusim::model {

void Codelet::computeBatch(const FieldData* fields, std::size_t numFields, const double* params,
                           std::size_t numParams, std::size_t count) const {
  std::vector<FieldData> vertexFields;
  std::vector<double> vertexParams;
  for (std::size_t i = 0; i < count; ++i) {
    vertexFields.assign(fields + i * numFields, fields + (i + 1) * numFields);
    vertexParams.assign(params + i * numParams, params + (i + 1) * numParams);
    compute(vertexFields, vertexParams);
  }
}

}  // namespace ipusim::model
