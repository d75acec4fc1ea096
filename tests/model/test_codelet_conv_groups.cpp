// The convolution codelets in conv groups (grouped and depthwise
// convolutions) and with a dilated kernel: ConvPartialnx1 (AMP),
// ConvPartialHorizontalMac (HMAC), ConvPartialVerticalMac (VMAC, half),
// ConvWeightUpdatePartial and ConvWeightUpdateHorizontalMac against direct
// nested loops; and exact cycle counts derived by hand from the PopLibs
// estimators they follow (model/codelets/conv_mac_cycle_model.hpp,
// conv_cycle_model.hpp).
#include "model/codelets/conv_mac_cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace test_codelet_conv_groups {

using namespace ipusim::model;
using namespace ipusim::model::testing;

namespace {

// G groups of ci input and co output channels; kernel dilation kd; input dilation dh, dw.
struct Geo {
  std::size_t b, ih, iw, ci, oh, ow, co, kh, kw, sh, sw;
  long pt, pl;
  std::size_t groups = 1, kdh = 1, kdw = 1, dh = 1, dw = 1;
  bool flipped = false;
  std::size_t inC() const { return groups * ci; }
  std::size_t outC() const { return groups * co; }
  std::map<std::string, double> params(bool weightUpdate = false) const {
    std::map<std::string, double> p{{"batch", b},   {"inH", ih},       {"inW", iw},          {"inChans", ci},
                                    {"outH", oh},   {"outW", ow},      {"outChans", co},     {"kernelH", kh},
                                    {"kernelW", kw}, {"strideH", sh},  {"strideW", sw},      {"padTop", double(pt)},
                                    {"padLeft", double(pl)}, {"convGroups", groups}, {"kernelDilationH", kdh},
                                    {"kernelDilationW", kdw}};
    if (!weightUpdate) p["dilationH"] = dh, p["dilationW"] = dw, p["flipped"] = flipped;
    return p;
  }
};

// The input at dilated coordinates (y, x), channel c; zero outside or in a hole.
double at(const std::vector<float>& in, const Geo& g, std::size_t b, long y, long x, std::size_t c) {
  if (y < 0 || x < 0 || y % long(g.dh) || x % long(g.dw)) return 0;
  const std::size_t r = std::size_t(y) / g.dh, s = std::size_t(x) / g.dw;
  if (r >= g.ih || s >= g.iw) return 0;
  return in[((b * g.ih + r) * g.iw + s) * g.inC() + c];
}

// out[b][oy][ox][g co + o] = sum over taps and the group's input channels.
std::vector<double> forwardReference(const Geo& g, const std::vector<float>& in, const std::vector<float>& w) {
  std::vector<double> out(g.b * g.oh * g.ow * g.outC());
  for (std::size_t b = 0; b < g.b; ++b)
    for (std::size_t oy = 0; oy < g.oh; ++oy)
      for (std::size_t ox = 0; ox < g.ow; ++ox)
        for (std::size_t grp = 0; grp < g.groups; ++grp)
          for (std::size_t o = 0; o < g.co; ++o) {
            double sum = 0;
            for (std::size_t ky = 0; ky < g.kh; ++ky)
              for (std::size_t kx = 0; kx < g.kw; ++kx)
                for (std::size_t i = 0; i < g.ci; ++i) {
                  // Flipped: the kernel stored [kh][kw][co][G ci] read backwards.
                  const double wv = g.flipped
                                        ? w[(((g.kh - 1 - ky) * g.kw + (g.kw - 1 - kx)) * g.co + o) * g.inC() + grp * g.ci + i]
                                        : w[((ky * g.kw + kx) * g.ci + i) * g.outC() + grp * g.co + o];
                  sum += at(in, g, b, long(oy * g.sh + ky * g.kdh) - g.pt, long(ox * g.sw + kx * g.kdw) - g.pl,
                            grp * g.ci + i) * wv;
                }
            out[((b * g.oh + oy) * g.ow + ox) * g.outC() + grp * g.co + o] = sum;
          }
  return out;
}

// out[ky][kx][i][g co + o] = sum over positions of in x deltas.
std::vector<double> weightUpdateReference(const Geo& g, const std::vector<float>& in, const std::vector<float>& d) {
  std::vector<double> out(g.kh * g.kw * g.ci * g.outC());
  for (std::size_t ky = 0; ky < g.kh; ++ky)
    for (std::size_t kx = 0; kx < g.kw; ++kx)
      for (std::size_t i = 0; i < g.ci; ++i)
        for (std::size_t grp = 0; grp < g.groups; ++grp)
          for (std::size_t o = 0; o < g.co; ++o) {
            double sum = 0;
            for (std::size_t b = 0; b < g.b; ++b)
              for (std::size_t oy = 0; oy < g.oh; ++oy)
                for (std::size_t ox = 0; ox < g.ow; ++ox)
                  sum += at(in, g, b, long(oy * g.sh + ky * g.kdh) - g.pt, long(ox * g.sw + kx * g.kdw) - g.pl,
                            grp * g.ci + i) *
                         d[((b * g.oh + oy) * g.ow + ox) * g.outC() + grp * g.co + o];
            out[((ky * g.kw + kx) * g.ci + i) * g.outC() + grp * g.co + o] = sum;
          }
  return out;
}

void expectNear(const std::vector<float>& got, const std::vector<double>& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t e = 0; e < got.size(); ++e)
    ASSERT_NEAR(got[e], want[e], tolerance * std::max(1.0, std::fabs(want[e]))) << what << " element " << e;
}

