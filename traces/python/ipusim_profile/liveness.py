"""Liveness by program step (`ipusim report --liveness`): per program step of
an entry point, the bytes always live and the bytes of not-always-live tensors
live there, the peak and what is live at it. A mirror of
profiler/analysis/liveness_summary.hpp, whose comment holds the definitions;
tests compare to_json() with `ipusim report --liveness --json`."""

from collections import Counter as _Tally
from dataclasses import dataclass, field

from .checked_sum import add_checked


@dataclass
class LivenessStep:
    position: int
    program_id: int
    kind: str = ""
    name: str = ""
    layer: str = ""
    op: str = ""
    not_always_live_bytes: int = 0
    live_tensors: int = 0


@dataclass(frozen=True)
class LiveTensor:
    id: int
    name: str
    category: str
    bytes: int
    first_position: int
    last_position: int


@dataclass
class LivenessSummary:
    profile: str
    available: bool = False
    entry_point: int = 0
    entry_name: str = ""
    always_live_bytes: int = 0
    steps: list = field(default_factory=list)
    peak_position: int = -1
    live_at_peak: list = field(default_factory=list)
    always_live_by_category: list = field(default_factory=list)  # (category, bytes), largest first

    @property
    def peak_bytes(self):
        if self.peak_position < 0:
            return self.always_live_bytes
        return self.always_live_bytes + self.steps[self.peak_position].not_always_live_bytes

    def to_json(self):
        """The dict `ipusim report --liveness --json` prints."""
        return {
            "profile": self.profile, "available": self.available, "entry_point": self.entry_point,
            "entry_name": self.entry_name, "always_live_bytes": self.always_live_bytes,
            "always_live_by_category": dict(self.always_live_by_category),
            "peak_position": None if self.peak_position < 0 else self.peak_position, "peak_bytes": self.peak_bytes,
            "live_at_peak": [{"id": t.id, "name": t.name, "category": t.category, "bytes": t.bytes,
                              "first_position": t.first_position, "last_position": t.last_position}
                             for t in self.live_at_peak],
            "steps": [{"position": s.position, "program_id": s.program_id, "kind": s.kind, "name": s.name,
                       "layer": s.layer, "op": s.op, "always_live_bytes": self.always_live_bytes,
                       "not_always_live_bytes": s.not_always_live_bytes, "live_tensors": s.live_tensors}
                      for s in self.steps],
        }


def _busiest_entry_point(runs):
    calls = _Tally(r.entry_point for r in runs)
    best, best_calls = 0, -1
    for entry in sorted(calls):
        if calls[entry] > best_calls:
            best, best_calls = entry, calls[entry]
    return best


def summarize_liveness(profile, entry_point=None):
    """`entry_point` None: the one with the most Engine::run calls (the training loop)."""
    s = LivenessSummary(profile.path)
    if not profile.has_table("program_order"):
        return s
    s.available = True
    order = profile.program_order()
    runs = profile.runs()
    if entry_point is None:
        entry_point = _busiest_entry_point(runs)
    elif not any(o.entry_point == entry_point for o in order):
        raise ValueError(f"{profile.path}: entry point {entry_point} has no program steps in program_order")
    s.entry_point = entry_point
    for r in runs:
        if r.entry_point == entry_point:
            s.entry_name = r.name
    programs = {p.id: p for p in profile.programs()}
    for o in order:
        if o.entry_point != entry_point:
            continue
        step = LivenessStep(o.position, o.program_id)
        p = programs.get(o.program_id)
        if p is not None:
            step.kind, step.name, step.layer, step.op = p.kind, p.name, p.layer, p.op
        s.steps.append(step)

    tensors, by_category = {}, {}
    for t in profile.tensors():
        if t.always_live:
            s.always_live_bytes = add_checked(s.always_live_bytes, t.bytes, profile.path, "tensors.bytes")
            by_category[t.category] = add_checked(by_category.get(t.category, 0), t.bytes, profile.path,
                                                  "tensors.bytes")
        tensors[t.id] = t
    s.always_live_by_category = sorted(sorted(by_category.items()), key=lambda kv: -kv[1])

    n = len(s.steps)
    bytes_delta, count_delta = [0] * (n + 1), [0] * (n + 1)
    not_always_live = []
    for lifetime in profile.tensor_lifetimes():
        if lifetime.entry_point != entry_point:
            continue
        t = tensors.get(lifetime.tensor_id)
        if t is None or t.always_live or n == 0:
            continue
        first = min(max(lifetime.first_position, 0), n)
        last = min(max(lifetime.last_position, first), max(n - 1, 0))
        bytes_delta[first] = add_checked(bytes_delta[first], t.bytes, profile.path, "tensors.bytes")
        bytes_delta[last + 1] = add_checked(bytes_delta[last + 1], -t.bytes, profile.path, "tensors.bytes")
        count_delta[first] += 1
        count_delta[last + 1] -= 1
        not_always_live.append(LiveTensor(t.id, t.name, t.category, t.bytes, first, last))
    live_bytes, count, peak = 0, 0, -1
    for p in range(n):
        live_bytes = add_checked(live_bytes, bytes_delta[p], profile.path, "tensors.bytes")
        count += count_delta[p]
        s.steps[p].not_always_live_bytes = live_bytes
        s.steps[p].live_tensors = count
        if peak < 0 or live_bytes > s.steps[peak].not_always_live_bytes:
            peak = p
    s.peak_position = peak
    if peak >= 0:  # so that peak_bytes, always live + the peak's, is a sum the C++ report can make too
        add_checked(s.always_live_bytes, s.steps[peak].not_always_live_bytes, profile.path, "tensors.bytes")
    s.live_at_peak = sorted((t for t in not_always_live if t.first_position <= peak <= t.last_position),
                            key=lambda t: -t.bytes)
    return s
