"""Prints the operations summary of a profile, the table `ipusim report --ops`
prints (a test checks they are the same text): where the cycles of a training
step go, per layer and op, with FLOPs, tiles and memory.

    python3 traces/python/examples/operations.py report
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ipusim_profile  # noqa: E402


def number(value, decimals=0):
    return f"{value:.{decimals}f}"


def percent(fraction):
    return number(fraction * 100.0, 1) + "%"


def cell(text, width):
    """Right-aligned in its column, with at least one space before it (a figure wider than its column must not
    run into the one before it), as the C++ report prints it."""
    return text.rjust(width) if len(text) < width else " " + text


def print_operations(s):
    unit = "step" if s.by_step else "run"
    line = (f"Operations over {s.windows} captured {unit}{'' if s.windows == 1 else 's'} "
            f"({number(s.per_window(s.window_cycles))} cycles per {unit}; compute + exchange + sync "
            f"{number(s.per_window(s.busy_cycles))})")
    if s.peak_flops_per_second > 0:
        line += f"; AMP float peak {number(s.peak_flops_per_second / 1e12, 1)} TFLOP/s"
    print(line)
    if not s.rows:
        print(f"  no compute, exchange or sync in the captured {unit}s")
        return
    names = [f"{r.layer}/{r.op}" if r.layer else "(no debug info)" for r in s.rows]
    width = max([10] + [len(n) + 2 for n in names])
    print(f"  {'layer/op':<{width}}{'pass':<9}{'cycles/' + unit:>12}{'share':>8}{'compute':>11}{'exchange':>11}"
          f"{'sync':>9}{'FLOPs/' + unit:>13}{'GFLOP/s':>12}{'peak':>8}{'tiles':>7}{'memory':>12}")
    for name, r in zip(names, s.rows):
        rate = s.flops_per_second(r)
        peak = percent(rate / s.peak_flops_per_second) if s.peak_flops_per_second > 0 else "n/a"
        print(f"  {name:<{width}}{r.pass_:<9}{cell(number(s.per_window(r.cycles)), 12)}{cell(percent(s.share(r)), 8)}"
              f"{cell(number(s.per_window(r.compute)), 11)}{cell(number(s.per_window(r.exchange)), 11)}"
              f"{cell(number(s.per_window(r.sync)), 9)}{cell(number(s.per_window(r.flops)), 13)}"
              f"{cell(number(rate / 1e9, 2), 12)}{cell(peak, 8)}{cell(str(r.tiles), 7)}"
              f"{cell(str(r.memory_bytes) + ' B', 12)}")


def main(argv):
    if len(argv) != 2:
        print("usage: operations.py PROFILE_OR_REPORT_DIR", file=sys.stderr)
        return 2
    with ipusim_profile.open_profile(argv[1]) as profile:
        print_operations(profile.operations())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
