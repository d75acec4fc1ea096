#include "test_codelet_util.hpp"
#include "model/codelets/codelet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>

namespace test_codelet_registry {

using namespace ipusim::model;

namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument thrown)";
}

}  // namespace

TEST(CodeletRegistry, HasEveryCodeletOfTheReadme) {
  std::vector<std::string> expected = {
      "Add", "Sub", "Mul", "Div", "ScaledAdd", "ScaledAddSupervisor", "ScaledAddSupervisor<half>", "Relu", "Exp", "Log", "Neg", "Square", "ReluGrad", "AddBias",
      "IdMask", "IdMask<half>", "IdMaskMean", "IdMaskMean<half>", "IdMaskScores", "IdMaskScores<half>", "IdMaskLossWeights", "IdMaskFromValues", "IdMaskFromValues<half>", "SoftmaxCrossEntropyGradWeighted", "SoftmaxCrossEntropyGradWeighted<half>",
      "ReduceSum", "ReduceMax", "MatMulPartial", "Copy", "Cast", "Fill", "SoftmaxCrossEntropy",
      "SoftmaxCrossEntropyGrad", "ConvPartialnx1", "ConvWeightUpdatePartial", "MaxPool", "AvgPool", "MaxPoolGrad",
      "AvgPoolGrad",
      // Half variants (typed names, as PopLibs names its vertices).
      "Add<half>", "Sub<half>", "Mul<half>", "Div<half>", "ScaledAdd<half>", "Relu<half>", "Exp<half>", "Log<half>",
      "Neg<half>", "Square<half>", "ReluGrad<half>", "AddBias<half>", "ReduceSum<half,float>", "ReduceSum<half,half>", "ReduceSum<float,half>",
      "MatMulPartial<half,float>", "MatMulPartial<half,half>", "Copy<half>", "Cast<float,half>", "Cast<half,float>",
      "Fill<half>", "SoftmaxCrossEntropy<half>", "SoftmaxCrossEntropyGrad<half>",
      // Activations, dropout, the step counter and the optimizers' updates.
      "Sigmoid", "Tanh", "Gelu", "Sigmoid<half>", "Tanh<half>", "Gelu<half>", "SigmoidGrad", "TanhGrad", "GeluGrad",
      "SigmoidGrad<half>", "TanhGrad<half>", "GeluGrad<half>", "Dropout", "Dropout<half>", "Increment",
      "GaussianNoise", "GaussianNoise<half>", "GaussianNoiseScale", "GaussianNoiseScale<half>",
      "MomentumUpdate", "MomentumUpdate<half>", "AdamUpdate", "AdamUpdate<half>", "RmspropUpdate",
      "RmspropUpdate<half>", "RmspropUpdateCentered", "RmspropUpdateCentered<half>", "RmspropUpdateMomentum",
      "RmspropUpdateMomentum<half>", "RmspropUpdateCenteredMomentum", "RmspropUpdateCenteredMomentum<half>", "Accuracy",
      // Losses over one-hot targets, their gradient and accuracies.
      "SoftmaxCrossEntropyDense", "SigmoidCrossEntropy", "SquaredError", "TargetDifference", "CategoricalAccuracy",
      "BinaryAccuracy", "SoftmaxCrossEntropyDense<half>", "SigmoidCrossEntropy<half>", "SquaredError<half>",
      "TargetDifference<half>", "TargetDifference<float,half>", "AbsoluteError", "HuberError", "AbsoluteError<half>",
      "HuberError<half>", "TargetSign", "TargetClip", "TargetSign<half>", "TargetSign<float,half>", "TargetClip<half>",
      "TargetClip<float,half>", "KlDivergence", "KlDivergence<half>", "TargetKlDivergence", "TargetKlDivergence<half>",
      "TargetKlDivergence<float,half>",
      // Convolutions and pooling.
      "ConvPartialnx1<half,float>",
      "ConvPartialnx1<half,half>", "ConvWeightUpdatePartial<half,float>", "ConvWeightUpdatePartial<half,half>",
      "MaxPool<half>", "AvgPool<half>", "MaxPoolGrad<half>", "AvgPoolGrad<half>",
      // Grouped and depthwise convolutions' vertices (HMAC, VMAC).
      "ConvPartialHorizontalMac", "ConvPartialHorizontalMac<half,float>", "ConvPartialHorizontalMac<half,half>",
      "ConvPartialVerticalMac<half,float>", "ConvPartialVerticalMac<half,half>", "ConvWeightUpdateHorizontalMac",
      "ConvWeightUpdateHorizontalMac<half,float>", "ConvWeightUpdateHorizontalMac<half,half>",
      // Batch normalization.
      "BatchNormStatistics", "BatchNormInvStdDev", "BatchNormalise", "BatchNormInputGrad", "BatchNormalise<half>", "BatchNormInputGrad<half>",
      // Layer normalization (issue 29).
      "LayerNormalise", "LayerNormInputGrad", "LayerNormalise<half>", "LayerNormInputGrad<half>",
      // The embedding's lookup and gradient (issue 29).
      "MultiSlice", "MultiSlice<half>", "MultiSlice<half,float>", "MultiUpdateAdd", "MultiUpdateAdd<half>",
      // The maximum and minimum merges.
      "Maximum", "Minimum", "MaximumGrad", "MinimumGrad", "Maximum<half>", "Minimum<half>", "MaximumGrad<half>",
      "MinimumGrad<half>"};
  // The activations of issue 26 and their gradients, softmax on any axis, the per-column ops.
  for (const char* base :
       {"ClippedRelu", "LeakyRelu", "BoundedLeakyRelu", "Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "HardSilu",
        "Mish", "Swish", "GeluTanh", "ClippedReluGrad", "LeakyReluGrad", "BoundedLeakyReluGrad", "EluGrad", "SeluGrad",
        "SoftplusGrad", "SoftsignGrad", "HardSigmoidGrad", "HardSiluGrad", "MishGrad", "SwishGrad", "GeluTanhGrad",
        "PReluAlphaGrad", "Softmax", "SoftmaxGrad", "PRelu", "PReluGrad", "Normalize", "ScaleShift"})
    for (const std::string& name : {std::string(base), std::string(base) + "<half>"}) expected.push_back(name);
  // The optimizers of issue 32, every update's Scheduled variant (the step's
  // learning rate read from a field), the schedules, Nadam's product, clipping.
  for (const char* base : {"GradientDescentUpdate", "AdagradUpdate", "AdamaxUpdate", "NadamUpdate"})
    for (const std::string& name : {std::string(base), std::string(base) + "<half>"}) expected.push_back(name);
  for (const char* base : {"MomentumUpdate", "AdamUpdate", "RmspropUpdate", "RmspropUpdateCentered", "RmspropUpdateMomentum",
                           "RmspropUpdateCenteredMomentum", "GradientDescentUpdate", "AdagradUpdate", "AdamaxUpdate", "NadamUpdate"})
    for (const std::string& name : {std::string(base) + "Scheduled", std::string(base) + "Scheduled<half>"}) expected.push_back(name);
  for (const char* name : {"LearningRate", "PiecewiseConstantLearningRate", "NadamMomentumProduct", "ReduceSquareAdd",
                           "ReduceSquareAdd<half,float>", "ClipByNorm", "ClipByNorm<half>", "ClipByValue", "ClipByValue<half>"})
    expected.push_back(name);
  // The mean of a cross-replica sum (the fused updates' all-reduce).
  for (const char* name : {"Scale", "Scale<half>"}) expected.push_back(name);
  // The regularizers' penalty and its gradient.
  for (const char* name : {"ReducePenalty", "ReducePenalty<half,float>", "RegularizerGrad", "RegularizerGrad<half>"})
    expected.push_back(name);
  // One vertex for a tile's worker vertices: the partials' reduction, and
  // every type of the maps (model/codelets/README.md).
  for (const char* name : {"PerWorker<ReduceSum>", "PerWorker<ReduceSum<float,half>>"}) expected.push_back(name);
  const std::set<std::string> maps = {
      "Relu", "ReluGrad", "Cast", "ClipByValue", "Square", "Mul", "Add", "Sub", "Neg", "Maximum", "Minimum",
      "MaximumGrad", "MinimumGrad", "PReluAlphaGrad", "RegularizerGrad", "BatchNormStatistics", "BatchNormInvStdDev",
      "ScaledAdd", "Fill", "Exp", "Sigmoid", "SigmoidGrad", "Tanh", "TanhGrad", "Gelu", "GeluGrad", "GeluTanh",
      "GeluTanhGrad", "Elu", "EluGrad", "Selu", "SeluGrad", "Softplus", "SoftplusGrad", "Softsign", "SoftsignGrad",
      "HardSigmoid", "HardSigmoidGrad", "HardSilu", "HardSiluGrad", "Mish", "MishGrad", "Swish", "SwishGrad",
      "ClippedRelu", "ClippedReluGrad", "LeakyRelu", "LeakyReluGrad", "BoundedLeakyRelu", "BoundedLeakyReluGrad"};
  for (std::size_t i = 0, n = expected.size(); i < n; ++i)
    if (maps.count(expected[i].substr(0, expected[i].find('<')))) expected.push_back("PerWorker<" + expected[i] + ">");
  const auto& registry = CodeletRegistry::instance();
  for (const auto& name : expected) {
    ASSERT_TRUE(registry.has(name)) << name;
    EXPECT_EQ(registry.get(name).name(), name);
  }
  EXPECT_EQ(registry.names().size(), expected.size());
}

