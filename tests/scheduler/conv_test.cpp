// Convolution and pooling through the compiler: the ops the graph builders
// add (scheduler/layers/conv_layers.hpp), lowered by the planner and the lowering,
// run by the machine model and compared with direct nested-loop references
// (forward, input gradient, kernel gradient; max and average pooling and
// their gradients), every plan of a planner's space computing the right
// result, and the AMP compute sets' cycles against poplin's estimators.
#include "model/codelets/conv_cycle_model.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/hardware/loaded_executable.hpp"
#include "model/numeric/half.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/lowering/conv_lowering.hpp"
#include "scheduler/lowering/lowering.hpp"
#include "scheduler/planning/memory_plan.hpp"
#include "scheduler/planning/tile_mapper.hpp"
#include "small_target.hpp"
#include "static_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace ipusim::scheduler::conv_test {
namespace {

using testing::ipu2;

std::vector<float> randomValues(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Every element within `relative` (1e-4) of the reference (absolute below 1).
void expectClose(const std::vector<float>& got, const std::vector<double>& want, const std::string& what,
                 double relative = 1e-4) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), relative * std::max(1.0, std::fabs(want[i]))) << what << " element " << i;
}

// A graph of a few ops lowered, loaded and run; values read back by name.
struct Ran {
  std::map<std::string, std::vector<float>> values;
  LoweredStep step;
};

Ran lowerAndRun(OpGraph& g, const std::map<std::string, std::vector<float>>& inputs, const model::Target& target,
                bool functional = true) {
  Schedule schedule{"in_order", {}, 0};
  schedule.order.resize(g.ops.size());
  std::iota(schedule.order.begin(), schedule.order.end(), 0);
  const std::uint32_t tiles = target.totalTiles();
  std::vector<std::string> names;
  for (const Value& v : g.values) names.push_back(v.name);
  Ran r{{}, lowerStep(g, schedule, target, tiles, std::uint64_t(target.tile.memoryBytes * 0.6))};
  ir::Executable& exe = r.step.exe;
  // Every value stays live to the end, so that each can be read back.
  for (const ir::Tensor& t : exe.tensors)
    if (std::find(names.begin(), names.end(), t.name) != names.end()) r.step.useSpans[t.id].second = r.step.lastStep;
  planMemory(exe, r.step.useSpans, tiles, target.tile.memoryBytes, true);
  exe.validate(tiles);
  model::hardware::LoadedExecutable loaded(exe, target, functional);
  auto tensorNamed = [&](const std::string& name) {
    for (const ir::Tensor& t : exe.tensors)
      if (t.name == name) return t.id;
    throw std::logic_error("no tensor " + name);
  };
  for (const auto& [name, data] : inputs) {
    const ir::Id t = tensorNamed(name);
    if (exe.tensors[t].dtype == ir::DType::Half) {  // half tensors hold binary16 bit patterns
      std::vector<model::numeric::HalfBits> bits;
      for (float v : data) bits.push_back(model::numeric::floatToHalf(v));
      loaded.memory.write(t, reinterpret_cast<const std::uint8_t*>(bits.data()));
    } else {
      loaded.memory.write(t, reinterpret_cast<const std::uint8_t*>(data.data()));
    }
  }
  std::vector<ir::Id> programs;
  for (ir::Id seq : r.step.opSequences)
    for (ir::Id child : exe.programs[seq].children) programs.push_back(child);
  testing::runStatically(loaded, programs);
  if (functional)
    for (const std::string& name : names) {
      const ir::Id t = tensorNamed(name);
      std::vector<float> v(exe.tensors[t].numElements());
      if (exe.tensors[t].dtype == ir::DType::Half) {
        std::vector<model::numeric::HalfBits> bits(v.size());
        loaded.memory.read(t, reinterpret_cast<std::uint8_t*>(bits.data()));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = model::numeric::halfToFloat(bits[i]);
      } else {
        loaded.memory.read(t, reinterpret_cast<std::uint8_t*>(v.data()));
      }
      r.values[name] = v;
    }
  return r;
}

struct ConvCase {
  std::uint64_t b, h, w, c, filters, k, stride;
  Padding padding;
};

std::string describe(const ConvCase& c) {
  return std::to_string(c.b) + "x" + std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) +
         " * " + std::to_string(c.k) + "x" + std::to_string(c.k) + "x" + std::to_string(c.filters) + " stride " +
         std::to_string(c.stride) + " " + toString(c.padding);
}

