"""Cycles per run, per program and IPU, and each step's phases per IPU: the
questions libpva users ask of an execution profile. All over the captured
detail (slices exist for captured runs only), in device cycles."""

import bisect
from dataclasses import dataclass

from .intervals import IntervalSet

# BSP slice categories (traces/SCHEMA.md): what an IPU does in a step.
BSP_CATEGORIES = ("compute", "exchange", "ipu_link", "collective", "sync", "streaming_memory")


@dataclass(frozen=True)
class ComputeSet:
    """An Execute program's compute set with its work and the variables (tensors) its debug origin made."""
    program_id: int
    name: str
    layer: str
    op: str
    vertices: int
    tiles: int
    flops: int
    variables: tuple      # tensor names
    variable_bytes: int


def run_cycles(profile, captured_only=False):
    """{run id: cycles from its start to its end} for every Engine::run (or the captured ones)."""
    return {r.id: r.duration for r in profile.runs() if r.captured or not captured_only}


def program_cycles(profile, run_id=None):
    """{(ipu, program id): cycles} summed over the program slices of each IPU's program track (a
    program's time includes the programs it runs), over the captured runs or one run."""
    result = {}
    for track in profile.tracks("program"):
        for s in profile.slices(track_id=track["id"], run_id=run_id):
            if s["program_id"] is None:
                continue
            key = (track["ipu"], s["program_id"])
            result[key] = result.get(key, 0) + s["dur"]
    return result


def step_phases(profile, run_id=None):
    """[(step, {ipu: {category: cycles}})] in time order: each captured step's BSP phases per IPU (compute,
    exchange, ipu_link, collective, sync, streaming_memory), clipped to the step."""
    steps = profile.steps(run_id)
    starts = [s.ts for s in steps]
    result = [(s, {}) for s in steps]
    for track in profile.tracks("bsp"):
        for s in profile.slices(track_id=track["id"], run_id=run_id):
            if s["category"] not in BSP_CATEGORIES:
                continue
            begin, end = s["ts"], s["ts"] + s["dur"]
            i = max(0, bisect.bisect_right(starts, begin) - 1)
            while i < len(steps) and steps[i].ts < end:
                cycles = IntervalSet([(begin, end)]).intersect(
                    IntervalSet([(steps[i].ts, steps[i].ts + steps[i].dur)])).length()
                if cycles > 0:
                    per_ipu = result[i][1].setdefault(track["ipu"], {})
                    per_ipu[s["category"]] = per_ipu.get(s["category"], 0) + cycles
                i += 1
    return result


def compute_sets(profile):
    """Every Execute program with a compute set (program_work): vertices, tiles, FLOPs per execution, and
    the variables attributed to it by debug origin (tensors of the same layer and op, as the operations
    summary attributes memory)."""
    programs = {p.id: p for p in profile.programs()}
    by_origin = {}
    for t in profile.tensors():
        by_origin.setdefault((t.layer, t.op), []).append(t)
    result = []
    for w in profile.program_work():
        p = programs.get(w.program_id)
        layer, op, name = (p.layer, p.op, p.name) if p is not None else ("", "", "")
        variables = by_origin.get((layer, op), []) if layer else []
        result.append(ComputeSet(w.program_id, name, layer, op, w.vertices, w.tiles, w.flops,
                                 tuple(t.name for t in variables), sum(t.bytes for t in variables)))
    return result
