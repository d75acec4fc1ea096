"""The Profile object: one open profile.pop, read-only."""

import os
import sqlite3
from dataclasses import dataclass

from .checked_db import CheckedConnection, refusal
from .errors import ProfileError
from .rules import check_meta_value
from .verification import SUPPORTED_SCHEMA_VERSION, connect, decode_counter_summary, profile_file, verify  # noqa: F401


@dataclass(frozen=True)
class Run:
    id: int
    entry_point: int
    name: str
    start_cycle: int
    end_cycle: int
    steps: int
    captured: bool

    @property
    def duration(self):
        return self.end_cycle - self.start_cycle


@dataclass(frozen=True)
class Step:
    run_id: int
    name: str
    ts: int
    dur: int


@dataclass(frozen=True)
class Program:
    id: int
    parent_id: object  # int or None
    kind: str
    name: str
    layer: str
    op: str
    ordinal: int


@dataclass(frozen=True)
class Phase:
    """One BSP phase on one IPU: compute, exchange, sync, stream copy, IPU link (point to point), collective."""
    ipu: int
    run_id: object
    ts: int
    dur: int
    category: str
    name: str
    program_id: object


@dataclass(frozen=True)
class TilePhase:
    """A phase's busy time on one tile (the tile_slices view)."""
    run_id: object
    ipu: int
    tile: int
    ts: int
    dur: int
    category: str
    name: str


@dataclass(frozen=True)
class TilePeak:
    """A tile's memory figure (tile_memory_peak): what must fit in its memory."""
    ipu: int
    tile: int
    peak_bytes: int
    always_live_bytes: int
    not_always_live_peak_bytes: int


@dataclass(frozen=True)
class Counter:
    ts: int
    value: float


@dataclass(frozen=True)
class CounterSummary:
    """A counter track's values in equal buckets (counter_summary, SCHEMA.md): per bucket the number of
    values, the ts of the first and last, and the least, greatest, first and last value (0 when empty)."""
    value_count: int
    origin_ts: int
    bucket_cycles: int
    counts: tuple
    first_ts: tuple
    last_ts: tuple
    min: tuple
    max: tuple
    first: tuple
    last: tuple


@dataclass(frozen=True)
class TileMemory:
    ipu: int
    tile: int
    category: str
    always_live: bool
    bytes: int


def open_profile(path):
    """Opens a profile file, or the profile.pop of a report directory, after the checks of SCHEMA.md
    "Verifying a profile" (verification.py): ProfileError names the file and the first failed check."""
    return Profile(profile_file(path))


