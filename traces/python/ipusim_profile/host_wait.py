"""How long the IPU waits for the host: the same definition as `ipusim report`
(profiler/analysis/host_wait_share.hpp, which forwards to DeviceActivity's
host wait, profiler/README.md "Host wait"):

- the window: the union of the captured runs' [start_cycle, end_cycle);
- the wait: the union of the StreamCopy Begin slices (category
  stream_copy_begin, on stream and bsp tracks) inside the window;
- the share: wait cycles over window cycles.

A test (traces/python/tests) checks that this prints the figure `ipusim
report` prints; when the C++ definition changes, this function follows.
"""

from dataclasses import dataclass

from .intervals import IntervalSet


@dataclass(frozen=True)
class HostWait:
    wait_cycles: int
    window_cycles: int
    clock_hz: float

    @property
    def share(self):
        return self.wait_cycles / self.window_cycles if self.window_cycles > 0 else 0.0

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