TEST(CodeletRegistry, UnknownNameNamesItAndTheNearest) {
  const std::string message = errorOf([] { CodeletRegistry::instance().get("MatMulPartail"); });
  EXPECT_NE(message.find("'MatMulPartail'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'MatMulPartial'"), std::string::npos) << message;
  EXPECT_NE(errorOf([] { CodeletRegistry::instance().get("relu"); }).find("'Relu'"), std::string::npos);
  EXPECT_FALSE(CodeletRegistry::instance().has("NoSuchCodelet"));
}

namespace {
// A minimal codelet to register in a fresh registry.
class Probe final : public Codelet {
 public:
  std::string name() const override { return "Probe"; }
  std::vector<FieldSpec> fields() const override { return {}; }
  ipusim::ir::Cycles cycles(const VertexShape&, const Target&) const override { return 1; }
  void compute(const std::vector<FieldData>&, const std::vector<double>&) const override {}
};
}  // namespace

TEST(CodeletRegistry, AddRejectsDuplicatesAndNull) {
  CodeletRegistry registry;
  EXPECT_THROW(registry.get("Probe"), std::invalid_argument);  // empty registry: still a clear error
  registry.add(std::make_unique<Probe>());
  EXPECT_TRUE(registry.has("Probe"));
  EXPECT_EQ(registry.names(), std::vector<std::string>{"Probe"});
  const std::string duplicate = errorOf([&] { registry.add(std::make_unique<Probe>()); });
  EXPECT_NE(duplicate.find("'Probe' is already registered"), std::string::npos) << duplicate;
  EXPECT_THROW(registry.add(nullptr), std::invalid_argument);
}

