#include "scheduler/graph/op_graph.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

namespace {
constexpr std::size_t npos = ~std::size_t(0);
}  // namespace

const char* toString(OpKind kind) {
  switch (kind) {
    case OpKind::MatMul: return "MatMul";
    case OpKind::BatchMatMul: return "BatchMatMul";
    case OpKind::AddBias: return "AddBias";
    case OpKind::Relu: return "Relu";
    case OpKind::ReluGrad: return "ReluGrad";
    case OpKind::SoftmaxCrossEntropy: return "SoftmaxCrossEntropy";
    case OpKind::SoftmaxCrossEntropyGrad: return "SoftmaxCrossEntropyGrad";
    case OpKind::ReduceRows: return "ReduceRows";
    case OpKind::MeanLoss: return "MeanLoss";
    case OpKind::Accuracy: return "Accuracy";
    case OpKind::RowLoss: return "RowLoss";
    case OpKind::TargetDifference: return "TargetDifference";
    case OpKind::SgdUpdate: return "SgdUpdate";
    case OpKind::Cast: return "Cast";
    case OpKind::NonLinearity: return "NonLinearity";
    case OpKind::NonLinearityGrad: return "NonLinearityGrad";
    case OpKind::IncrementStep: return "IncrementStep";
    case OpKind::Dropout: return "Dropout";
    case OpKind::DropoutGrad: return "DropoutGrad";
    case OpKind::MomentumUpdate: return "MomentumUpdate";
    case OpKind::AdamUpdate: return "AdamUpdate";
    case OpKind::RmspropUpdate: return "RmspropUpdate";
    case OpKind::GradientDescentUpdate: return "GradientDescentUpdate";
    case OpKind::AdagradUpdate: return "AdagradUpdate";
    case OpKind::AdamaxUpdate: return "AdamaxUpdate";
    case OpKind::NadamUpdate: return "NadamUpdate";
    case OpKind::LearningRate: return "LearningRate";
    case OpKind::NadamMomentumProduct: return "NadamMomentumProduct";
    case OpKind::SumOfSquares: return "SumOfSquares";
    case OpKind::ClipByNorm: return "ClipByNorm";
    case OpKind::ClipByValue: return "ClipByValue";
    case OpKind::Conv2D: return "Conv2D";
    case OpKind::Conv2DInputGrad: return "Conv2DInputGrad";
    case OpKind::Conv2DWeightGrad: return "Conv2DWeightGrad";
    case OpKind::MaxPool2D: return "MaxPool2D";
    case OpKind::MaxPool2DGrad: return "MaxPool2DGrad";
    case OpKind::AvgPool2D: return "AvgPool2D";
    case OpKind::AvgPool2DGrad: return "AvgPool2DGrad";
    case OpKind::Square: return "Square";
    case OpKind::Mul: return "Mul";
    case OpKind::BatchNormStatistics: return "BatchNormStatistics";
    case OpKind::BatchNormInvStdDev: return "BatchNormInvStdDev";
    case OpKind::BatchNormalise: return "BatchNormalise";
    case OpKind::BatchNormInputGrad: return "BatchNormInputGrad";
    case OpKind::Add: return "Add";
    case OpKind::Sub: return "Sub";
    case OpKind::Neg: return "Neg";
    case OpKind::Maximum: return "Maximum";
    case OpKind::Minimum: return "Minimum";
    case OpKind::ExtremumGrad: return "ExtremumGrad";
    case OpKind::Concat: return "Concat";
    case OpKind::Slice: return "Slice";
    case OpKind::Pad2D: return "Pad2D";
    case OpKind::Crop2D: return "Crop2D";
    case OpKind::Reshape: return "Reshape";
    case OpKind::CopyView: return "CopyView";
    case OpKind::Softmax: return "Softmax";
    case OpKind::SoftmaxGrad: return "SoftmaxGrad";
    case OpKind::PRelu: return "PRelu";
    case OpKind::PReluGrad: return "PReluGrad";
    case OpKind::PReluAlphaGrad: return "PReluAlphaGrad";
    case OpKind::Normalize: return "Normalize";
    case OpKind::ScaleShift: return "ScaleShift";
    case OpKind::GaussianNoise: return "GaussianNoise";
    case OpKind::LayerNormalise: return "LayerNormalise";
    case OpKind::LayerNormInputGrad: return "LayerNormInputGrad";
    case OpKind::EmbeddingLookup: return "EmbeddingLookup";
    case OpKind::EmbeddingGrad: return "EmbeddingGrad";
    case OpKind::Regularization: return "Regularization";
    case OpKind::RegularizerGrad: return "RegularizerGrad";
    case OpKind::AddLossTerm: return "AddLossTerm";
    case OpKind::IdMask: return "IdMask";
  }
  return "?";
}

std::size_t OpGraph::addValue(Value v) {
  values.push_back(std::move(v));
  producerOf.push_back(npos);
  return values.size() - 1;
}

std::size_t OpGraph::addOp(Op op) {
  const std::size_t id = boost::add_vertex(graph);
  for (std::size_t in : op.inputs)
    if (producerOf[in] != npos) boost::add_edge(producerOf[in], id, graph);
  for (std::size_t out : op.outputs) producerOf[out] = id;
  ops.push_back(std::move(op));
  return id;
}

void OpGraph::addOrderEdge(std::size_t before, std::size_t after) {
  if (!boost::edge(before, after, graph).second) boost::add_edge(before, after, graph);
}

void OpGraph::checkTopological(const std::vector<std::size_t>& order) const {
  if (order.size() != ops.size()) throw std::logic_error("schedule does not contain every op once");
  std::vector<std::size_t> position(ops.size(), npos);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] >= ops.size() || position[order[i]] != npos) throw std::logic_error("schedule repeats an op");
    position[order[i]] = i;
  }
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    if (position[boost::source(*e, graph)] > position[boost::target(*e, graph)])
      throw std::logic_error("schedule runs " + ops[boost::target(*e, graph)].name + " before its input from " +
                             ops[boost::source(*e, graph)].name);
}

}  // namespace ipusim::scheduler
