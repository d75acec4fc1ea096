#!/usr/bin/env python3
"""Worked example: how long does the IPU wait for the host?

    python3 traces/python/examples/host_wait.py REPORT_DIR_OR_PROFILE

Prints the figure `ipusim report` prints on its "IPU waiting for the host"
line (the same share, cycles and seconds, and its parts), then the waits per
stream.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ipusim_profile  # noqa: E402


def format_seconds(seconds):
    """As profiler/analysis/text_format.cpp formats seconds."""
    magnitude = abs(seconds)
    if magnitude >= 1.0 or magnitude == 0.0:
        return f"{seconds:.3f} s"
    if magnitude >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.3f} us"


def format_cycles(profile, cycles):
    seconds = profile.seconds(cycles)
    return f"{cycles} cycles" + (f" ({format_seconds(seconds)})" if seconds is not None else "")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    try:
        with ipusim_profile.open_profile(argv[1]) as profile:
            w = profile.ipu_waiting_for_host()
            if w.window_cycles == 0:  # (as `ipusim report` says it)
                print("IPU waiting for the host: n/a (no run captured to measure it over, as with "
                      "autoReport.executionProfileProgramRunCount 0)")
                return 0
            print(f"IPU waiting for the host: {w.share * 100:.1f}% of the captured runs and the host time before "
                  f"each ({format_cycles(profile, w.waiting_cycles)} of {format_cycles(profile, w.window_cycles)}): "
                  f"outside Engine::run {format_cycles(profile, w.outside_run_cycles)}, StreamCopy Begin "
                  f"{format_cycles(profile, w.begin_cycles)}, host service {format_cycles(profile, w.host_service_cycles)}")
            # Where: the Begin slices per stream, from their parent StreamCopy slice.
            per_stream = {}
            names = {}
            for track in profile.tracks("stream"):
                for s in profile.slices(track_id=track["id"]):
                    if s["category"] == "stream_copy":
                        names[s["id"]] = s["name"].removeprefix("StreamCopy ")
                    elif s["category"] == "stream_copy_begin":
                        stream = names.get(s["parent_id"], track["name"])
                        count, cycles = per_stream.get(stream, (0, 0))
                        per_stream[stream] = (count + 1, cycles + s["dur"])
            for stream, (count, cycles) in sorted(per_stream.items(), key=lambda kv: -kv[1][1]):
                print(f"  {stream}: {count} copies waited {format_cycles(profile, cycles)}")
            steps = profile.steps()
            if steps:
                print(f"  {len(steps)} captured steps of {format_cycles(profile, sum(s.dur for s in steps) // len(steps))}"
                      " on average")
    except ipusim_profile.ProfileError as e:
        print(f"host_wait.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
