// The convolution and pooling codelets: each against a direct nested-loop
// reference (strides, padding, dilation, the flipped kernel of the input
// gradient, TF's tie rule of max pooling), validation messages, and exact
// cycle counts derived by hand from the PopLibs estimators they follow.
#include "model/codelets/conv_cycle_model.hpp"
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace test_codelet_conv {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

struct Geo {
  std::size_t b, ih, iw, ci, oh, ow, co, kh, kw, sh, sw;
  long pt, pl;
  std::size_t dh = 1, dw = 1;
  bool flipped = false;
  std::map<std::string, double> params() const {
    return {{"batch", b}, {"inH", ih}, {"inW", iw}, {"inChans", ci}, {"outH", oh}, {"outW", ow}, {"outChans", co},
            {"kernelH", kh}, {"kernelW", kw}, {"strideH", sh}, {"strideW", sw}, {"padTop", double(pt)},
            {"padLeft", double(pl)}};
  }
};

// The input value at dilated coordinates (y, x), zero outside or in a hole.
double at(const std::vector<float>& in, const Geo& g, std::size_t b, long y, long x, std::size_t c) {
  if (y < 0 || x < 0 || y % long(g.dh) || x % long(g.dw)) return 0;
  const std::size_t r = std::size_t(y) / g.dh, s = std::size_t(x) / g.dw;
  if (r >= g.ih || s >= g.iw) return 0;
  return in[((b * g.ih + r) * g.iw + s) * g.ci + c];
}

TEST(ConvPartialnx1, MatchesDirectConvolution) {
  for (const Geo& g : {Geo{2, 5, 6, 3, 3, 4, 4, 3, 3, 1, 1, 0, 0},           // valid
                      Geo{1, 7, 7, 2, 4, 4, 5, 3, 3, 2, 2, 1, 1},           // same, stride 2
                      Geo{2, 3, 3, 4, 5, 5, 3, 3, 3, 1, 1, 1, 1, 2, 2, true},  // input-gradient form
                      Geo{1, 4, 5, 9, 4, 5, 17, 1, 2, 1, 1, 0, 1}}) {
    const auto in = pseudoRandom(g.b * g.ih * g.iw * g.ci, 1), w = pseudoRandom(g.kh * g.kw * g.ci * g.co, 2);
    std::vector<Buffer> buffers{Buffer::of(in), Buffer::of(w), Buffer::of(std::vector<float>(g.b * g.oh * g.ow * g.co, 7))};
    auto p = g.params();
    p["dilationH"] = g.dh, p["dilationW"] = g.dw, p["flipped"] = g.flipped;
    run("ConvPartialnx1", buffers, p);
    for (std::size_t b = 0; b < g.b; ++b)
      for (std::size_t oy = 0; oy < g.oh; ++oy)
        for (std::size_t ox = 0; ox < g.ow; ++ox)
          for (std::size_t co = 0; co < g.co; ++co) {
            double sum = 0;
            for (std::size_t ky = 0; ky < g.kh; ++ky)
              for (std::size_t kx = 0; kx < g.kw; ++kx)
                for (std::size_t ci = 0; ci < g.ci; ++ci) {
                  const double wv = g.flipped ? w[(((g.kh - 1 - ky) * g.kw + (g.kw - 1 - kx)) * g.co + co) * g.ci + ci]
                                              : w[((ky * g.kw + kx) * g.ci + ci) * g.co + co];
                  sum += at(in, g, b, long(oy * g.sh + ky) - g.pt, long(ox * g.sw + kx) - g.pl, ci) * wv;
                }
            ASSERT_NEAR(buffers[2].floats[((b * g.oh + oy) * g.ow + ox) * g.co + co], sum, 1e-5) << b << oy << ox << co;
          }
  }
}

TEST(ConvPartialnx1, AccumulatesIntoItsOutput) {
  const Geo g{1, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1, 0, 0};
  std::vector<Buffer> buffers{Buffer::of(std::vector<float>(9, 1)), Buffer::of(std::vector<float>(9, 2)), Buffer::of({5})};
  auto p = g.params();
  p["accumulate"] = 1;
  run("ConvPartialnx1", buffers, p);
  EXPECT_EQ(buffers[2].floats[0], 5 + 18);
}

TEST(ConvWeightUpdatePartial, MatchesDirectWeightGradient) {
  for (const Geo& g : {Geo{2, 5, 6, 3, 3, 4, 4, 3, 3, 1, 1, 0, 0}, Geo{3, 7, 7, 2, 4, 4, 5, 3, 3, 2, 2, 1, 1}}) {
    const auto in = pseudoRandom(g.b * g.ih * g.iw * g.ci, 3), d = pseudoRandom(g.b * g.oh * g.ow * g.co, 4);
    std::vector<Buffer> buffers{Buffer::of(in), Buffer::of(d), Buffer::of(std::vector<float>(g.kh * g.kw * g.ci * g.co))};
    run("ConvWeightUpdatePartial", buffers, g.params());
    for (std::size_t ky = 0; ky < g.kh; ++ky)
      for (std::size_t kx = 0; kx < g.kw; ++kx)
        for (std::size_t ci = 0; ci < g.ci; ++ci)
          for (std::size_t co = 0; co < g.co; ++co) {
            double sum = 0;
            for (std::size_t b = 0; b < g.b; ++b)
              for (std::size_t oy = 0; oy < g.oh; ++oy)
                for (std::size_t ox = 0; ox < g.ow; ++ox)
                  sum += at(in, g, b, long(oy * g.sh + ky) - g.pt, long(ox * g.sw + kx) - g.pl, ci) *
                         d[((b * g.oh + oy) * g.ow + ox) * g.co + co];
            ASSERT_NEAR(buffers[2].floats[((ky * g.kw + kx) * g.ci + ci) * g.co + co], sum, 1e-5);
          }
  }
}

// The input row (column) output row o reads at kernel row k, or -1 (no dilation).
long sourceOf(std::size_t o, std::size_t k, std::size_t stride, long pad, std::size_t size) {
  const long y = long(o * stride + k) - pad;
  return y >= 0 && y < long(size) ? y : -1;
}

// Output channels 127 = 64 + 32 + 16 + 8 + 4 + 3 and 45 reach every block
// width of the kernels (16 lanes: 4, 2 and 1 vectors; 8 lanes: 2 and 1; 4;
// 1), input channels 7 and 5 both blocks of the weight update (4 and 1).
const Geo kOrderGeometries[] = {Geo{2, 5, 6, 7, 3, 4, 127, 3, 3, 1, 1, 0, 0}, Geo{1, 7, 7, 5, 4, 4, 45, 3, 3, 2, 2, 1, 1}};

TEST(ConvPartialnx1, AddsTapByTapThenChannelByChannelBitForBit) {
  // The contract the kernel keeps (conv_partial.cpp): each output element
  // starts from its value (accumulate) and adds a * w in float, tap by tap
  // (ky, then kx), channel by channel: a scalar transcription, compared bit
  // for bit.
  for (const Geo& g : kOrderGeometries) {
    const auto in = pseudoRandom(g.b * g.ih * g.iw * g.ci, 5), w = pseudoRandom(g.kh * g.kw * g.ci * g.co, 6);
    const auto start = pseudoRandom(g.b * g.oh * g.ow * g.co, 7);
    std::vector<Buffer> buffers{Buffer::of(in), Buffer::of(w), Buffer::of(start)};
    auto p = g.params();
    p["accumulate"] = 1;
    run("ConvPartialnx1", buffers, p);
    for (std::size_t b = 0; b < g.b; ++b)
      for (std::size_t oy = 0; oy < g.oh; ++oy)
        for (std::size_t ox = 0; ox < g.ow; ++ox)
          for (std::size_t co = 0; co < g.co; ++co) {
            const std::size_t at = ((b * g.oh + oy) * g.ow + ox) * g.co + co;
            float acc = start[at];
            for (std::size_t ky = 0; ky < g.kh; ++ky)
              for (std::size_t kx = 0; kx < g.kw; ++kx) {
                const long y = sourceOf(oy, ky, g.sh, g.pt, g.ih), x = sourceOf(ox, kx, g.sw, g.pl, g.iw);
                if (y < 0 || x < 0) continue;
                for (std::size_t ci = 0; ci < g.ci; ++ci)
                  acc = acc + in[((b * g.ih + std::size_t(y)) * g.iw + std::size_t(x)) * g.ci + ci] *
                                  w[((ky * g.kw + kx) * g.ci + ci) * g.co + co];
              }
            ASSERT_EQ(buffers[2].floats[at], acc) << "b " << b << " oy " << oy << " ox " << ox << " co " << co;
          }
  }
}

TEST(ConvWeightUpdatePartial, AddsPositionByPositionBitForBit) {
  // Each weight gradient element starts from its value and adds in * delta
  // in float, position by position (b, then oy, then ox).
  for (const Geo& g : kOrderGeometries) {
    const auto in = pseudoRandom(g.b * g.ih * g.iw * g.ci, 8), d = pseudoRandom(g.b * g.oh * g.ow * g.co, 9);
    const auto start = pseudoRandom(g.kh * g.kw * g.ci * g.co, 10);
    std::vector<Buffer> buffers{Buffer::of(in), Buffer::of(d), Buffer::of(start)};
    auto p = g.params();
    p["accumulate"] = 1;
    run("ConvWeightUpdatePartial", buffers, p);
    for (std::size_t ky = 0; ky < g.kh; ++ky)
      for (std::size_t kx = 0; kx < g.kw; ++kx)
        for (std::size_t ci = 0; ci < g.ci; ++ci)
          for (std::size_t co = 0; co < g.co; ++co) {
            const std::size_t at = ((ky * g.kw + kx) * g.ci + ci) * g.co + co;
            float acc = start[at];
            for (std::size_t b = 0; b < g.b; ++b)
              for (std::size_t oy = 0; oy < g.oh; ++oy)
                for (std::size_t ox = 0; ox < g.ow; ++ox) {
                  const long y = sourceOf(oy, ky, g.sh, g.pt, g.ih), x = sourceOf(ox, kx, g.sw, g.pl, g.iw);
                  if (y < 0 || x < 0) continue;
                  acc = acc + in[((b * g.ih + std::size_t(y)) * g.iw + std::size_t(x)) * g.ci + ci] *
                                  d[((b * g.oh + oy) * g.ow + ox) * g.co + co];
                }
            ASSERT_EQ(buffers[2].floats[at], acc) << "ky " << ky << " kx " << kx << " ci " << ci << " co " << co;
          }
  }
}

TEST(ConvPartialnx1, ValidationNamesTheField) {
  const Geo g{1, 3, 3, 2, 1, 1, 4, 3, 3, 1, 1, 0, 0};
  try {
    cyclesOf("ConvPartialnx1", {18, 71, 4}, g.params());
    FAIL() << "a weights field of the wrong size was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("weights"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernelH x kernelW x inChans x outChans = 3 x 3 x 2 x 4"), std::string::npos) << e.what();
  }
}

