"""The operations summary (`ipusim report --ops`): where the device cycles of
a training step go, per workload layer and op. A mirror of
profiler/analysis/operations_summary.hpp, whose comment holds the
definitions; tests compare to_json() with `ipusim report --ops --json`."""

import bisect
from dataclasses import dataclass, field

from .intervals import IntervalSet
from .checked_sum import add_checked
from .errors import ProfileError


@dataclass
class OperationRow:
    layer: str
    op: str
    pass_: str
    compute: int = 0
    exchange: int = 0
    sync: int = 0
    streaming_memory: int = 0     # its remote-buffer copies (offloaded optimizer state)
    flops: int = 0
    tiles: int = 0
    memory_bytes: int = 0
    program_ids: list = field(default_factory=list)

    @property
    def cycles(self):
        return self.compute + self.exchange + self.sync + self.streaming_memory


@dataclass
class OperationsSummary:
    profile: str
    clock_hz: float
    num_ipus: int
    windows: int
    by_step: bool
    window_cycles: int
    busy_cycles: int
    peak_flops_per_cycle: float
    rows: list

    def per_window(self, value):
        return value / self.windows if self.windows > 0 else 0.0

    def share(self, row):
        ipus = max(1, self.num_ipus)
        return row.cycles / (self.window_cycles * ipus) if self.window_cycles > 0 else 0.0

    def flops_per_second(self, row):
        if row.cycles <= 0 or self.clock_hz <= 0:
            return 0.0
        return row.flops / (row.cycles / self.clock_hz)

    @property
    def peak_flops_per_second(self):
        return self.peak_flops_per_cycle * self.clock_hz

    def to_json(self):
        """The dict `ipusim report --ops --json` prints."""
        peak = self.peak_flops_per_second
        return {
            "profile": self.profile, "windows": self.windows, "window_kind": "step" if self.by_step else "run",
            "window_cycles": self.window_cycles, "busy_cycles": self.busy_cycles, "peak_flops_per_second": peak,
            "operations": [{
                "layer": r.layer, "op": r.op, "pass": r.pass_, "cycles": r.cycles, "compute_cycles": r.compute,
                "exchange_cycles": r.exchange, "sync_cycles": r.sync,
                "streaming_memory_cycles": r.streaming_memory, "cycles_per_step": self.per_window(r.cycles),
                "share": self.share(r), "flops": r.flops, "flops_per_step": self.per_window(r.flops),
                "flops_per_second": self.flops_per_second(r),
                "peak_fraction": self.flops_per_second(r) / peak if peak > 0 else 0.0,
                "tiles": r.tiles, "memory_bytes": r.memory_bytes, "program_ids": list(r.program_ids),
            } for r in self.rows],
        }


def pass_of(layer, op):
    if layer == "training":
        return "step"
    if op.startswith("recompute/"):
        return "recompute"
    if op.endswith("_update"):
        return "update"
    if "grad" in op:
        return "gradient"
    return "forward"


def _origins(programs):
    """Each program's debug origin (layer, op): its own, else its nearest ancestor's."""
    by_id = {p.id: p for p in programs}
    origins = {}
    for p in programs:
        at, hops = p, 0
        while at is not None and not at.layer and hops < len(programs):
            at = by_id.get(at.parent_id)
            hops += 1
        origins[p.id] = (at.layer, at.op) if at is not None else ("", "")
    return origins


def _windows(profile):
    """The captured step slices, merged; the captured runs when there are none."""
    captured = {r.id: r.captured for r in profile.runs()}
    steps, count = IntervalSet(), 0
    for track in profile.tracks("engine"):
        for s in profile.slices(track_id=track["id"], category="step"):
            if captured.get(s["run_id"], False):
                steps.add(s["ts"], s["ts"] + s["dur"])
                count += 1
    if count:
        return steps.intervals(), count, True
    runs = [r for r in profile.runs() if r.captured]
    return IntervalSet((r.start_cycle, r.end_cycle) for r in runs).intervals(), len(runs), False