// Grouped (3 groups of 2 in, 3 out), depthwise (5 groups of 1, 1), depth
// multiplier 2; dilated kernels, strides, padding, the input-gradient form.
const Geo kGeometries[] = {
    Geo{2, 6, 7, 2, 4, 5, 3, 3, 3, 1, 1, 1, 1, 3, 1, 1},           // grouped, same
    Geo{1, 9, 8, 1, 5, 4, 1, 3, 2, 1, 2, 0, 0, 5, 2, 3},           // depthwise, kernel dilated 2 x 3, stride 2
    Geo{2, 5, 5, 1, 3, 3, 2, 2, 2, 2, 2, 0, 0, 4},                 // depth multiplier 2, strided
    Geo{1, 3, 4, 3, 5, 7, 2, 3, 3, 1, 1, 1, 1, 2, 1, 1, 2, 2, true}  // grouped input-gradient form (dilated input, flipped)
};

TEST(ConvGroups, ForwardVerticesMatchDirectConvolution) {
  for (const Geo& g : kGeometries)
    for (const char* codelet : {"ConvPartialnx1", "ConvPartialHorizontalMac"}) {
      const auto in = pseudoRandom(g.b * g.ih * g.iw * g.inC(), 1), w = pseudoRandom(g.kh * g.kw * g.ci * g.outC(), 2);
      std::vector<Buffer> buffers{Buffer::of(in), Buffer::of(w),
                                  Buffer::of(std::vector<float>(g.b * g.oh * g.ow * g.outC(), 7))};
      run(codelet, buffers, g.params());
      expectNear(buffers[2].floats, forwardReference(g, in, w), 1e-5, codelet);
    }
}

// The VMAC (half activations, one output channel per group): half inputs, float partials.
TEST(ConvGroups, VerticalMacMatchesDirectConvolutionInHalf) {
  for (const Geo& g : {kGeometries[1], Geo{2, 6, 7, 1, 4, 5, 1, 3, 3, 1, 1, 1, 1, 8, 1, 2}}) {
    const auto in = Buffer::ofHalves(pseudoRandom(g.b * g.ih * g.iw * g.inC(), 3));
    const auto w = Buffer::ofHalves(pseudoRandom(g.kh * g.kw * g.ci * g.outC(), 4));
    std::vector<Buffer> buffers{in, w, Buffer::of(std::vector<float>(g.b * g.oh * g.ow * g.outC()))};
    auto p = g.params();
    p["convGroupsPerGroup"] = 4;
    run("ConvPartialVerticalMac<half,float>", buffers, p);
    expectNear(buffers[2].floats, forwardReference(g, in.halfValues(), w.halfValues()), 1e-5, "VMAC");
  }
}

TEST(ConvGroups, WeightUpdateVerticesMatchDirectGradient) {
  for (const Geo& base : {kGeometries[0], kGeometries[1], kGeometries[2]})
    for (const char* codelet : {"ConvWeightUpdatePartial", "ConvWeightUpdateHorizontalMac"}) {
      const Geo& g = base;
      const auto in = pseudoRandom(g.b * g.ih * g.iw * g.inC(), 5), d = pseudoRandom(g.b * g.oh * g.ow * g.outC(), 6);
      std::vector<Buffer> buffers{Buffer::of(in), Buffer::of(d), Buffer::of(std::vector<float>(g.kh * g.kw * g.ci * g.outC()))};
      run(codelet, buffers, g.params(true));
      expectNear(buffers[2].floats, weightUpdateReference(g, in, d), 1e-5, codelet);
    }
}

TEST(ConvGroups, VerticalMacRefusesMoreThanOneOutputChannelPerGroup) {
  const Geo g = kGeometries[0];  // 3 output channels per group
  try {
    cyclesOf("ConvPartialVerticalMac<half,float>", {g.b * g.ih * g.iw * g.inC(), g.kh * g.kw * g.ci * g.outC(),
                                                    g.b * g.oh * g.ow * g.outC()},
             g.params());
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("one output channel per conv group"), std::string::npos) << e.what();
  }
}