// ipu2: 16 conv units, 6 workers. 1 x 2 x 3 outputs, 8 in and 16 out
// channels (one group each), 3x3 kernel. Each worker gets one output
// (partitionConvPartialByWorker: 6 elements over 6 contexts):
//   worker 17 + (3 + 33 - 9) = 44, x6 = 264; per kernel position
//   max(264, 264 + 9) = 273; 9 positions: 2457;
//   inner = 3 (14 + 3 (12 + (32 + 15 + 3))) + 2457 = 3057;
//   outer = 109 + 6*9 + 6*9 + (17 + 0 + 1) + 0 + 1 + (16 + (14 + (14 + 3057))) = 3337;
//   zeroing: 6 x 16 / 6 = 16 floats a worker: 8 + 14 - 9 = 13, x6 = 78. Total 3415.
TEST(ConvPartialnx1, CyclesArePoplinsNx1EstimateByHand) {
  const Target t = Target::preset("ipu2");
  const Geo g{1, 4, 5, 8, 2, 3, 16, 3, 3, 1, 1, 0, 0};
  EXPECT_EQ(cyclesOf("ConvPartialnx1", {4 * 5 * 8, 9 * 8 * 16, 6 * 16}, g.params(), t), 3415u);
  auto accumulate = g.params();
  accumulate["accumulate"] = 1;
  EXPECT_EQ(cyclesOf("ConvPartialnx1", {4 * 5 * 8, 9 * 8 * 16, 6 * 16}, accumulate, t), 3415u - 78u);
}