// Builds x -> Conv2D -> y with dy given, and both gradients (all in `type`,
// the kernel gradient in float).
OpGraph convGraph(const ConvCase& c, ir::DType type = ir::DType::Float) {
  OpGraph g;
  const std::size_t x = g.addValue({"x", {c.b, c.h, c.w, c.c}, type, ValueKind::Input, "input", std::nullopt});
  const std::size_t kernel = g.addValue({"conv/kernel", {c.k, c.k, c.c, c.filters}, type, ValueKind::Weight, "conv", std::nullopt});
  g.weights = {kernel};
  Window window;
  window.strideH = window.strideW = c.stride;
  window.padding = c.padding;
  const std::size_t y = addConv2D(g, x, kernel, window, "conv");
  const std::size_t convOp = g.ops.size() - 1;
  const std::size_t dy = g.addValue({"dy", g.values[y].shape, type, ValueKind::Input, "input", std::nullopt});
  addConv2DGrad(g, convOp, dy, true, ir::DType::Float);
  g.images = x, g.labels = dy, g.loss = y;
  return g;
}

// Half: the inputs rounded to half, the reference in double from those; the
// results rounded once to half (2^-11 relative), sums of up to ~300 products
// in float: within 2e-3 relative. The kernel gradient is float (the
// variables' type under mixed_float16).
void checkConvCases(ir::DType type) {
  const model::Target target = ipu2(16);
  const double tolerance = type == ir::DType::Half ? 2e-3 : 1e-4;
  auto rounded = [&](std::vector<float> v) {
    if (type == ir::DType::Half)
      for (auto& x : v) x = model::numeric::roundToHalf(x);
    return v;
  };
  for (const ConvCase c : {ConvCase{2, 6, 7, 3, 5, 3, 1, Padding::Valid}, ConvCase{3, 7, 7, 4, 9, 3, 2, Padding::Same},
                           ConvCase{2, 8, 6, 10, 17, 3, 1, Padding::Same}, ConvCase{1, 9, 9, 2, 3, 2, 2, Padding::Valid},
                           ConvCase{2, 5, 5, 1, 4, 5, 3, Padding::Same}}) {
    OpGraph g = convGraph(c, type);
    const auto& yShape = g.values[2].shape;
    const std::uint64_t oh = yShape[1], ow = yShape[2];
    const Window w{c.k, c.k, c.stride, c.stride, c.padding};
    const long pt = long(w.padTop(c.h)), pl = long(w.padLeft(c.w));
    const auto x = rounded(randomValues(c.b * c.h * c.w * c.c, 1)), k = rounded(randomValues(c.k * c.k * c.c * c.filters, 2));
    const auto dy = rounded(randomValues(c.b * oh * ow * c.filters, 3));
    const Ran r = lowerAndRun(g, {{"x", x}, {"conv/kernel", k}, {"dy", dy}}, target);
    std::vector<double> y(c.b * oh * ow * c.filters), dx(x.size()), dk(k.size());
    for (std::uint64_t b = 0; b < c.b; ++b)
      for (std::uint64_t oy = 0; oy < oh; ++oy)
        for (std::uint64_t ox = 0; ox < ow; ++ox)
          for (std::uint64_t ky = 0; ky < c.k; ++ky)
            for (std::uint64_t kx = 0; kx < c.k; ++kx) {
              const long iy = long(oy * c.stride + ky) - pt, ix = long(ox * c.stride + kx) - pl;
              if (iy < 0 || ix < 0 || iy >= long(c.h) || ix >= long(c.w)) continue;
              for (std::uint64_t ci = 0; ci < c.c; ++ci)
                for (std::uint64_t f = 0; f < c.filters; ++f) {
                  const std::size_t xi = ((b * c.h + iy) * c.w + ix) * c.c + ci, ki = ((ky * c.k + kx) * c.c + ci) * c.filters + f;
                  const std::size_t yi = ((b * oh + oy) * ow + ox) * c.filters + f;
                  y[yi] += double(x[xi]) * k[ki];
                  dx[xi] += double(dy[yi]) * k[ki];
                  dk[ki] += double(dy[yi]) * x[xi];
                }
            }
    expectClose(r.values.at("conv/conv2d"), y, describe(c) + " forward", tolerance);
    expectClose(r.values.at("conv/input_grad"), dx, describe(c) + " input gradient", tolerance);
    expectClose(r.values.at("conv/kernel_grad"), dk, describe(c) + " kernel gradient", 1e-4);
    ASSERT_EQ(r.step.convPlans.size(), 3u);
  }
}

