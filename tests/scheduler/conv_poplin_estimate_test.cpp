// Acceptance (issue 14, criterion 3): Conv2D forward and backward cycles
// follow poplin's estimates. For each shape the compiler plans the three
// convolutions of a training step (forward, input gradient, weight update);
// the machine model runs them; the AMP compute set of each (the busiest
// tile's vertex) is compared with poplin's estimator evaluated on that
// plan's busiest tile, transcribed here independently of the model from
// lib/poplin/PerformanceEstimation.hpp (mk2-main):
//   forward and input gradient: ConvPartialnx1, the planner's form
//     (getConvPartialnx1InnerLoopCycleEstimate + ...OuterLoopCycleEstimate
//     + estimateZeroSupervisorCycles), float activations and partials;
//   weight update: ConvPartial1x1Out of the expanded weight-update conv
//     (getConvPartial1x1SupervisorCycleEstimate, float).
#include "model/hardware/loaded_executable.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/lowering/lowering.hpp"
#include "scheduler/planning/memory_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace ipusim::scheduler {
namespace {

using U = std::uint64_t;

// partitionConvPartialByWorker (2-D), returning per context its row pieces' lengths.
std::vector<std::vector<U>> partition(U batch, U h, U w, U contexts, U strideH, U strideW) {
  const U perRow = (w + strideW - 1) / strideW, rows = (h + strideH - 1) / strideH, n = batch * rows * perRow;
  std::vector<std::vector<U>> out(contexts);
  for (U i = 0; i < contexts; ++i)
    for (U e = i * n / contexts; e < (i + 1) * n / contexts;) {
      const U end = std::min((i + 1) * n / contexts, (e / perRow + 1) * perRow);
      out[i].push_back(end - e);
      e = end;
    }
  return out;
}

// poplin, 16 conv units, 6 contexts, weight load 16 x 32 bytes / 16 bytes
// per cycle = 32; float activations and partials, or half activations with
// half (halfPartials) or float partials.
U poplinNx1(U batch, U outH, U outW, U inChans, U outChans, U kh, U kw, U outStrideH, U outStrideW, bool half = false,
            bool halfPartials = false) {
  const U contexts = 6, convUnits = 16, outChansPerGroup = 16, inGroups = (inChans + (half ? 15 : 7)) / (half ? 16 : 8);
  const U outGroups = (outChans + outChansPerGroup - 1) / outChansPerGroup;
  U maxW = 0, minW = std::numeric_limits<U>::max();
  for (const auto& list : partition(batch, outH, outW, contexts, outStrideH, outStrideW)) {
    U c = 17 + (halfPartials ? 1 : 0);  // getConvPartialnx1WorkerCycles
    for (U n : list)
      c += 3 + (half ? (n == 1 ? 29 : n == 2 ? 33 + (halfPartials ? 1 : 0) : 34 + (n - 3) * 4)
                     : (n == 1 ? 33 : n == 2 ? 44 : 45 + (n - 3) * 8)) - 9;
    maxW = std::max(maxW, contexts * c), minW = std::min(minW, contexts * c);
  }
  const U passes = outChansPerGroup / convUnits;
  const U kernelLoop = std::max(maxW, minW + 9) * passes * kh * kw;
  const U innermost = 32 + 15 + 3;
  const U inner = kh * (14 + kw * (17 - 5 + passes * innermost)) + kernelLoop;
  const U outer = 109 + contexts * 9 + contexts * (halfPartials ? 10 : 9) + (outGroups * 17 + (outGroups - 1) * 6 + 1) + 1 +
                  (16 + inGroups * (14 + outGroups * (14 + inner)));
  const U perWorker = (batch * outH * outW * outChansPerGroup + contexts - 1) / contexts;
  const U zero = ((perWorker + 1) / 2 + 14 - 9) * contexts * outGroups;
  return outer + zero;
}

// getConvPartial1x1SupervisorCycleEstimate, float: field m split over the
// contexts, k input channels in groups of 8, n output channels in groups of 16.
U poplin1x1(U m, U k, U n) {
  const U contexts = 6, inGroups = (k + 7) / 8, outGroups = (n + 15) / 16;
  auto innerLoop = [&](bool zeroing) {
    U maxW = 0, minW = std::numeric_limits<U>::max();
    for (U w = 0; w < contexts; ++w) {
      const U elems = m / contexts + (w < m % contexts ? 1 : 0);
      const U zero = zeroing ? 2 + 8 * std::max<U>(elems, 1) : 0;
      const U c = elems == 0 ? 24 : elems == 1 ? 47 + zero : elems == 2 ? 46 + zero : 46 + zero + (elems - 3) * 8;
      maxW = std::max(maxW, contexts * c), minW = std::min(minW, contexts * c);
    }
    if (m < contexts) minW = 0;
    return std::max(maxW, minW + 14);
  };
  const U numLoads = 32, common = 1;
  return 50 + (12 + common + (inGroups - 1) * (15 - common + 1 + outGroups * (19 + (6 + numLoads + innerLoop(false)))) +
               (10 + 1 + outGroups * (19 - common + (7 + numLoads + innerLoop(true)))));
}

struct Case {
  U b, h, w, c, filters, k, stride;
  Padding padding;
  ir::DType type = ir::DType::Float;
};

TEST(ConvPoplinEstimates, ForwardAndBackwardFollowPoplinWithinTenPercent) {
  model::Target target = model::Target::preset("ipu2");
  for (const Case c : {Case{128, 28, 28, 1, 32, 3, 1, Padding::Valid},    // the Keras MNIST convnet's Conv2D 32
                       Case{128, 26, 26, 32, 64, 3, 1, Padding::Valid},   // and its Conv2D 64
                       Case{32, 16, 16, 16, 32, 3, 2, Padding::Same},
                       Case{8, 14, 14, 64, 128, 3, 1, Padding::Same},
                       // half activations (forward and input gradient; the weight
                       // update's half 1x1 estimate is MatMulPartial's, tested elsewhere)
                       Case{32, 16, 16, 32, 64, 3, 1, Padding::Same, ir::DType::Half}}) {
    OpGraph g;
    const std::size_t x = g.addValue({"x", {c.b, c.h, c.w, c.c}, c.type, ValueKind::Input, "input", std::nullopt});
    const std::size_t kernel = g.addValue({"conv/kernel", {c.k, c.k, c.c, c.filters}, c.type, ValueKind::Weight, "conv", std::nullopt});
    g.weights = {kernel};
    const std::size_t y = addConv2D(g, x, kernel, Window{c.k, c.k, c.stride, c.stride, c.padding}, "conv");
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
      const U bb = (s.batch + p.pb - 1) / p.pb, hb = (s.outH + p.ph - 1) / p.ph;
      const U cib = (s.inChans + p.pci - 1) / p.pci, cob = (s.outChans + p.pco - 1) / p.pco;
      const bool half = c.type == ir::DType::Half;
      if (half && s.pass == ConvPass::WeightUpdate) continue;
      const U expected = s.pass == ConvPass::WeightUpdate
                             ? poplin1x1(s.kernelH * s.kernelW * cib, bb * hb * s.outW, cob)
                             : poplinNx1(bb, hb, s.outW, cib, cob, s.kernelH, s.kernelW,
                                         s.dilationH / std::gcd(s.dilationH, s.strideH),
                                         s.dilationW / std::gcd(s.dilationW, s.strideW), half,
                                         half && p.partialsType(s) == ir::DType::Half);
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
      std::cout << (half ? "half " : "") << c.b << "x" << c.h << "x" << c.w << "x" << c.c << " k" << c.k << " s" << c.stride << " -> "
                << c.filters << " " << toString(s.pass) << ": plan " << p.pb << "," << p.ph << "," << p.pci << ","
                << p.pco << " simulated " << simulated << " poplin " << expected << " ratio " << ratio << "\n";
      EXPECT_NEAR(ratio, 1.0, 0.10) << toString(s.pass);
    }
  }
}

}  // namespace
}  // namespace ipusim::scheduler