TEST(ConvWeightUpdatePartial, CyclesArePoplins1x1EstimateOfTheExpandedConvolution) {
  const Target t = Target::preset("ipu2");
  const Geo g{2, 5, 6, 3, 3, 4, 4, 3, 3, 1, 1, 0, 0};
  EXPECT_EQ(cyclesOf("ConvWeightUpdatePartial", {2 * 5 * 6 * 3, 2 * 3 * 4 * 4, 9 * 3 * 4}, g.params(), t),
            cyc::ampMatMulCycles(9 * 3, 2 * 3 * 4, 4, true, ipusim::ir::DType::Float, ipusim::ir::DType::Float, t));
}

std::map<std::string, double> poolParams(std::size_t b, std::size_t ih, std::size_t iw, std::size_t c, std::size_t oh,
                                         std::size_t ow, std::size_t k, std::size_t s, long pad) {
  return {{"batch", b}, {"inH", ih}, {"inW", iw}, {"chans", c}, {"outH", oh}, {"outW", ow}, {"kernelH", k},
          {"kernelW", k}, {"strideH", s}, {"strideW", s}, {"padTop", double(pad)}, {"padLeft", double(pad)}};
}

TEST(Pooling, MaxAndAverageWithSamePaddingIgnorePadding) {
  // One 3x3 image of one channel, 2x2 windows at stride 2, TF SAME: out 2x2, no top/left padding.
  std::vector<Buffer> maxB{Buffer::of({1, 2, 3, 4, 5, 6, 7, 8, 9}), Buffer::of(std::vector<float>(4))};
  run("MaxPool", maxB, poolParams(1, 3, 3, 1, 2, 2, 2, 2, 0));
  EXPECT_EQ(maxB[1].floats, (std::vector<float>{5, 6, 8, 9}));
  std::vector<Buffer> avgB{Buffer::of({1, 2, 3, 4, 5, 6, 7, 8, 9}), Buffer::of(std::vector<float>(4))};
  run("AvgPool", avgB, poolParams(1, 3, 3, 1, 2, 2, 2, 2, 0));
  EXPECT_EQ(avgB[1].floats, (std::vector<float>{3, 4.5, 7.5, 9}));
}

