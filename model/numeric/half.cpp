#include "model/numeric/half.hpp"

#include <cstring>

namespace ipusim::model::numeric {
namespace {

std::uint32_t bitsOf(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// (mantissa >> shift) rounded to nearest, ties to even.
std::uint32_t shiftRightRoundEven(std::uint32_t mantissa, unsigned shift) {
  const std::uint32_t kept = mantissa >> shift;
  const std::uint32_t remainder = mantissa & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (kept & 1u))) return kept + 1;
  return kept;
}

}  // namespace

HalfBits floatToHalf(float value) {
  const std::uint32_t f = bitsOf(value);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t exponent = (f >> 23) & 0xffu;
  const std::uint32_t fraction = f & 0x7fffffu;

  if (exponent == 0xffu) {  // inf or NaN
    if (fraction == 0) return HalfBits(sign | 0x7c00u);
    return HalfBits(sign | 0x7e00u | (fraction >> 13));  // quiet NaN, top payload bits
  }
  // Unbiased exponent e: value = 1.fraction * 2^e for normal floats.
  const int e = int(exponent) - 127;
  if (e >= 16) return HalfBits(sign | 0x7c00u);  // >= 2^16: beyond any half, even after rounding
  if (e >= -14) {
    // Normal half: keep 10 of the 23 fraction bits. A carry out of the
    // fraction bumps the exponent, and past 2^15 * (2 - 2^-11) it reaches the
    // inf pattern 0x7c00 by itself: the addition below does both.
    const std::uint32_t rounded = shiftRightRoundEven(fraction, 13);
    return HalfBits(sign + ((std::uint32_t(e + 15) << 10) + rounded));
  }
  // Subnormal half (or zero): value / 2^-24 rounded to an integer in [0, 1024];
  // 1024 is the smallest normal, which the bit pattern expresses directly.
  if (e < -25) return HalfBits(sign);  // below half the smallest subnormal: +-0
  const std::uint32_t mantissa = exponent == 0 ? fraction : (fraction | 0x800000u);  // 24 bits: 1.f * 2^23
  // value = mantissa * 2^(e - 23); in units of 2^-24: mantissa * 2^(e + 1), e + 1 < -13.
  const unsigned shift = unsigned(-(e + 1));  // in [14, 24]
  return HalfBits(sign | shiftRightRoundEven(mantissa, shift));
}

float halfToFloat(HalfBits bits) {
  const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t fraction = bits & 0x3ffu;
  if (exponent == 0x1fu) return floatOf(sign | 0x7f800000u | (fraction << 13));  // inf / NaN
  if (exponent != 0) return floatOf(sign | ((exponent + 112) << 23) | (fraction << 13));
  if (fraction == 0) return floatOf(sign);
  // Subnormal: fraction * 2^-24, exact in float.
  const float magnitude = float(fraction) * floatOf(0x33800000u);  // 2^-24
  return sign ? -magnitude : magnitude;
}

}  // namespace ipusim::model::numeric
