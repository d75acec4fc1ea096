"""How long the IPU waits for the host, as `ipusim report` defines it.

- ipu_waiting_for_host(): the report's "IPU waiting for the host"
  (profiler/analysis/host_wait.hpp): time outside Engine::run, StreamCopy
  Begin and host service, over each captured run with the host time before it.
- host_wait(): StreamCopy Begin alone (the report's stream_copy_begin_cycles,
  profiler/analysis/device_activity.hpp): the union of Begin slices on stream
  and bsp tracks inside the captured runs, over the captured runs' time.

Tests (traces/python/tests) check both against `ipusim report --json`; when
the C++ definitions change, these follow.
"""

import math
from dataclasses import dataclass

from .intervals import IntervalSet


@dataclass(frozen=True)
class HostWait:
    wait_cycles: int
    window_cycles: int
    clock_hz: float

    @property
    def share(self):
        """NaN when nothing was measured (no captured run), as the IPU waiting for the host's share."""
        return self.wait_cycles / self.window_cycles if self.window_cycles > 0 else math.nan

    @property
    def wait_seconds(self):
        return self.wait_cycles / self.clock_hz if self.clock_hz > 0 else None


def measure_host_wait(profile):
    window = IntervalSet((r.start_cycle, r.end_cycle) for r in profile.runs() if r.captured)
    wait = IntervalSet()
    for track in profile.tracks():
        if track["kind"] not in ("stream", "bsp"):
            continue
        for s in profile.slices(track_id=track["id"], category="stream_copy_begin"):
            wait.add(s["ts"], s["ts"] + s["dur"])
    return HostWait(wait.intersect(window).length(), window.length(), profile.clock_hz)


@dataclass(frozen=True)
class IpuWaitingForHost:
    """The host accounting breakdown: the device waits for the host during the
    union of (a) time outside every Engine::run, (b) StreamCopy Begin and
    (c) StreamCopy host service (category stream_copy_host_service), inside
    windows made of each captured run with the host time before it (from the
    end of the previous run, or cycle 0). The host-link transfer (Mid) is not
    waiting. Profiles written before host service was recorded apart have no
    (c) slices: their service time is inside Mid and not counted here."""
    window_cycles: int
    outside_run_cycles: int
    begin_cycles: int
    host_service_cycles: int
    waiting_cycles: int

    @property
    def share(self):
        """NaN when nothing was measured (no captured run: autoReport.executionProfileProgramRunCount 0), as
        profiler/analysis/host_wait.hpp's share(), which `report --json` gives as null (it gave 0.0)."""
        return self.waiting_cycles / self.window_cycles if self.window_cycles > 0 else math.nan


def captured_run_cycles(runs):
    """Each captured run with the host time before it: [end of the previous run (0 first), end of the run)."""
    windows, previous_end = IntervalSet(), 0
    for run in sorted(runs, key=lambda r: r.start_cycle):
        if run.captured:
            windows.add(min(previous_end, run.start_cycle), run.end_cycle)
        previous_end = max(previous_end, run.end_cycle)
    return windows


def measure_ipu_waiting_for_host(profile, windows=None):
    runs = profile.runs()
    windows = captured_run_cycles(runs) if windows is None else windows
    outside = windows.subtract(IntervalSet((r.start_cycle, r.end_cycle) for r in runs))
    begin, service = IntervalSet(), IntervalSet()
    for track in profile.tracks("stream"):
        for s in profile.slices(track_id=track["id"]):
            if s["category"] == "stream_copy_begin":
                begin.add(s["ts"], s["ts"] + s["dur"])
            elif s["category"] == "stream_copy_host_service":
                service.add(s["ts"], s["ts"] + s["dur"])
    begin_in = begin.intersect(windows).subtract(outside)
    service_in = service.intersect(windows).subtract(outside)
    waiting = outside.union(begin_in).union(service_in)
    return IpuWaitingForHost(windows.length(), outside.length(), begin_in.length(), service_in.length(),
                             waiting.length())