TEST(Pooling, MaxGradientGoesToTheFirstMaximumAsTf) {
  // A window of equal values: TF's MaxPoolGrad gives its gradient to the first one only.
  std::vector<Buffer> b{Buffer::of({2, 2, 2, 2}), Buffer::of({5}), Buffer::of(std::vector<float>(4, 9))};
  run("MaxPoolGrad", b, poolParams(1, 2, 2, 1, 1, 1, 2, 2, 0));
  EXPECT_EQ(b[2].floats, (std::vector<float>{5, 0, 0, 0}));
  // Overlapping windows (3x3 at stride 1) sum their gradients at a shared maximum.
  std::vector<Buffer> o{Buffer::of({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), Buffer::of({1, 2, 3, 4}),
                        Buffer::of(std::vector<float>(16))};
  o[0].floats[5] = 7;  // (1, 1) is the maximum of all four windows
  run("MaxPoolGrad", o, poolParams(1, 4, 4, 1, 2, 2, 3, 1, 0));
  EXPECT_EQ(o[2].floats[5], 10);
}

TEST(Pooling, AverageGradientSpreadsOverValidPositions) {
  std::vector<Buffer> b{Buffer::of({3, 4, 6, 8}), Buffer::of(std::vector<float>(9))};
  run("AvgPoolGrad", b, poolParams(1, 3, 3, 1, 2, 2, 2, 2, 0));
  EXPECT_EQ(b[1].floats, (std::vector<float>{0.75, 0.75, 2, 0.75, 0.75, 2, 3, 3, 8}));
}

// ipu2, MaxPool over 1 image, 2x2 outputs, 2 channels (one vector), 2x2
// window (popnn getPoolingCycles, planning form): 4 outputs over 6 workers
// give workers 1, 2, 4, 5 one output each; initInfo 4, so workers 0-3 init
// one element. A busy worker: 19 + (4 + 0 + 1) + 8 + 3 + 10
// + row (13 + 4 x (20 + 1 + (3 + 4) + 1 + 3) + 2) + 1 = 189. 7 + 6 x 189 + 6.
TEST(Pooling, MaxPoolCyclesArePopnnsEstimateByHand) {
  const Target t = Target::preset("ipu2");
  EXPECT_EQ(cyclesOf("MaxPool", {4 * 4 * 2, 2 * 2 * 2}, poolParams(1, 4, 4, 2, 2, 2, 2, 2, 0), t), 7u + 6 * 189 + 6);
}

}  // namespace