TEST(Conv2D, ForwardAndBothGradientsMatchDirectLoops) { checkConvCases(ir::DType::Float); }
TEST(Conv2D, HalfForwardAndBothGradientsMatchDirectLoops) { checkConvCases(ir::DType::Half); }



TEST(Conv2D, BadShapesAndTypesAreRejectedNamingTheLayer) {
  OpGraph g;
  const std::size_t x = g.addValue({"x", {2, 5, 5, 3}, ir::DType::Float, ValueKind::Input, "input", std::nullopt});
  const std::size_t k = g.addValue({"c/kernel", {3, 3, 4, 8}, ir::DType::Float, ValueKind::Weight, "c", std::nullopt});
  try {
    addConv2D(g, x, k, Window{}, "c");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'c'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[kernel_h, kernel_w, 3, filters]"), std::string::npos) << e.what();
  }
  const std::size_t big = g.addValue({"c/big", {7, 7, 3, 8}, ir::DType::Float, ValueKind::Weight, "c", std::nullopt});
  EXPECT_THROW(addConv2D(g, x, big, Window{}, "c"), std::invalid_argument);  // valid 7x7 on 5x5: no output
  const std::size_t h = g.addValue({"xh", {2, 5, 5, 3}, ir::DType::Half, ValueKind::Input, "input", std::nullopt});
  const std::size_t k3 = g.addValue({"c/k3", {3, 3, 3, 8}, ir::DType::Float, ValueKind::Weight, "c", std::nullopt});
  try {
    addConv2D(g, h, k3, Window{}, "c");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("share one type"), std::string::npos) << e.what();
  }
  const std::size_t labels = g.addValue({"labels", {2, 5, 5, 3}, ir::DType::Int, ValueKind::Input, "input", std::nullopt});
  EXPECT_THROW(addMaxPool2D(g, labels, Window{2, 2, 2, 2, Padding::Valid}, "p"), std::invalid_argument);
}

