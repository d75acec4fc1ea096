#pragma once
// IEEE 754 binary16 ("half", Poplar's HALF): 1 sign bit, 5 exponent bits
// (bias 15), 10 fraction bits, stored as its 16-bit pattern. Conversions are
// bit-exact and portable (no compiler half type needed):
//   floatToHalf — round to nearest, ties to even (the IPU's default rounding
//                 for f32->f16 conversions); values beyond the largest finite
//                 half (65504) after rounding become +-inf; results below the
//                 smallest normal (2^-14) are subnormal, rounded the same way,
//                 down to +-0; a NaN stays a NaN (quiet, payload's top bits kept).
//   halfToFloat — exact (every half is a float).
#include <cstdint>

namespace ipusim::model::numeric {

using HalfBits = std::uint16_t;

HalfBits floatToHalf(float value);
float halfToFloat(HalfBits bits);

// value rounded to the nearest half and back: what a half store keeps.
inline float roundToHalf(float value) { return halfToFloat(floatToHalf(value)); }

}  // namespace ipusim::model::numeric