def _overlap(windows, ends, begin, end):
    total = 0
    for w_begin, w_end in windows[bisect.bisect_right(ends, begin):]:
        if w_begin >= end:
            break
        total += max(0, min(end, w_end) - max(begin, w_begin))
    return total


def _amp_peak_flops_per_cycle(profile):
    text = profile.meta.get("amp_float_macs_per_cycle", "")
    if not text:
        return 0.0
    try:
        macs = float(text)
    except ValueError:
        macs = 0.0
    if not (0 < macs <= 1e6):
        raise ProfileError(f"{profile.path}: meta 'amp_float_macs_per_cycle' is '{text}', "
                           "expected a positive number of MACs per tile per cycle")
    return 2.0 * macs * (profile.tiles_per_ipu or 0) * max(1, profile.num_ipus or 0)


def _sort_key(row):
    return (-row.cycles, row.layer, row.op)


def summarize_operations(profile):
    windows, count, by_step = _windows(profile)
    ends = [e for _, e in windows]
    origins = _origins(profile.programs())
    work = {w.program_id: w for w in profile.program_work()}
    phase_kind = {p["id"]: p["kind"] for p in profile.static_phases()}
    rows = {}

    def row_for(program_id):
        key = origins.get(program_id, ("", ""))
        row = rows.get(key)
        if row is None:
            row = rows[key] = OperationRow(key[0], key[1], pass_of(*key))
        if program_id is not None and program_id >= 0 and program_id not in row.program_ids:
            row.program_ids.append(program_id)
        return row

    # An Execute's FLOPs count once per execution: on the first IPU, in IPU
    # order, whose bsp track shows the program's compute (as the C++
    # summary: replicas and a compute set over several IPUs once, a sharded
    # or pipelined model's later IPUs counted).
    bsp = sorted(profile.tracks("bsp"), key=lambda t: t["ipu"])
    flops_ipu = {}
    busy = 0
    for track in bsp:
        for s in profile.slices(track_id=track["id"]):
            category = s["category"]
            if category == "compute":
                bucket = "compute"
            elif category in ("exchange", "ipu_link"):
                bucket = "exchange"
            elif category == "sync":
                bucket = "sync"
            elif category == "streaming_memory":
                bucket = "streaming_memory"
            elif category == "collective":
                if s["phase_id"] is None:
                    bucket = "sync"
                else:
                    bucket = "compute" if phase_kind.get(s["phase_id"]) == "compute" else "exchange"
            else:
                continue
            cycles = _overlap(windows, ends, s["ts"], s["ts"] + s["dur"])
            if cycles <= 0:
                continue
            row = row_for(s["program_id"])
            setattr(row, bucket, add_checked(getattr(row, bucket), cycles, profile.path, "slices.dur"))
            busy = add_checked(busy, cycles, profile.path, "slices.dur")
            if (category == "compute" and flops_ipu.setdefault(s["program_id"], track["ipu"]) == track["ipu"]
                    and s["program_id"] in work):
                w = work[s["program_id"]]
                row.flops = add_checked(row.flops, w.flops, profile.path, "program_work.flops")
                row.tiles = max(row.tiles, w.tiles)
    for tensor in profile.tensors():
        row = rows.get((tensor.layer, tensor.op))
        if row is not None:
            row.memory_bytes = add_checked(row.memory_bytes, tensor.bytes, profile.path, "tensors.bytes")
    ordered = sorted(rows.values(), key=_sort_key)
    window_cycles = 0
    for b, e in windows:
        window_cycles = add_checked(window_cycles, e - b, profile.path, "slices.dur")
    return OperationsSummary(profile.path, profile.clock_hz or 0.0, profile.num_ipus or 0, count, by_step,
                             window_cycles, busy, _amp_peak_flops_per_cycle(profile), ordered)