// Every plan of the space computes the same convolution (the vertex's
// generic form: dilation, flipped kernel), against a direct loop.
TEST(ConvPlan, EveryPlanOfTheSpaceComputesTheConvolution) {
  const std::uint32_t tiles = 12;
  const model::Target target = ipu2(tiles);
  ConvShape fwd;
  fwd.batch = 3, fwd.inH = 7, fwd.inW = 5, fwd.inChans = 17, fwd.outH = 4, fwd.outW = 3, fwd.outChans = 20;
  fwd.kernelH = 3, fwd.kernelW = 2, fwd.strideH = 2, fwd.strideW = 2, fwd.padTop = 1, fwd.padLeft = 0;
  ConvShape ig = fwd;
  ig.pass = ConvPass::InputGrad, ig.strideH = ig.strideW = 1, ig.dilationH = ig.dilationW = 2, ig.flipped = true;
  ig.inH = 4, ig.inW = 3, ig.outH = 7, ig.outW = 5, ig.padTop = 1, ig.padLeft = 1;
  ConvShape wu = fwd;
  wu.pass = ConvPass::WeightUpdate;
  for (const ConvShape& base : {fwd, ig, wu}) {
    const bool isWu = base.pass == ConvPass::WeightUpdate;
    const std::vector<std::uint64_t> inShape{base.batch, base.inH, base.inW, base.inChans};
    const std::vector<std::uint64_t> wShape =
        isWu ? std::vector<std::uint64_t>{base.batch, base.outH, base.outW, base.outChans}
        : base.flipped ? std::vector<std::uint64_t>{base.kernelH, base.kernelW, base.outChans, base.inChans}
                       : std::vector<std::uint64_t>{base.kernelH, base.kernelW, base.inChans, base.outChans};
    const std::vector<std::uint64_t> outShape =
        isWu ? std::vector<std::uint64_t>{base.kernelH, base.kernelW, base.inChans, base.outChans}
             : std::vector<std::uint64_t>{base.batch, base.outH, base.outW, base.outChans};
    ConvShape s = base;
    s.inTiles = mapTensor(inShape, ir::DType::Float, target, tiles).size();
    s.weightTiles = mapTensor(wShape, ir::DType::Float, target, tiles).size();
    s.outTiles = mapTensor(outShape, ir::DType::Float, target, tiles).size();
    const auto in = randomValues(s.batch * s.inH * s.inW * s.inChans, 4);
    const auto wv = randomValues(s.weightElements(), 5);
    // The reference: the vertex's formula over the whole tensors.
    std::vector<double> ref(s.resultElements());
    for (std::uint64_t b = 0; b < s.batch; ++b)
      for (std::uint64_t oy = 0; oy < s.outH; ++oy)
        for (std::uint64_t ox = 0; ox < s.outW; ++ox)
          for (std::uint64_t ky = 0; ky < s.kernelH; ++ky)
            for (std::uint64_t kx = 0; kx < s.kernelW; ++kx) {
              const long y = long(oy * s.strideH + ky) - s.padTop, x = long(ox * s.strideW + kx) - s.padLeft;
              if (y < 0 || x < 0 || y % long(s.dilationH) || x % long(s.dilationW)) continue;
              const std::uint64_t iy = y / s.dilationH, ix = x / s.dilationW;
              if (iy >= s.inH || ix >= s.inW) continue;
              for (std::uint64_t ci = 0; ci < s.inChans; ++ci)
                for (std::uint64_t co = 0; co < s.outChans; ++co) {
                  const double a = in[((b * s.inH + iy) * s.inW + ix) * s.inChans + ci];
                  const std::uint64_t outAt = ((b * s.outH + oy) * s.outW + ox) * s.outChans + co;
                  if (isWu) {
                    ref[((ky * s.kernelW + kx) * s.inChans + ci) * s.outChans + co] += a * wv[outAt];
                  } else {
                    const std::uint64_t wi =
                        s.flipped ? (((s.kernelH - 1 - ky) * s.kernelW + (s.kernelW - 1 - kx)) * s.outChans + co) * s.inChans + ci
                                  : ((ky * s.kernelW + kx) * s.inChans + ci) * s.outChans + co;
                    ref[outAt] += a * wv[wi];
                  }
                }
            }
    std::size_t plans = 0;
    for (const ConvPlan& plan : convPlanSpace(s, target, tiles, 1u << 30)) {
      IrBuilder b(target);
      b.beginOp({"layer", "conv"});
      ConvTensors t;
      t.in = b.addTensor("in", inShape, ir::DType::Float, "activations", true, mapTensor(inShape, ir::DType::Float, target, tiles));
      t.weights = b.addTensor("w", wShape, ir::DType::Float, "weights", true, mapTensor(wShape, ir::DType::Float, target, tiles));
      t.out = b.addTensor("out", outShape, ir::DType::Float, "activations", true, mapTensor(outShape, ir::DType::Float, target, tiles));
      lowerConv(b, s, plan, t, "out");
      const std::vector<ir::Id> programs = b.endOp();
      ir::Executable exe = b.exe();
      planMemory(exe, b.useSpans(), tiles, target.tile.memoryBytes, true);
      exe.validate(tiles);
      model::hardware::LoadedExecutable loaded(exe, target, true);
      loaded.memory.write(t.in, reinterpret_cast<const std::uint8_t*>(in.data()));
      loaded.memory.write(t.weights, reinterpret_cast<const std::uint8_t*>(wv.data()));
      testing::runStatically(loaded, programs);
      std::vector<float> out(s.resultElements());
      loaded.memory.read(t.out, reinterpret_cast<std::uint8_t*>(out.data()));
      expectClose(out, ref, std::string(toString(s.pass)) + " plan " + std::to_string(plan.pb) + "," +
                                std::to_string(plan.ph) + "," + std::to_string(plan.pci) + "," + std::to_string(plan.pco));
      ++plans;
    }
    EXPECT_GT(plans, 10u) << toString(s.pass);
  }
}

TEST(ConvPlan, TheBudgetBoundsTemporaryMemoryAndPlansAreCached) {
  const model::Target target = ipu2(64);
  ConvShape s;
  s.batch = 16, s.inH = 16, s.inW = 16, s.inChans = 32, s.outH = 14, s.outW = 14, s.outChans = 64;
  s.kernelH = s.kernelW = 3;
  s.inTiles = s.weightTiles = s.outTiles = 64;
  for (std::uint64_t budget : {400000ull, 150000ull, 80000ull}) {
    const ConvPlan p = planConv(s, target, 64, budget);
    EXPECT_TRUE(p.fits) << budget;
    EXPECT_LE(p.cost.temporaryBytesPerTile, budget);
  }
  const ConvPlan none = planConv(s, target, 64, 100);
  EXPECT_FALSE(none.fits);
  for (const ConvPlan& q : convPlanSpace(s, target, 64, 100)) EXPECT_GE(q.cost.temporaryBytesPerTile, none.cost.temporaryBytesPerTile);
}

