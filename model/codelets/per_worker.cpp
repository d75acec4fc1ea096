#include "model/codelets/per_worker.hpp"

#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ipusim::model {
namespace {

// What every per-worker codelet is: its worker's fields, params, checks and
// numbers, under its own name; the shares are the kind's (below).
class PerWorker : public Codelet {
 public:
  explicit PerWorker(const Codelet& worker) : worker_(worker), name_(perWorkerName(worker.name())) {}
  std::string name() const final { return name_; }
  std::vector<FieldSpec> fields() const final { return worker_.fields(); }
  std::vector<std::string> params() const final { return worker_.params(); }
  std::vector<ParamDefault> paramDefaults() const final { return worker_.paramDefaults(); }
  void validate(const VertexShape& shape) const final {
    worker_.validate(shape);
    validateShares(shape);
  }
  // The busiest share's: what a worker codelet's cycles() is.
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const final {
    std::vector<ir::Cycles> shares;
    addWorkerCycles(shape, target, shares);
    return shares.empty() ? 0 : *std::max_element(shares.begin(), shares.end());
  }
  void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const final {
    worker_.compute(fields, params);
  }
  void computeBatch(const FieldData* fields, std::size_t numFields, const double* params, std::size_t numParams,
                    std::size_t count) const final {
    worker_.computeBatch(fields, numFields, params, numParams, count);
  }

 protected:
  // Refuses, naming the codelet, what the shares cannot divide.
  virtual void validateShares(const VertexShape& shape) const = 0;
  // The index of `param` among the worker's params.
  std::size_t paramIndex(const char* param) const {
    const auto& names = worker_.paramLayout().names;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i].str() == param) return i;
    throw std::logic_error(name_ + ": the worker codelet has no param '" + param + "'");
  }

  const Codelet& worker_;
  const std::string name_;
};

// The columns of a reduction over axis 0: ceil(cols / workers) a share.
class ColumnsOfAReduction final : public PerWorker {
 public:
  explicit ColumnsOfAReduction(const Codelet& worker)
      : PerWorker(worker), rows_(paramIndex("rows")), cols_(paramIndex("cols")), axis_(paramIndex("axis")) {}
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
  std::uint64_t workerVertices(const VertexShape& shape, const TileParams& tile) const override {
    const auto cols = std::uint64_t(shape.params[cols_]);
    const std::uint64_t share = shareColumns(cols, tile.workerContexts);
    return std::max<std::uint64_t>(1, (cols + share - 1) / share);
  }

 private:
  void validateShares(const VertexShape& shape) const override {
    if (shape.params[axis_] != 0)
      throw std::invalid_argument(name_ + ": param 'axis' is " + std::to_string(shape.params[axis_]) +
                                  ": expected 0 (its workers share the columns of a reduction over axis 0)");
  }
  static std::uint64_t shareColumns(std::uint64_t cols, std::uint32_t workerContexts) {
    const std::uint64_t contexts = std::max<std::uint32_t>(1, workerContexts);
    return std::max<std::uint64_t>(1, (cols + contexts - 1) / contexts);
  }

  std::size_t rows_, cols_, axis_;
};

// The elements of a map (every field the same size, each result from the
// same element of each input): runs of them, at most one a worker and each
// at least a vector of the result, split evenly (the first ones one longer),
// as scheduler's chunks() cut worker vertices.
class ElementsOfAMap final : public PerWorker {
 public:
  explicit ElementsOfAMap(const Codelet& worker) : PerWorker(worker), resultBytes_(resultElementBytes(worker)) {}
  void addWorkerCycles(const VertexShape& shape, const Target& target,
                       std::vector<ir::Cycles>& workers) const override {
    const std::uint64_t n = shape.fieldSizes.empty() ? 0 : shape.fieldSizes[0];
    const std::uint64_t parts = shares(n, target.tile);
    VertexShape part = shape;
    for (std::uint64_t i = 0; i < parts; ++i) {
      std::fill(part.fieldSizes.begin(), part.fieldSizes.end(), n / parts + (i < n % parts ? 1 : 0));
      workers.push_back(worker_.cycles(part, target));
    }
  }
  std::uint64_t workerVertices(const VertexShape& shape, const TileParams& tile) const override {
    return shares(shape.fieldSizes.empty() ? 0 : shape.fieldSizes[0], tile);
  }

 private:
  void validateShares(const VertexShape& shape) const override {
    const std::vector<FieldSpec> fields = worker_.fields();
    for (std::size_t f = 1; f < shape.fieldSizes.size(); ++f)
      if (shape.fieldSizes[f] != shape.fieldSizes[0])
        throw std::invalid_argument(name_ + ": field '" + fields[f].name + "' has " +
                                    std::to_string(shape.fieldSizes[f]) + " elements: expected " +
                                    std::to_string(shape.fieldSizes[0]) + ", as field '" + fields[0].name +
                                    "' (its workers share the elements of a map)");
  }
  // The bytes of the result's element type (the first field written).
  static std::uint64_t resultElementBytes(const Codelet& worker) {
    const std::vector<FieldSpec> fields = worker.fields();
    for (FieldAccess access : {FieldAccess::Out, FieldAccess::InOut})
      for (const FieldSpec& f : fields)
        if (f.access == access) return ir::sizeOf(f.dtype);
    throw std::logic_error(perWorkerName(worker.name()) + ": the worker codelet writes no field");
  }
  std::uint64_t shares(std::uint64_t n, const TileParams& tile) const {
    const std::uint64_t vector = std::max<std::uint64_t>(1, tile.vectorBytes / resultBytes_);
    const std::uint64_t parts =
        std::min<std::uint64_t>(std::max<std::uint32_t>(1, tile.workerContexts), std::max<std::uint64_t>(1, n / vector));
    return std::max<std::uint64_t>(1, std::min(parts, n));
  }

  std::uint64_t resultBytes_;
};

}  // namespace

std::string perWorkerName(const std::string& workerCodelet) { return "PerWorker<" + workerCodelet + ">"; }

bool isPerWorkerName(const std::string& codelet) { return codelet.rfind("PerWorker<", 0) == 0; }

std::string workerCodeletOf(const std::string& codelet) {
  const std::size_t prefix = std::string("PerWorker<").size();
  return isPerWorkerName(codelet) ? codelet.substr(prefix, codelet.size() - prefix - 1) : codelet;
}

std::uint64_t WorkerVertexCount::operator()(const ir::Vertex& v) {
  auto [known, added] = perWorker_.try_emplace(v.codelet, nullptr);
  if (added && isPerWorkerName(v.codelet.str())) known->second = &CodeletRegistry::instance().get(v.codelet.str());
  const Codelet* codelet = known->second;
  if (!codelet) return 1;
  VertexShape shape;
  for (const ir::VertexField& f : v.fields) shape.fieldSizes.push_back(f.ref.size());
  shape.params = orderedParams(*codelet, v.params);
  return codelet->workerVertices(shape, tile_);
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
