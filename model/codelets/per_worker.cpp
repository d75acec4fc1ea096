#include "model/codelets/per_worker.hpp"

#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <set>
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

// The elements of a map (every field the same size, each result from the
// same element of each input): each share a run of them.
class ElementsOfAMap final : public Codelet {
 public:
  explicit ElementsOfAMap(const Codelet& worker)
      : worker_(worker), name_(perWorkerName(worker.name())), resultBytes_(resultElementBytes(worker)) {}
  std::string name() const override { return name_; }
  std::vector<FieldSpec> fields() const override { return worker_.fields(); }
  std::vector<std::string> params() const override { return worker_.params(); }
  std::vector<ParamDefault> paramDefaults() const override { return worker_.paramDefaults(); }
  void validate(const VertexShape& shape) const override {
    worker_.validate(shape);
    for (std::size_t f = 1; f < shape.fieldSizes.size(); ++f)
      if (shape.fieldSizes[f] != shape.fieldSizes[0])
        throw std::invalid_argument(name_ + ": field '" + worker_.fields()[f].name + "' has " +
                                    std::to_string(shape.fieldSizes[f]) + " elements: expected " +
                                    std::to_string(shape.fieldSizes[0]) + ", as field '" + worker_.fields()[0].name +
                                    "' (its workers share the elements of a map)");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    std::vector<ir::Cycles> shares;
    addWorkerCycles(shape, target, shares);
    return shares.empty() ? 0 : *std::max_element(shares.begin(), shares.end());
  }
  void addWorkerCycles(const VertexShape& shape, const Target& target,
                       std::vector<ir::Cycles>& workers) const override {
    const std::uint64_t n = shape.fieldSizes.empty() ? 0 : shape.fieldSizes[0];
    const std::uint64_t parts = shares(n, target);
    VertexShape part = shape;
    for (std::uint64_t i = 0; i < parts; ++i) {
      std::fill(part.fieldSizes.begin(), part.fieldSizes.end(), n / parts + (i < n % parts ? 1 : 0));
      workers.push_back(worker_.cycles(part, target));
    }
  }
  std::uint64_t workerVertices(const VertexShape& shape, std::uint32_t workerContexts) const override {
    Target target;
    target.tile.workerContexts = workerContexts;
    return shares(shape.fieldSizes.empty() ? 0 : shape.fieldSizes[0], target);
  }
  void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const override {
    worker_.compute(fields, params);
  }
  void computeBatch(const FieldData* fields, std::size_t numFields, const double* params, std::size_t numParams,
                    std::size_t count) const override {
    worker_.computeBatch(fields, numFields, params, numParams, count);
  }

 private:
  // The bytes of the result's element type (the first field written): the
  // shares are whole vectors of it, as the lowering cut worker vertices.
  static std::uint64_t resultElementBytes(const Codelet& worker) {
    const std::vector<FieldSpec> fields = worker.fields();
    for (FieldAccess access : {FieldAccess::Out, FieldAccess::InOut})
      for (const FieldSpec& f : fields)
        if (f.access == access) return ir::sizeOf(f.dtype);
    throw std::logic_error(perWorkerName(worker.name()) + ": the worker codelet writes no field");
  }
  // At most one a worker context, each at least a vector: n split evenly
  // (the first ones one longer), as scheduler's chunks() cut worker vertices.
  std::uint64_t shares(std::uint64_t n, const Target& target) const {
    const std::uint64_t vector = std::max<std::uint64_t>(1, target.tile.vectorBytes / resultBytes_);
    const std::uint64_t parts = std::min<std::uint64_t>(std::max<std::uint32_t>(1, target.tile.workerContexts),
                                                        std::max<std::uint64_t>(1, n / vector));
    return std::max<std::uint64_t>(1, std::min(parts, n));
  }

  const Codelet& worker_;
  std::string name_;
  std::uint64_t resultBytes_;
};

}  // namespace

std::string perWorkerName(const std::string& workerCodelet) { return "PerWorker<" + workerCodelet + ">"; }

bool isPerWorkerName(const std::string& codelet) { return codelet.rfind("PerWorker<", 0) == 0; }

std::string workerCodeletOf(const std::string& codelet) {
  const std::size_t prefix = std::string("PerWorker<").size();
  return isPerWorkerName(codelet) ? codelet.substr(prefix, codelet.size() - prefix - 1) : codelet;
}

void addPerWorkerCodelets(CodeletRegistry& registry) {
  // A matmul's or a convolution's partials, reduced on their owner tiles
  // (scheduler/lowering/partials.hpp), into float or half.
  for (const std::string& worker :
       {std::string("ReduceSum"), typedCodeletName("ReduceSum", {ir::DType::Float, ir::DType::Half})})
    registry.add(std::make_unique<ColumnsOfAReduction>(registry.get(worker)));
  // The maps the lowering runs over a tensor's placement (lowerElementwise,
  // SGD's ScaledAdd, a padding's Fill), in every type they have.
  static const std::set<std::string> maps = {
      "Relu", "ReluGrad", "Cast", "ClipByValue", "Square", "Mul", "Add", "Sub", "Neg", "Maximum", "Minimum",
      "MaximumGrad", "MinimumGrad", "PReluAlphaGrad", "RegularizerGrad", "BatchNormStatistics", "BatchNormInvStdDev",
      "ScaledAdd", "Fill", "Exp", "Sigmoid", "SigmoidGrad", "Tanh", "TanhGrad", "Gelu", "GeluGrad", "GeluTanh",
      "GeluTanhGrad", "Elu", "EluGrad", "Selu", "SeluGrad", "Softplus", "SoftplusGrad", "Softsign", "SoftsignGrad",
      "HardSigmoid", "HardSigmoidGrad", "HardSilu", "HardSiluGrad", "Mish", "MishGrad", "Swish", "SwishGrad",
      "ClippedRelu", "ClippedReluGrad", "LeakyRelu", "LeakyReluGrad", "BoundedLeakyRelu", "BoundedLeakyReluGrad"};
  for (const std::string& worker : registry.names())
    if (maps.count(worker.substr(0, worker.find('<'))))
      registry.add(std::make_unique<ElementsOfAMap>(registry.get(worker)));
}

}  // namespace ipusim::model