struct PoolCase {
  std::uint64_t b, h, w, c, k, stride;
  Padding padding;
  bool max;
};

TEST(Pool2D, ForwardAndGradientMatchDirectLoops) {
  const model::Target target = ipu2(16);
  for (ir::DType type : {ir::DType::Float, ir::DType::Half})
  for (const PoolCase c : {PoolCase{3, 6, 6, 5, 2, 2, Padding::Valid, true}, PoolCase{2, 7, 5, 3, 3, 2, Padding::Same, true},
                           PoolCase{3, 6, 6, 5, 2, 2, Padding::Valid, false}, PoolCase{2, 7, 5, 3, 3, 2, Padding::Same, false},
                           PoolCase{1, 5, 5, 2, 3, 1, Padding::Valid, true}}) {
    OpGraph g;
    const std::size_t x = g.addValue({"x", {c.b, c.h, c.w, c.c}, type, ValueKind::Input, "input", std::nullopt});
    const Window w{c.k, c.k, c.stride, c.stride, c.padding};
    const std::size_t y = c.max ? addMaxPool2D(g, x, w, "pool") : addAvgPool2D(g, x, w, "pool");
    const std::size_t poolOp = g.ops.size() - 1;
    const std::size_t dy = g.addValue({"dy", g.values[y].shape, type, ValueKind::Input, "input", std::nullopt});
    addPool2DGrad(g, poolOp, dy);
    g.images = x, g.labels = dy, g.loss = y;
    const std::uint64_t oh = w.outH(c.h), ow = w.outW(c.w);
    // Values with ties: TF's rule (first maximum) is observable.
    auto xv = randomValues(c.b * c.h * c.w * c.c, 6);
    for (auto& v : xv) v = std::round(v * 3) / 3;
    auto dyv = randomValues(c.b * oh * ow * c.c, 7);
    for (auto& v : dyv) v = type == ir::DType::Half ? model::numeric::roundToHalf(v) : v;
    const double tolerance = type == ir::DType::Half ? 2e-3 : 1e-4;
    const Ran r = lowerAndRun(g, {{"x", xv}, {"dy", dyv}}, target);
    std::vector<double> yRef(dyv.size()), dxRef(xv.size());
    const long pt = long(w.padTop(c.h)), pl = long(w.padLeft(c.w));
    for (std::uint64_t b = 0; b < c.b; ++b)
      for (std::uint64_t oy = 0; oy < oh; ++oy)
        for (std::uint64_t ox = 0; ox < ow; ++ox)
          for (std::uint64_t ch = 0; ch < c.c; ++ch) {
            double best = -1e30, sum = 0;
            long bestAt = -1, count = 0;
            for (std::uint64_t ky = 0; ky < c.k; ++ky)
              for (std::uint64_t kx = 0; kx < c.k; ++kx) {
                const long iy = long(oy * c.stride + ky) - pt, ix = long(ox * c.stride + kx) - pl;
                if (iy < 0 || ix < 0 || iy >= long(c.h) || ix >= long(c.w)) continue;
                const long at = long(((b * c.h + iy) * c.w + ix) * c.c + ch);
                if (xv[at] > best) best = xv[at], bestAt = at;
                sum += xv[at], ++count;
              }
            const std::size_t yi = ((b * oh + oy) * ow + ox) * c.c + ch;
            yRef[yi] = c.max ? best : sum / double(count);
            if (c.max) {
              dxRef[bestAt] += dyv[yi];
              continue;
            }
            for (std::uint64_t ky = 0; ky < c.k; ++ky)
              for (std::uint64_t kx = 0; kx < c.k; ++kx) {
                const long iy = long(oy * c.stride + ky) - pt, ix = long(ox * c.stride + kx) - pl;
                if (iy >= 0 && ix >= 0 && iy < long(c.h) && ix < long(c.w))
                  dxRef[((b * c.h + iy) * c.w + ix) * c.c + ch] += dyv[yi] / double(count);
              }
          }
    const std::string name = std::string(c.max ? "max_pool" : "avg_pool") + (type == ir::DType::Half ? " half" : "");
    expectClose(r.values.at(c.max ? "pool/max_pool" : "pool/avg_pool"), yRef, name + " forward", tolerance);
    expectClose(r.values.at("pool/input_grad"), dxRef, name + " gradient", tolerance);
  }
}

}  // namespace
}  // namespace ipusim::scheduler::conv_test