namespace {

// The example above with 16 half input channels (one group of 16) on
// ipu2's 16 half conv units:
//   <half,float>: worker 17 + (3 + 29 - 9) = 40, x6 = 240, per position
//   249, x9 = 2241; inner 600 + 2241 = 2841; outer 109 + 54 + 54 + 18 + 1
//   + (16 + 14 + 14 + 2841) = 3121; zeroing 78 (counted as floats). 3199.
//   <half,half>: the worker starts one cycle later (41, 246, 255 x 9 = 2295),
//   the zero-retention saving is 10 a context (60): 3121 + 54 + 6 + 78 = 3259.
TEST(ConvPartialnx1, HalfCyclesArePoplinsNx1EstimateByHand) {
  const Target t = Target::preset("ipu2");
  const Geo g{1, 4, 5, 16, 2, 3, 16, 3, 3, 1, 1, 0, 0};
  const std::vector<std::uint64_t> sizes{4 * 5 * 16, 9 * 16 * 16, 6 * 16};
  EXPECT_EQ(cyclesOf("ConvPartialnx1<half,float>", sizes, g.params(), t), 3199u);
  EXPECT_EQ(cyclesOf("ConvPartialnx1<half,half>", sizes, g.params(), t), 3259u);
}

TEST(ConvPartialnx1, HalfComputesInFloatAndRoundsOnce) {
  const Geo g{1, 3, 3, 2, 1, 1, 1, 3, 3, 1, 1, 0, 0};
  const auto in = pseudoRandom(18, 21), w = pseudoRandom(18, 22);
  std::vector<Buffer> b{Buffer::ofHalves(in), Buffer::ofHalves(w), Buffer::of({0})};
  run("ConvPartialnx1<half,float>", b, g.params());
  double sum = 0;
  for (std::size_t i = 0; i < 18; ++i) sum += double(numeric::roundToHalf(in[i])) * numeric::roundToHalf(w[i]);
  EXPECT_NEAR(b[2].floats[0], sum, 1e-5);
}

}  // namespace

}  // namespace test_codelet_conv