class Profile:
    def __init__(self, path):
        self.path = os.fspath(path)
        db = connect(self.path)
        try:
            self._tables, self.meta = verify(db, self.path)
        except sqlite3.Error as e:  # what the checks do not word themselves (a column a damaged table lacks)
            db.close()
            raise refusal(self.path, e) from None
        except BaseException:
            db.close()
            raise
        self._db = CheckedConnection(db, self.path)

    def _counter_summary_row(self, row):
        arrays = decode_counter_summary(self.path, row)
        return CounterSummary(row["value_count"], row["origin_ts"], row["bucket_cycles"], arrays["bucket_values"],
                              arrays["first_ts"], arrays["last_ts"], arrays["value_min"], arrays["value_max"],
                              arrays["value_first"], arrays["value_last"])

    def counter_summary(self, name):
        """The summary of the counter track `name` (CounterSummary), or None when it has none (at most 65,536
        values, or a profile written before schema 4)."""
        if "counter_summary" not in self._tables:
            return None
        row = self._db.execute("SELECT s.* FROM counter_summary AS s JOIN tracks AS t ON t.id = s.track_id "
                               "WHERE t.kind = 'counter' AND t.name = ?", (name,)).fetchone()
        return self._counter_summary_row(row) if row else None

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Target facts from meta.
    def _meta_number(self, key, kind):
        """meta.key checked against profile_rules.json (as the C++ readers check it); 0 when absent."""
        text = self.meta.get(key)
        return kind(0) if text is None else kind(check_meta_value(self.path, key, text))

    @property
    def clock_hz(self):
        return self._meta_number("clock_hz", float)

    @property
    def num_ipus(self):
        return self._meta_number("num_ipus", int)

    @property
    def tiles_per_ipu(self):
        return self._meta_number("tiles_per_ipu", int)

    @property
    def tile_memory_bytes(self):
        return self._meta_number("tile_memory_bytes", int)

    def seconds(self, cycles):
        """Cycles to seconds with the profile's clock (None when it is unknown)."""
        return cycles / self.clock_hz if self.clock_hz > 0 else None

    # Tables.
    def runs(self):
        rows = self._db.execute(
            "SELECT id, entry_point, CAST(name AS TEXT) AS name, start_cycle, end_cycle, steps, captured FROM runs ORDER BY id")
        return [Run(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]

    def _select(self, sql, conditions, order):
        """Runs `sql` with the conditions (SQL with one ?, value) whose value is not None."""
        used = [(c, v) for c, v in conditions if v is not None]
        if used:
            sql += " WHERE " + " AND ".join(c for c, _ in used)
        return self._db.execute(f"{sql} ORDER BY {order}", [v for _, v in used])

    def tracks(self, kind=None):
        rows = self._select("SELECT id, parent_id, CAST(kind AS TEXT) AS kind, CAST(name AS TEXT) AS name, ipu, tile, sort_order FROM tracks",
                            [("kind = ?", kind)], "sort_order, id")
        return [dict(r) for r in rows]

    def slices(self, track_id=None, category=None, run_id=None, begin=None, end=None):
        """Slices as dicts (columns of traces/SCHEMA.md), in (ts, depth, id) order,
        filtered by track, category, run and overlap with [begin, end)."""
        rows = self._select(
            "SELECT id, track_id, run_id, ts, dur, CAST(name AS TEXT) AS name, CAST(category AS TEXT) AS category, depth, parent_id, program_id, phase_id, bytes "
            "FROM slices",
            [("track_id = ?", track_id), ("category = ?", category), ("run_id = ?", run_id), ("ts < ?", end),
             ("ts + dur > ?", begin)],
            "ts, depth, id")
        for r in rows:
            yield dict(r)

    def steps(self, run_id=None):
        """Training steps of the captured runs (step slices on the engine track)."""
        result = []
        for track in self.tracks("engine"):
            for s in self.slices(track_id=track["id"], category="step", run_id=run_id):
                result.append(Step(s["run_id"], s["name"], s["ts"], s["dur"]))
        return sorted(result, key=lambda s: s.ts)

    def programs(self):
        rows = self._db.execute("SELECT id, parent_id, CAST(kind AS TEXT) AS kind, CAST(name AS TEXT) AS name, CAST(layer AS TEXT) AS layer, CAST(op AS TEXT) AS op, ordinal FROM programs ORDER BY id")
        return [Program(*tuple(r)) for r in rows]

    def phases(self, ipu=None, run_id=None):
        """BSP phases per IPU (the bsp tracks), in time order."""
        result = []
        for track in self.tracks("bsp"):
            if ipu is not None and track["ipu"] != ipu:
                continue
            for s in self.slices(track_id=track["id"], run_id=run_id):
                result.append(Phase(track["ipu"], s["run_id"], s["ts"], s["dur"], s["category"], s["name"],
                                    s["program_id"]))
        return sorted(result, key=lambda p: (p.ts, p.ipu))

    def tile_phases(self, tile=None, run_id=None):
        """Per-tile busy time of each phase execution (needs tile-level instrumentation)."""
        rows = self._select("SELECT run_id, ipu, tile, ts, dur, CAST(category AS TEXT) AS category, CAST(name AS TEXT) AS name FROM tile_slices",
                            [("tile = ?", tile), ("run_id = ?", run_id)], "ts, tile")
        return [TilePhase(*tuple(r)) for r in rows]

    def counters(self, name):
        """A counter's values (e.g. "loss") in time order; empty when there is no such counter."""
        rows = self._db.execute(
            "SELECT c.ts, c.value FROM counters AS c JOIN tracks AS t ON t.id = c.track_id "
            "WHERE t.kind = 'counter' AND t.name = ? ORDER BY c.ts", (name,))
        # NaN is stored as the text 'NaN' (traces/counter_value.hpp); check 6 refused any other text.
        return [Counter(r[0], float("nan") if r[1] == "NaN" else float(r[1])) for r in rows]

    def tile_memory(self):
        rows = self._db.execute("SELECT ipu, tile, CAST(category AS TEXT) AS category, always_live, bytes FROM tile_memory ORDER BY ipu, tile")
        return [TileMemory(r[0], r[1], r[2], bool(r[3]), r[4]) for r in rows]

    def tile_peaks(self):
        """The per-tile memory figure (tile_memory_peak); empty for profiles written before it existed."""
        if "tile_memory_peak" not in self._tables:
            return []
        rows = self._db.execute("SELECT ipu, tile, peak_bytes, always_live_bytes, not_always_live_peak_bytes "
                                "FROM tile_memory_peak ORDER BY ipu, tile")
        return [TilePeak(*tuple(r)) for r in rows]

    def memory_per_tile(self):
        """{tile: {category: bytes}} from tile_memory: what lives on each tile, by category. Not-always-live
        tensors share bytes, so a tile's categories can add up to more than its peak (tile_peaks())."""
        result = {}
        for m in self.tile_memory():
            by_category = result.setdefault(m.tile, {})
            by_category[m.category] = by_category.get(m.category, 0) + m.bytes
        return result

    # Compile-time tables (compile_rows.py); empty lists for profiles written before them.
    def has_table(self, name):
        return name in self._tables

    def _rows(self, table, reader):
        return reader(self._db) if table in self._tables else []

    def program_work(self):
        from .compile_rows import read_program_work
        return self._rows("program_work", read_program_work)

    def tensors(self):
        from .compile_rows import read_tensors
        return self._rows("tensors", read_tensors)

    def program_order(self):
        from .compile_rows import read_program_order
        return self._rows("program_order", read_program_order)

    def tensor_lifetimes(self):
        from .compile_rows import read_tensor_lifetimes
        return self._rows("tensor_lifetimes", read_tensor_lifetimes)

    def static_phases(self):
        """The phases table as dicts: each statically timed compute set execution or exchange."""
        if "phases" not in self._tables:
            return []
        return [dict(r) for r in self._db.execute("SELECT id, CAST(kind AS TEXT) AS kind, CAST(name AS TEXT) AS name, program_id, bytes FROM phases ORDER BY id")]

    # Figures.
    def operations(self):
        """The operations summary, as `ipusim report --ops` (operations.py)."""
        from .operations import summarize_operations
        return summarize_operations(self)

    def liveness(self, entry_point=None):
        """Liveness by program step, as `ipusim report --liveness` (liveness.py)."""
        from .liveness import summarize_liveness
        return summarize_liveness(self, entry_point)

    def run_cycles(self, captured_only=False):
        from .cycles import run_cycles
        return run_cycles(self, captured_only)

    def program_cycles(self, run_id=None):
        from .cycles import program_cycles
        return program_cycles(self, run_id)

    def step_phases(self, run_id=None):
        from .cycles import step_phases
        return step_phases(self, run_id)

    def compute_sets(self):
        from .cycles import compute_sets
        return compute_sets(self)

    def host_wait(self):
        """How long the IPU waits for the host, as `ipusim report` defines it (see host_wait.py)."""
        from .host_wait import measure_host_wait
        return measure_host_wait(self)

    def ipu_waiting_for_host(self, windows=None):
        """The host accounting breakdown (see host_wait.py): time outside Engine::run, StreamCopy
        Begin and host service, over the captured runs with the host time before each."""
        from .host_wait import measure_ipu_waiting_for_host
        return measure_ipu_waiting_for_host(self, windows)
