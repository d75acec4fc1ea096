#include "model/codelets/per_worker.hpp"

#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::model {
namespace {

// The index of `name` among `worker`'s params.
std::size_t paramIndex(const Codelet& worker, const char* name) {
  const auto& names = worker.paramLayout().names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i].str() == name) return i;
  throw std::logic_error(perWorkerName(worker.name()) + ": the worker codelet has no param '" + name + "'");
}

// The columns of a reduction over axis 0, shared between the workers.
class ColumnsOfAReduction final : public Codelet {
 public:
  explicit ColumnsOfAReduction(const Codelet& worker)
      : worker_(worker), name_(perWorkerName(worker.name())), rows_(paramIndex(worker, "rows")),
        cols_(paramIndex(worker, "cols")), axis_(paramIndex(worker, "axis")) {}
  std::string name() const override { return name_; }
  std::vector<FieldSpec> fields() const override { return worker_.fields(); }
  std::vector<std::string> params() const override { return worker_.params(); }
  std::vector<ParamDefault> paramDefaults() const override { return worker_.paramDefaults(); }
  void validate(const VertexShape& shape) const override {
    worker_.validate(shape);
    if (shape.params[axis_] != 0)
      throw std::invalid_argument(name_ + ": param 'axis' is " + std::to_string(shape.params[axis_]) +
                                  ": expected 0 (its workers share the columns of a reduction over axis 0)");
  }
  // The busiest share's: what a worker codelet's cycles() is.
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    std::vector<ir::Cycles> shares;
    addWorkerCycles(shape, target, shares);
    return shares.empty() ? 0 : *std::max_element(shares.begin(), shares.end());
  }
  void addWorkerCycles(const VertexShape& shape, const Target& target,
                       std::vector<ir::Cycles>& workers) const override {
    const auto rows = std::uint64_t(shape.params[rows_]), cols = std::uint64_t(shape.params[cols_]);
    const std::uint64_t share = shareColumns(cols, target.tile.workerContexts);
    VertexShape part = shape;
    for (std::uint64_t c = 0; c < cols; c += share) {
      const std::uint64_t len = std::min(share, cols - c);
      part.fieldSizes = {rows * len, len};
      part.params[cols_] = double(len);
      workers.push_back(worker_.cycles(part, target));
    }
  }
  std::uint64_t workerVertices(const VertexShape& shape, std::uint32_t workerContexts) const override {
    const auto cols = std::uint64_t(shape.params[cols_]);
    return std::max<std::uint64_t>(1, (cols + shareColumns(cols, workerContexts) - 1) / shareColumns(cols, workerContexts));
  }
  void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const override {
    worker_.compute(fields, params);
  }
  void computeBatch(const FieldData* fields, std::size_t numFields, const double* params, std::size_t numParams,
                    std::size_t count) const override {
    worker_.computeBatch(fields, numFields, params, numParams, count);
  }

 private:
  static std::uint64_t shareColumns(std::uint64_t cols, std::uint32_t workerContexts) {
    const std::uint64_t contexts = std::max<std::uint32_t>(1, workerContexts);
    return std::max<std::uint64_t>(1, (cols + contexts - 1) / contexts);
  }

  const Codelet& worker_;
  std::string name_;
  std::size_t rows_, cols_, axis_;
};

}  // namespace

std::string perWorkerName(const std::string& workerCodelet) { return "PerWorker<" + workerCodelet + ">"; }

bool isPerWorkerName(const std::string& codelet) { return codelet.rfind("PerWorker<", 0) == 0; }

void addPerWorkerCodelets(CodeletRegistry& registry) {
  // A matmul's or a convolution's partials, reduced on their owner tiles
  // (scheduler/lowering/partials.hpp), into float or half.
  for (const std::string& worker :
       {std::string("ReduceSum"), typedCodeletName("ReduceSum", {ir::DType::Float, ir::DType::Half})})
    registry.add(std::make_unique<ColumnsOfAReduction>(registry.get(worker)));
}

}  // namespace ipusim::model
