"""Read ipusim profiles (profile.pop) from Python, in the spirit of libpva.

Pure Python over the SQLite schema documented in traces/SCHEMA.md: no build
step, only the standard library's sqlite3.

    import ipusim_profile
    profile = ipusim_profile.open_profile("report")   # a directory or a profile.pop
    for run in profile.runs():
        print(run.id, run.duration, run.steps)
    print(profile.host_wait())
"""

from .profile import (
    Counter,
    CounterSummary,
    Phase,
    Profile,
    ProfileError,
    Program,
    Run,
    Step,
    TileMemory,
    TilePeak,
    TilePhase,
    open_profile,
)
from .intervals import IntervalSet
from .host_wait import HostWait
from .compile_rows import ProgramStep, ProgramWork, Tensor, TensorLifetime
from .cycles import ComputeSet
from .liveness import LivenessSummary
from .operations import OperationsSummary

__all__ = [
    "ComputeSet",
    "Counter",
    "CounterSummary",
    "HostWait",
    "IntervalSet",
    "LivenessSummary",
    "OperationsSummary",
    "Phase",
    "Profile",
    "ProfileError",
    "Program",
    "ProgramStep",
    "ProgramWork",
    "Run",
    "Step",
    "Tensor",
    "TensorLifetime",
    "TileMemory",
    "TilePeak",
    "TilePhase",
    "open_profile",
]
