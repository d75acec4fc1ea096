#pragma once
// Sums of figures read from a profile. The reader bounds each value (cycles
// and bytes at most 2^62), but a damaged file of many such rows can still
// overflow a sum: that is an error naming the file, the table and the
// column, never a wrapped (negative) figure. Every sum over rows in
// profiler/analysis goes through addChecked.
#include "traces/profile_error.hpp"

#include <cstdint>
#include <string>

namespace ipusim::profiler::analysis {

// sum += value; `column` is "table.column" as SCHEMA.md names it.
inline void addChecked(std::int64_t& sum, std::int64_t value, const std::string& file, const char* column) {
  if (__builtin_add_overflow(sum, value, &sum))
    throw traces::ProfileError(file + ": damaged profile: the sum of " + column +
                               " overflows 64 bits (values too large for what they measure)");
}

}  // namespace ipusim::profiler::analysis
