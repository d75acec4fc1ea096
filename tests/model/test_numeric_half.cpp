// model/numeric/half: float <-> IEEE binary16, round to nearest even.
// Checked on known bit patterns, tie cases, every one of the 65,536 halves,
// and against the compiler's own _Float16 conversion (GCC on x86-64 rounds
// float -> _Float16 to nearest even in software or F16C) on many floats.
#include "model/numeric/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace test_numeric_half {

using namespace ipusim::model::numeric;

namespace {

float floatOf(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t bitsOf(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

bool isNanHalf(HalfBits h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

}  // namespace

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(0.5f), 0x3800);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);                 // largest finite half
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);    // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);    // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff); // largest subnormal
  EXPECT_EQ(floatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(halfToFloat(0x3555), 0x1.554p-2f);  // ~1/3
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
}

TEST(Half, TiesRoundToEven) {
  // Between 1 and the next half (1 + 2^-10): the midpoint rounds down to the
  // even 1.0; the midpoint above 1 + 2^-10 rounds up to 1 + 2*2^-10.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above a midpoint rounds up, just below rounds down.
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + 3 * std::ldexp(1.0f, -11), 0.0f)), 0x3c01);
  // Subnormal ties: 0.5 and 1.5 units of 2^-24 go to 0 and 2 units.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(-std::ldexp(5.0f, -25)), 0x8002);
  // Rounding the largest subnormal's upper neighbour carries into the smallest normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1023.5f, -24)), 0x0400);
}

TEST(Half, OverflowAndUnderflow) {
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);  // below the midpoint to 2^16: stays finite
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // the midpoint: ties to even = inf
  EXPECT_EQ(floatToHalf(-1e6f), 0xfc00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(Half, NanStaysNan) {
  EXPECT_TRUE(isNanHalf(floatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(isNanHalf(floatToHalf(floatOf(0x7f800001u))));  // signalling NaN, payload only in the low bits
  EXPECT_TRUE(isNanHalf(floatToHalf(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (std::uint32_t h = 0; h <= 0xffffu; ++h) {
    const float f = halfToFloat(HalfBits(h));
    if (isNanHalf(HalfBits(h))) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(isNanHalf(floatToHalf(f))) << h;
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(Half, MatchesCompilerFloat16OnManyFloats) {
#ifndef __FLT16_MAX__
  GTEST_SKIP() << "this compiler has no _Float16 (clang before 15 on x86-64); the GCC builds run this test";
#else
  // Every sign and exponent, with pseudo-random fractions, plus the bit
  // patterns near each half's rounding boundary (fraction bits 0..13 set in
  // every combination of the low three around the tie).
  std::uint32_t state = 12345;
  std::uint64_t checked = 0;
  auto check = [&](std::uint32_t bits) {
    const float f = floatOf(bits);
    if (std::isnan(f)) return;
    const _Float16 reference = static_cast<_Float16>(f);
    std::uint16_t referenceBits;
    std::memcpy(&referenceBits, &reference, sizeof referenceBits);
    ASSERT_EQ(floatToHalf(f), referenceBits) << "float bits 0x" << std::hex << bits;
    ASSERT_EQ(bitsOf(halfToFloat(referenceBits)), bitsOf(static_cast<float>(reference)));
    ++checked;
  };
  for (int i = 0; i < 2'000'000; ++i) {
    state = state * 1664525u + 1013904223u;
    check(state);
  }
  for (std::uint32_t exponent = 0; exponent < 256; ++exponent)
    for (std::uint32_t low = 0; low < (1u << 14); low += 7)
      for (std::uint32_t high : {0u, 0x155u << 14, 0x1ffu << 14})
        check((exponent << 23) | high | low);
  EXPECT_GT(checked, 2'000'000u);
#endif
}

}  // namespace test_numeric_half
