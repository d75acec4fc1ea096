"""Sums of figures read from a profile, checked as profiler/analysis/checked_sum.hpp checks them: the
C++ readers sum in 64 bits, so a sum beyond them is an error naming the column here too, never a figure
the C++ report would refuse."""

from .errors import ProfileError

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def add_checked(total, value, path, column):
    """total + value; `column` is "table.column" as SCHEMA.md names it."""
    result = total + value
    if not _INT64_MIN <= result <= _INT64_MAX:
        raise ProfileError(f"{path}: damaged profile: the sum of {column} overflows 64 bits "
                           "(values too large for what they measure)")
    return result
