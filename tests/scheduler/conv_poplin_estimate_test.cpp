// Acceptance (issue 14, criterion 3; issue 26): Conv2D forward and backward
// cycles follow poplin's estimates. For each shape the compiler plans the
// three convolutions of a training step (forward, input gradient, weight
// update) and chooses each one's vertex (AMP, HMAC or VMAC, by cost, as
// poplin's planner chooses among its candidates); the machine model runs
// them; the compute set of each (the busiest tile's vertex) is compared with
// poplin's estimator for that vertex evaluated on that plan's busiest tile,
// transcribed independently of the model (poplin_conv_estimates.hpp):
//   forward and input gradient: ConvPartialnx1 (conv groups one after
//     another), ConvPartialHorizontalMac, ConvPartialVerticalMac;
//   weight update: ConvPartial1x1Out of the expanded weight-update conv
//     (float), or ConvPartialHorizontalMac on it.
// Grouped and depthwise convolutions (conv groups) are among the shapes.
#include "model/hardware/loaded_executable.hpp"
#include "poplin_conv_estimates.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/lowering/lowering.hpp"
#include "scheduler/planning/memory_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace ipusim::scheduler::conv_poplin_estimate_test {
namespace {

using U = std::uint64_t;
using namespace testing::poplin;

struct Case {
  U b, h, w, c, filters, k, stride;
  Padding padding;
  ir::DType type = ir::DType::Float;
  U groups = 1;
};

// Plans and runs each case's three convolutions; adds the methods chosen to `methods`.
void expectPoplinEstimates(const std::vector<Case>& cases, std::set<ConvMethod>& methods) {
  model::Target target = model::Target::preset("ipu2");
  for (const Case& c : cases) {
    OpGraph g;
    const std::size_t x = g.addValue({"x", {c.b, c.h, c.w, c.c}, c.type, ValueKind::Input, "input", std::nullopt});
    const std::size_t kernel = g.addValue(
        {"conv/kernel", {c.k, c.k, c.c / c.groups, c.filters}, c.type, ValueKind::Weight, "conv", std::nullopt});
    g.weights = {kernel};
    const std::size_t y = addConv2D(g, x, kernel, Window{c.k, c.k, c.stride, c.stride, c.padding}, "conv", c.groups);
    const std::size_t dy = g.addValue({"dy", g.values[y].shape, c.type, ValueKind::Input, "input", std::nullopt});
    addConv2DGrad(g, 0, dy, true, ir::DType::Float);
    g.images = x, g.labels = dy, g.loss = y;
    Schedule schedule{"in_order", {0, 1, 2}, 0};
    LoweredStep step = lowerStep(g, schedule, target, target.totalTiles(), U(target.tile.memoryBytes * 0.6));
    planMemory(step.exe, step.useSpans, target.totalTiles(), target.tile.memoryBytes, true);
    model::hardware::LoadedExecutable loaded(step.exe, target, false);
    ASSERT_EQ(step.convPlans.size(), 3u);
    for (std::size_t op = 0; op < 3; ++op) {
      const PlannedConv& pc = step.convPlans[op];
      const ConvShape& s = pc.shape;
      const ConvPlan& p = pc.plan;
      // The busiest tile's block: the first of each split.
      const U bb = (s.batch + p.pb - 1) / p.pb, hb = (s.outH + p.ph - 1) / p.ph, gb = (s.groups + p.pg - 1) / p.pg;
      const U cib = (s.inChans + p.pci - 1) / p.pci, cob = (s.outChans + p.pco - 1) / p.pco;
      const bool half = c.type == ir::DType::Half;
      const bool floatPartials = p.partialsType(s) == ir::DType::Float;
      methods.insert(p.method);
      // (The weight update's half 1x1 estimate on the AMP is MatMulPartial's, tested elsewhere.)
      if (half && s.pass == ConvPass::WeightUpdate && p.method == ConvMethod::Amp) continue;
      U expected = 0;
      if (s.pass == ConvPass::WeightUpdate) {
        expected = p.method == ConvMethod::Amp
                       ? poplin1x1(s.kernelH * s.kernelW * cib, bb * hb * s.outW, cob, gb)
                       : poplinHmac(cib, s.kernelH, s.kernelW, bb * hb * s.outW, cob, gb, 1, 1, 1, 1, 1, 1, half,
                                    floatPartials);
      } else if (p.method == ConvMethod::Amp) {
        expected = poplinNx1(bb, hb, s.outW, cib, cob, s.kernelH, s.kernelW,
                             s.dilationH / std::gcd(s.dilationH, s.strideH),
                             s.dilationW / std::gcd(s.dilationW, s.strideW), half, half && !floatPartials, gb);
      } else if (p.method == ConvMethod::HorizontalMac) {
        expected = poplinHmac(bb, hb, s.outW, cib, cob, gb, s.kernelH, s.kernelW, s.strideH, s.strideW, s.dilationH,
                              s.dilationW, half, floatPartials);
      } else {
        expected = poplinVmac(bb, hb, s.outW, cib, gb, p.groupsPerVector, s.kernelH, s.kernelW, floatPartials);
      }
      // The simulated AMP compute set: the Execute of this op's sequence.
      ir::Cycles simulated = 0;
      for (ir::Id child : step.exe.programs[step.opSequences[op]].children) {
        const ir::Program& prog = step.exe.programs[child];
        if (prog.kind != ir::ProgramKind::Execute) continue;
        const auto& vertices = step.exe.computeSets[prog.computeSet].vertices;
        if (vertices.front().codelet.rfind("Conv", 0) == 0) simulated = loaded.computeSets[prog.computeSet].ipuCycles()[0];
      }
      ASSERT_GT(simulated, 0u);
      const double ratio = double(simulated) / double(expected);
      std::cout << (half ? "half " : "") << c.b << "x" << c.h << "x" << c.w << "x" << c.c << " k" << c.k << " s"
                << c.stride << " -> " << c.filters << " in " << c.groups << " groups, " << toString(s.pass)
                << ": plan " << p.pg << "," << p.pb << "," << p.ph << "," << p.pci << "," << p.pco << " "
                << toString(p.method) << " simulated " << simulated << " poplin " << expected << " ratio " << ratio
                << "\n";
      EXPECT_NEAR(ratio, 1.0, 0.10) << toString(s.pass) << " " << toString(p.method);
    }
  }
}

TEST(ConvPoplinEstimates, ForwardAndBackwardFollowPoplinWithinTenPercent) {
  std::set<ConvMethod> methods;
  expectPoplinEstimates({Case{128, 28, 28, 1, 32, 3, 1, Padding::Valid},   // the Keras MNIST convnet's Conv2D 32
                         Case{128, 26, 26, 32, 64, 3, 1, Padding::Valid},  // and its Conv2D 64
                         Case{32, 16, 16, 16, 32, 3, 2, Padding::Same},
                         Case{8, 14, 14, 64, 128, 3, 1, Padding::Same},
                         // half activations
                         Case{32, 16, 16, 32, 64, 3, 1, Padding::Same, ir::DType::Half}},
                        methods);
}

// Three of ResNet-50's convolutions as workloads/resnet50.json trains them
// (float16, batch 8, keras.applications.ResNet50's shapes): conv2_block1_2
// (56x56x64, 3x3, 64), conv3_block1_1 (the strided 1x1, 56x56x256 -> 128)
// and conv4_block2_2 (14x14x256, 3x3, 256).
TEST(ConvPoplinEstimates, ResNet50ConvolutionsInHalfFollowPoplinWithinTenPercent) {
  std::set<ConvMethod> methods;
  expectPoplinEstimates({Case{8, 56, 56, 64, 64, 3, 1, Padding::Same, ir::DType::Half},
                         Case{8, 56, 56, 256, 128, 1, 2, Padding::Valid, ir::DType::Half},
                         Case{8, 14, 14, 256, 256, 3, 1, Padding::Same, ir::DType::Half}},
                        methods);
}

// Grouped and depthwise convolutions: conv groups split over the tiles, each
// tile's vertex chosen by cost; the HMAC and VMAC are among the choices.
TEST(ConvPoplinEstimates, GroupedAndDepthwiseFollowPoplinWithinTenPercent) {
  std::set<ConvMethod> methods;
  expectPoplinEstimates({
      Case{8, 14, 14, 64, 64, 3, 1, Padding::Same, ir::DType::Float, 64},    // depthwise, float
      Case{8, 28, 28, 32, 32, 3, 2, Padding::Same, ir::DType::Float, 32},    // depthwise, strided
      Case{8, 14, 14, 96, 96, 3, 1, Padding::Same, ir::DType::Half, 96},     // depthwise, half
      Case{8, 14, 14, 32, 64, 3, 1, Padding::Same, ir::DType::Float, 32},    // depth multiplier 2
      Case{8, 14, 14, 128, 128, 3, 1, Padding::Same, ir::DType::Float, 4},   // 32 channels per group
  }, methods);
  EXPECT_TRUE(methods.count(ConvMethod::Amp));
  EXPECT_TRUE(methods.count(ConvMethod::HorizontalMac));
  EXPECT_TRUE(methods.count(ConvMethod::VerticalMac));
}

}  // namespace
}  // namespace ipusim::scheduler::conv_poplin_estimate_test