// ipu2, float: 1 x 2 x 3 outputs, 3 groups of 4 in and 2 out channels, 3x3.
// HMAC (PopLibs' planner form): one input group of 4, output groups of 1 (2).
//   Rows: 2 active rows over 6 workers: rowSplitFactor 6 / gcd(6, 2) = 3,
//   maxPartRows ceil(2 x 3 / 6) = 1: no whole row, 1 part row of
//   1 x (3 + 2) / 3 = 1 position: convSizes [1].
//   dot product of 4 floats: 3 + 0 + 3 + 1 = 7, + 4 / 2 vectors = 9.
//   worker per kernel position: 16 + 19 + 1 x (7 + 1 x 9) = 51;
//   inner = 6 x (9 x 51 + 16) = 2850;
//   outer = 58 + 6 x 9 + 6 x 0 + 3 x (23 + 1 x (15 + 2 x (10 + 2850))) = 17386;
//   zeroing 2 x 3 positions x 1 channel over 6 workers: 1 float each,
//   1 vector + 14 - 9 = 6, x 6 workers x (2 out groups x 3 conv groups) = 216. Total 17602.
TEST(ConvGroups, HorizontalMacCyclesArePoplinsEstimateByHand) {
  const Target t = Target::preset("ipu2");
  const Geo g{1, 4, 5, 4, 2, 3, 2, 3, 3, 1, 1, 0, 0, 3};
  const std::vector<std::uint64_t> sizes{4 * 5 * 12, 9 * 4 * 6, 6 * 6};
  EXPECT_EQ(cyclesOf("ConvPartialHorizontalMac", sizes, g.params(), t), 17602u);
  auto accumulate = g.params();
  accumulate["accumulate"] = 1;
  EXPECT_EQ(cyclesOf("ConvPartialHorizontalMac", sizes, accumulate, t), 17602u - 216u);
}

// ipu2, half activations, float partials: 1 x 2 x 3 outputs, 8 groups of
// one channel, 4 groups per vector, 3x3.
//   Rows: 6 positions over 6 workers: rowSplitFactor 1, one whole row each;
//   per kernel row an entry of 3 taps: convSizes [3, 3, 3].
//   worker (4 groups per group, float partials): 19 + 3 x (7 + 5 + (3 + 2 x 2 x 1)) = 76; inner = 6 x 76 = 456;
//   zeroing 4 + ceil(6 / 2) = 7; reduction 10 - 1 + (7 + 2 + 2 x 5) x ceil(6 / 6) / 4 = 13;
//   total 61 + 14 + 25 + 1 + (7 + 32 + 1 x (24 + 456) + 13) x (8 / 4) = 1165.
TEST(ConvGroups, VerticalMacCyclesArePoplinsEstimateByHand) {
  const Target t = Target::preset("ipu2");
  const Geo g{1, 4, 5, 1, 2, 3, 1, 3, 3, 1, 1, 0, 0, 8};
  auto p = g.params();
  p["convGroupsPerGroup"] = 4;
  EXPECT_EQ(cyclesOf("ConvPartialVerticalMac<half,float>", {4 * 5 * 8, 9 * 8, 6 * 8}, p, t), 1165u);
}

// The AMP in conv groups: ConvPartialnx1's hand example (test_codelet_conv.cpp:
// 1 x 2 x 3 outputs, 8 in and 16 out channels, 3x3; inner loop 3057) in 2 groups:
//   outer = 109 + 6 x 9 + 6 x 9 + 2 x (17 + 0 + 1) + (2 - 1) x 6 + 1 + 2 x (16 + (14 + (14 + 3057))) = 6462;
//   zeroing 78 per group x 2 = 156. Total 6618.
TEST(ConvGroups, AmpCyclesLoopOverConvGroupsByHand) {
  const Target t = Target::preset("ipu2");
  const Geo g{1, 4, 5, 8, 2, 3, 16, 3, 3, 1, 1, 0, 0, 2};
  EXPECT_EQ(cyclesOf("ConvPartialnx1", {4 * 5 * 16, 9 * 8 * 32, 6 * 32}, g.params(), t), 6618u);
}

// The weight update on the HMAC: the expanded convolution (batch 3 = the
// input channels, a 3x3 output field = the kernel, 1x1, 2 x 3 x 4 = 24 input
// channels, 4 output channels per group, 2 groups), float:
//   Rows: 3 x 3 = 9 over 6 workers: rowSplitFactor 2, maxPartRows 3: 1
//   whole row of 3 and 1 part row of (3 + 1) / 2 = 2: convSizes [3, 2];
//   dot of 24: 7 + 12 = 19; worker 16 + (19 + 3 x 26) + (19 + 2 x 26) = 184;
//   inner 6 x (184 + 16) = 1200; outer 58 + 54 + 2 x (23 + 15 + 4 x (10 + 1200)) = 9868;
//   zeroing 27 positions: 5 floats a worker, 3 vectors + 5 = 8, x 6 x 8 groups = 384. Total 10252.
TEST(ConvGroups, HorizontalMacWeightUpdateCyclesByHand) {
  const Target t = Target::preset("ipu2");
  const Geo g{2, 5, 6, 3, 3, 4, 4, 3, 3, 1, 1, 0, 0, 2};
  EXPECT_EQ(cyclesOf("ConvWeightUpdateHorizontalMac", {2 * 5 * 6 * 6, 2 * 3 * 4 * 8, 9 * 3 * 8}, g.params(true), t),
            10252u);
}

}  // namespace

}  // namespace test_codelet_conv_groups
