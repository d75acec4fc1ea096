// Grouped and depthwise convolutions through the planner and the lowering:
// every plan of a planner's space (conv-group splits with channel splits,
// each vertex method: AMP, HMAC, and VMAC for half) computes the forward
// pass, the input gradient and the weight update of a grouped convolution
// with a dilated kernel, against a direct loop; the depthwise convolutions of
// a MobileNetV2-sized layer are planned as one convolution in conv groups,
// quickly.
#include "model/hardware/loaded_executable.hpp"
#include "model/numeric/half.hpp"
#include "scheduler/lowering/conv_lowering.hpp"
#include "scheduler/planning/memory_plan.hpp"
#include "scheduler/planning/tile_mapper.hpp"
#include "small_target.hpp"
#include "static_runner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>

namespace ipusim::scheduler::conv_groups_plan_test {
namespace {

using testing::ipu2;

std::vector<float> pseudoRandom(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t state = seed * 2654435761u + 1;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = float(state >> 8) / float(1u << 23) - 1.0f;
  }
  return v;
}

// The convolution of shape `s` (its groups, dilations, flipped kernel) by direct loops.
std::vector<double> reference(const ConvShape& s, const std::vector<float>& in, const std::vector<float>& w) {
  const bool wu = s.pass == ConvPass::WeightUpdate;
  const std::uint64_t inC = s.groups * s.inChans, outC = s.groups * s.outChans;
  std::vector<double> ref(s.resultElements());
  for (std::uint64_t b = 0; b < s.batch; ++b)
    for (std::uint64_t oy = 0; oy < s.outH; ++oy)
      for (std::uint64_t ox = 0; ox < s.outW; ++ox)
        for (std::uint64_t ky = 0; ky < s.kernelH; ++ky)
          for (std::uint64_t kx = 0; kx < s.kernelW; ++kx) {
            const long y = long(oy * s.strideH + ky * s.kernelDilationH) - s.padTop;
            const long x = long(ox * s.strideW + kx * s.kernelDilationW) - s.padLeft;
            if (y < 0 || x < 0 || y % long(s.dilationH) || x % long(s.dilationW)) continue;
            const std::uint64_t iy = y / s.dilationH, ix = x / s.dilationW;
            if (iy >= s.inH || ix >= s.inW) continue;
            for (std::uint64_t g = 0; g < s.groups; ++g)
              for (std::uint64_t ci = 0; ci < s.inChans; ++ci)
                for (std::uint64_t co = 0; co < s.outChans; ++co) {
                  const double a = in[((b * s.inH + iy) * s.inW + ix) * inC + g * s.inChans + ci];
                  const std::uint64_t outAt = ((b * s.outH + oy) * s.outW + ox) * outC + g * s.outChans + co;
                  if (wu) {
                    ref[((ky * s.kernelW + kx) * s.inChans + ci) * outC + g * s.outChans + co] += a * w[outAt];
                    continue;
                  }
                  const std::uint64_t wi =
                      s.flipped ? (((s.kernelH - 1 - ky) * s.kernelW + (s.kernelW - 1 - kx)) * s.outChans + co) * inC +
                                      g * s.inChans + ci
                                : ((ky * s.kernelW + kx) * s.inChans + ci) * outC + g * s.outChans + co;
                  ref[outAt] += a * w[wi];
                }
          }
  return ref;
}

// Lowers `plan`, runs it functionally, returns the result (half tensors read as floats).
std::vector<float> runPlan(const ConvShape& s, const ConvPlan& plan, const model::Target& target, std::uint32_t tiles,
                           const std::vector<float>& in, const std::vector<float>& w) {
  const bool wu = s.pass == ConvPass::WeightUpdate;
  const std::uint64_t inC = s.groups * s.inChans, outC = s.groups * s.outChans;
  const std::vector<std::uint64_t> inShape{s.batch, s.inH, s.inW, inC};
  const std::vector<std::uint64_t> wShape = wu ? std::vector<std::uint64_t>{s.batch, s.outH, s.outW, outC}
                                           : s.flipped ? std::vector<std::uint64_t>{s.kernelH, s.kernelW, s.outChans, inC}
                                                       : std::vector<std::uint64_t>{s.kernelH, s.kernelW, s.inChans, outC};
  const std::vector<std::uint64_t> outShape = wu ? std::vector<std::uint64_t>{s.kernelH, s.kernelW, s.inChans, outC}
                                                 : std::vector<std::uint64_t>{s.batch, s.outH, s.outW, outC};
  IrBuilder b(target);
  b.beginOp({"layer", "conv"});
  ConvTensors t;
  t.in = b.addTensor("in", inShape, s.inputType, "activations", true, mapTensor(inShape, s.inputType, target, tiles));
  t.weights = b.addTensor("w", wShape, s.inputType, "weights", true, mapTensor(wShape, s.inputType, target, tiles));
  t.out = b.addTensor("out", outShape, s.outputType, "activations", true, mapTensor(outShape, s.outputType, target, tiles));
  lowerConv(b, s, plan, t, "out");
  const std::vector<ir::Id> programs = b.endOp();
  ir::Executable exe = b.exe();
  planMemory(exe, b.useSpans(), tiles, target.tile.memoryBytes, true);
  exe.validate(tiles);
  model::hardware::LoadedExecutable loaded(exe, target, true);
  auto write = [&](ir::Id id, const std::vector<float>& v) {
    if (s.inputType == ir::DType::Half) {
      std::vector<model::numeric::HalfBits> bits;
      for (float x : v) bits.push_back(model::numeric::floatToHalf(x));
      loaded.memory.write(id, reinterpret_cast<const std::uint8_t*>(bits.data()));
    } else {
      loaded.memory.write(id, reinterpret_cast<const std::uint8_t*>(v.data()));
    }
  };
  write(t.in, in);
  write(t.weights, w);
  testing::runStatically(loaded, programs);
  std::vector<float> out(s.resultElements());
  if (s.outputType == ir::DType::Half) {
    std::vector<model::numeric::HalfBits> bits(out.size());
    loaded.memory.read(t.out, reinterpret_cast<std::uint8_t*>(bits.data()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = model::numeric::halfToFloat(bits[i]);
  } else {
    loaded.memory.read(t.out, reinterpret_cast<std::uint8_t*>(out.data()));
  }
  return out;
}

// Every plan of the space of the three passes of `fwd`, against the direct loops.
void expectEveryPlanComputes(const ConvShape& fwd, ConvShape ig, std::set<ConvMethod>& methods) {
  const std::uint32_t tiles = 12;
  const model::Target target = ipu2(tiles);
  ConvShape wu = fwd;
  wu.pass = ConvPass::WeightUpdate;
  wu.outputType = ir::DType::Float;
  const bool half = fwd.inputType == ir::DType::Half;
  for (ConvShape s : {fwd, ig, wu}) {
    const std::uint64_t inC = s.groups * s.inChans;
    const std::vector<std::uint64_t> inShape{s.batch, s.inH, s.inW, inC};
    s.inTiles = s.weightTiles = s.outTiles = tiles;
    auto in = pseudoRandom(s.batch * s.inH * s.inW * inC, 4);
    auto w = pseudoRandom(s.weightElements(), 5);
    if (half)
      for (auto* v : {&in, &w})
        for (float& x : *v) x = model::numeric::roundToHalf(x);
    const std::vector<double> ref = reference(s, in, w);
    std::size_t plans = 0;
    for (const ConvPlan& plan : convPlanSpace(s, target, tiles, 1u << 30)) {
      methods.insert(plan.method);
      const std::vector<float> out = runPlan(s, plan, target, tiles, in, w);
      const std::string what = std::string(toString(s.pass)) + " " + toString(plan.method) + " plan " +
                               std::to_string(plan.pg) + "," + std::to_string(plan.pb) + "," + std::to_string(plan.ph) +
                               "," + std::to_string(plan.pci) + "," + std::to_string(plan.pco);
      const double tolerance = half && s.outputType == ir::DType::Half ? 2e-3 : 1e-4;
      for (std::size_t i = 0; i < out.size(); ++i)
        ASSERT_LE(std::fabs(out[i] - ref[i]), tolerance * std::max(1.0, std::fabs(ref[i]))) << what << " element " << i;
      ++plans;
    }
    EXPECT_GT(plans, 10u) << toString(s.pass);
  }
}

// A grouped convolution (3 groups of 4 input and 2 output channels), its
// kernel dilated 2 x 1, strided, padded.
TEST(ConvGroupsPlan, EveryPlanComputesAGroupedDilatedConvolution) {
  ConvShape fwd;
  fwd.batch = 2, fwd.inH = 7, fwd.inW = 6, fwd.inChans = 4, fwd.outH = 3, fwd.outW = 3, fwd.outChans = 2, fwd.groups = 3;
  fwd.kernelH = 3, fwd.kernelW = 2, fwd.kernelDilationH = 2, fwd.strideH = 1, fwd.strideW = 2, fwd.padTop = 0, fwd.padLeft = 0;
  // Its input gradient: the output gradient (3 x 3, stride 2 across) dilated,
  // the flipped kernel (dilated) padded by the effective size - 1.
  ConvShape ig = fwd;
  ig.pass = ConvPass::InputGrad, ig.flipped = true, ig.strideH = ig.strideW = 1, ig.dilationH = 1, ig.dilationW = 2;
  ig.inH = 3, ig.inW = 3, ig.inChans = 2, ig.outH = 7, ig.outW = 6, ig.outChans = 4, ig.padTop = 4, ig.padLeft = 1;
  std::set<ConvMethod> methods;
  expectEveryPlanComputes(fwd, ig, methods);
  EXPECT_TRUE(methods.count(ConvMethod::Amp) && methods.count(ConvMethod::HorizontalMac));
}

// Depthwise in half (8 channels, one each): the VMAC among the plans.
TEST(ConvGroupsPlan, EveryPlanComputesAHalfDepthwiseConvolution) {
  ConvShape fwd;
  fwd.batch = 2, fwd.inH = 6, fwd.inW = 5, fwd.inChans = 1, fwd.outH = 6, fwd.outW = 5, fwd.outChans = 1, fwd.groups = 8;
  fwd.kernelH = fwd.kernelW = 3, fwd.padTop = fwd.padLeft = 1;
  fwd.inputType = fwd.outputType = ir::DType::Half;
  ConvShape ig = fwd;
  ig.pass = ConvPass::InputGrad, ig.flipped = true;
  std::set<ConvMethod> methods;
  expectEveryPlanComputes(fwd, ig, methods);
  EXPECT_TRUE(methods.count(ConvMethod::VerticalMac));
}

// MobileNetV2's widest depthwise convolution (960 channels, 7x7, 3x3,
// stride 1, batch 8) on a whole ipu2: its three passes planned in conv
// groups over the tiles, within a second each (the planner's space is
// thousands of plans, not one convolution per channel).
TEST(ConvGroupsPlan, MobileNetDepthwiseLayerPlansQuickly) {
  const model::Target target = model::Target::preset("ipu2");
  ConvShape fwd;
  fwd.batch = 8, fwd.inH = fwd.inW = fwd.outH = fwd.outW = 7, fwd.inChans = fwd.outChans = 1, fwd.groups = 960;
  fwd.kernelH = fwd.kernelW = 3, fwd.padTop = fwd.padLeft = 1;
  fwd.inputType = fwd.outputType = ir::DType::Half;
  fwd.inTiles = fwd.weightTiles = fwd.outTiles = target.totalTiles();
  ConvShape ig = fwd;
  ig.pass = ConvPass::InputGrad, ig.flipped = true;
  ConvShape wu = fwd;
  wu.pass = ConvPass::WeightUpdate;
  for (const ConvShape& s : {fwd, ig, wu}) {
    const auto start = std::chrono::steady_clock::now();
    const ConvPlan p = planConv(s, target, target.totalTiles(), std::uint64_t(target.tile.memoryBytes * 0.6));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << toString(s.pass) << ": plan " << p.pg << "," << p.pb << "," << p.ph << "," << p.pci << "," << p.pco
              << " " << toString(p.method) << " on " << p.tiles() << " tiles, " << p.cost.total() << " cycles, planned in "
              << seconds << " s\n";
    EXPECT_TRUE(p.fits);
    EXPECT_GT(p.pg, 1u) << "the groups are split over the tiles";
    EXPECT_LT(seconds, 1.0);
  }
}

}  // namespace
}  // namespace ipusim::scheduler::conv_groups_plan_test