// Supervisors: the AMP products (MatMulPartial, the conv partials),
// popnn's pooling vertices, popops' ScaledAddSupervisor and MultiUpdateAdd
// (supervisor vertices in PopLibs too).
TEST(CodeletRegistry, OnlyAmpPoolingScaledAddAndMultiUpdateAddCodeletsAreSupervisors) {
  auto startsWith = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  for (const auto& name : CodeletRegistry::instance().names())
    EXPECT_EQ(CodeletRegistry::instance().get(name).isSupervisor(),
              startsWith(name, "MatMulPartial") || startsWith(name, "ConvPartial") ||
                  startsWith(name, "ConvWeightUpdate") || startsWith(name, "MaxPool") || startsWith(name, "AvgPool") ||
                  startsWith(name, "ScaledAddSupervisor") || startsWith(name, "MultiUpdateAdd"))
        << name;
}

TEST(CodeletRegistry, FieldsAndParamsFollowTheReadmeContract) {
  const auto& mm = CodeletRegistry::instance().get("MatMulPartial");
  const auto fields = mm.fields();
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].name, "a");
  EXPECT_EQ(fields[1].name, "b");
  EXPECT_EQ(fields[2].name, "out");
  EXPECT_EQ(fields[2].access, FieldAccess::InOut);
  EXPECT_EQ(mm.params(), (std::vector<std::string>{"m", "k", "n", "transposeA", "transposeB", "accumulate"}));
  const auto& sce = CodeletRegistry::instance().get("SoftmaxCrossEntropy");
  EXPECT_EQ(sce.fields()[1].name, "labels");
  EXPECT_EQ(sce.fields()[1].dtype, ipusim::ir::DType::Int);
  EXPECT_EQ(CodeletRegistry::instance().get("Cast").fields()[0].dtype, ipusim::ir::DType::Int);
}

TEST(CodeletOrderedParams, FillsDefaultsAndOrdersByTheCodelet) {
  const auto& mm = CodeletRegistry::instance().get("MatMulPartial");
  const auto params = orderedParams(mm, {{"n", 4}, {"m", 2}, {"k", 3}, {"accumulate", 1}});
  EXPECT_EQ(params, (std::vector<double>{2, 3, 4, 0, 0, 1}));
  const auto& reduceSum = CodeletRegistry::instance().get("ReduceSum");
  EXPECT_EQ(orderedParams(reduceSum, {{"rows", 2}, {"cols", 3}, {"axis", 1}}),
            (std::vector<double>{2, 3, 1, 1, 0}));
}

TEST(CodeletOrderedParams, MissingAndUnknownParamsAreNamed) {
  const auto& mm = CodeletRegistry::instance().get("MatMulPartial");
  const std::string missing = errorOf([&] { orderedParams(mm, {{"m", 2}, {"k", 3}}); });
  EXPECT_NE(missing.find("MatMulPartial"), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing param 'n'"), std::string::npos) << missing;
  const std::string unknown = errorOf([&] { orderedParams(mm, {{"m", 2}, {"k", 3}, {"n", 1}, {"transposA", 1}}); });
  EXPECT_NE(unknown.find("unknown param 'transposA'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean 'transposeA'"), std::string::npos) << unknown;
  const auto& add = CodeletRegistry::instance().get("Add");
  EXPECT_NE(errorOf([&] { orderedParams(add, {{"scale", 1}}); }).find("takes no params"), std::string::npos);
}

TEST(CodeletValidate, WrongFieldOrParamCountIsAnError) {
  const auto& add = CodeletRegistry::instance().get("Add");
  const std::string message = errorOf([&] { add.validate(VertexShape{{4, 4}, {}}); });
  EXPECT_NE(message.find("codelet Add"), std::string::npos) << message;
  EXPECT_NE(message.find("expected 3"), std::string::npos) << message;
  const auto& fill = CodeletRegistry::instance().get("Fill");
  EXPECT_THROW(fill.validate(VertexShape{{4}, {}}), std::invalid_argument);
  EXPECT_THROW(fill.validate(VertexShape{{4}, {std::nan("")}}), std::invalid_argument);
}

}  // namespace test_codelet_registry