namespace ipusim::scheduler::conv_test {
namespace {

// The planner's estimate against the machine model, phase by phase: the AMP
// compute phase exactly (the codelets' cycles() and the sync are shared
// rules), the whole convolution within 1.25x (the gather and partials
// phases are costed from the busiest tile's block and average senders).
TEST(ConvPlan, EstimateAgreesWithTheMachineModel) {
  const model::Target target = ipu2(64);
  for (const ConvCase c : {ConvCase{8, 12, 12, 8, 16, 3, 1, Padding::Valid}, ConvCase{4, 10, 10, 16, 32, 3, 2, Padding::Same}}) {
    OpGraph g = convGraph(c);
    const Ran r = lowerAndRun(g, {}, target, false);
    ASSERT_EQ(r.step.convPlans.size(), 3u);
    model::hardware::LoadedExecutable loaded(r.step.exe, target, false);
    for (std::size_t op = 0; op < 3; ++op) {
      const ConvPlan& plan = r.step.convPlans[op].plan;
      ir::Cycles compute = 0, total = 0;
      for (ir::Id child : r.step.exe.programs[r.step.opSequences[op]].children) {
        const ir::Program& p = r.step.exe.programs[child];
        const ir::Cycles cycles = testing::runStatically(loaded, {child});
        total += cycles;
        if (p.kind == ir::ProgramKind::Execute &&
            r.step.exe.computeSets[p.computeSet].vertices.front().codelet.rfind("Conv", 0) == 0)
          compute = cycles;
      }
      EXPECT_EQ(compute, plan.cost.compute) << describe(c) << " " << toString(r.step.convPlans[op].shape.pass);
      EXPECT_LE(double(total), 1.25 * double(plan.cost.total())) << describe(c) << " " << toString(r.step.convPlans[op].shape.pass);
      EXPECT_GE(double(total), double(plan.cost.total()) / 1.25) << describe(c) << " " << toString(r.step.convPlans[op].shape.pass);
    }
  }
}

}  // namespace
}  // namespace ipusim::scheduler::conv_test

namespace ipusim::scheduler::conv_test {
namespace {

// A conv layer's bias: added over the NHWC output's channels, and its
// gradient summed over batch and positions where the gradient is held
// (tile ranges that cut rows, many tiles folded) — against direct sums.
TEST(ConvBias, AddAndGradientOverNhwcMatchDirectSums) {
  for (const auto& [shape, tiles] : {std::pair{std::vector<std::uint64_t>{4, 6, 6, 5}, 16u},
                                     std::pair{std::vector<std::uint64_t>{8, 9, 9, 32}, 64u},
                                     std::pair{std::vector<std::uint64_t>{2, 3, 3, 3}, 4u}}) {
    const model::Target target = ipu2(tiles);
    OpGraph g;
    const std::uint64_t channels = shape.back();
    const std::size_t x = g.addValue({"x", shape, ir::DType::Float, ValueKind::Input, "input", std::nullopt});
    const std::size_t bias = g.addValue({"conv/bias", {channels}, ir::DType::Float, ValueKind::Weight, "conv", std::nullopt});
    g.weights = {bias};
    const std::size_t y = g.addValue({"conv/bias_add", shape, ir::DType::Float, ValueKind::Activation, "conv", std::nullopt});
    Op add;
    add.kind = OpKind::AddBias, add.name = "bias_add", add.layer = "conv", add.inputs = {x, bias}, add.outputs = {y};
    g.addOp(add);
    const std::size_t db = g.addValue({"conv/bias_grad", {channels}, ir::DType::Float, ValueKind::Gradient, "conv", std::nullopt});
    Op reduce;
    reduce.kind = OpKind::ReduceRows, reduce.name = "bias_grad", reduce.layer = "conv", reduce.inputs = {x},
    reduce.outputs = {db};
    g.addOp(reduce);
    g.images = x, g.labels = x, g.loss = y;
    const auto xv = randomValues(g.values[x].numElements(), 8), bv = randomValues(channels, 9);
    const Ran r = lowerAndRun(g, {{"x", xv}, {"conv/bias", bv}}, target);
    std::vector<double> yRef(xv.size()), dbRef(channels);
    for (std::size_t i = 0; i < xv.size(); ++i) yRef[i] = double(xv[i]) + bv[i % channels], dbRef[i % channels] += xv[i];
    expectClose(r.values.at("conv/bias_add"), yRef, "bias add");
    expectClose(r.values.at("conv/bias_grad"), dbRef, "bias gradient");
  }
}

}  // namespace
}  // namespace ipusim::scheduler::conv_test
