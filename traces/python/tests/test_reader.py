"""Tests of the Python profile reader. Run by ctest (tests/CMakeLists.txt):
IPUSIM_TEST_PROFILE names a report directory written by `ipusim run`
(the tutorial workload with feeds, 40 steps of real data) and IPUSIM_BINARY the
ipusim executable, whose `report --json` the reader must agree with."""

import json
import math
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import ipusim_profile  # noqa: E402
from ipusim_profile import IntervalSet, ProfileError  # noqa: E402

PROFILE = os.environ.get("IPUSIM_TEST_PROFILE", "")
BINARY = os.environ.get("IPUSIM_BINARY", "")
EXAMPLE = os.path.join(HERE, "..", "examples", "host_wait.py")


class IntervalSetTest(unittest.TestCase):
    def test_union_and_intersection(self):
        s = IntervalSet([(0, 10), (5, 20), (30, 40)])
        self.assertEqual(s.intervals(), [(0, 20), (30, 40)])
        self.assertEqual(s.length(), 30)
        self.assertEqual(s.intersect(IntervalSet([(15, 35)])).intervals(), [(15, 20), (30, 35)])

    def test_empty_intervals_are_ignored(self):
        self.assertEqual(IntervalSet([(5, 5), (7, 3)]).length(), 0)

    def test_subtract(self):
        s = IntervalSet([(0, 10), (20, 30)]).subtract(IntervalSet([(5, 22), (25, 26)]))
        self.assertEqual(s.intervals(), [(0, 5), (22, 25), (26, 30)])


def write_host_accounting_profile(path):
    """Runs [100, 200) captured, [250, 400) captured, [400, 500) not; on the
    stream track Begin [100, 120) and [250, 300), host service [130, 150),
    transfer (Mid) [150, 160)."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1'), ('complete', '1'), ('clock_hz', '1000000000');
        CREATE TABLE runs(id INTEGER PRIMARY KEY, entry_point INTEGER, name TEXT, start_cycle INTEGER,
                          end_cycle INTEGER, steps INTEGER, captured INTEGER);
        INSERT INTO runs VALUES (0, 0, 'train', 100, 200, 1, 1), (1, 0, 'train', 250, 400, 1, 1),
                                (2, 0, 'train', 400, 500, 1, 0);
        CREATE TABLE tracks(id INTEGER PRIMARY KEY, parent_id INTEGER, kind TEXT, name TEXT, ipu INTEGER,
                            tile INTEGER, sort_order INTEGER);
        INSERT INTO tracks VALUES (1, NULL, 'stream', 'StreamCopy', NULL, NULL, 20);
        CREATE TABLE slices(id INTEGER PRIMARY KEY, track_id INTEGER, run_id INTEGER, ts INTEGER, dur INTEGER,
                            name TEXT, category TEXT, depth INTEGER, parent_id INTEGER, program_id INTEGER,
                            phase_id INTEGER, bytes INTEGER);
        INSERT INTO slices VALUES (1, 1, 0, 100, 20, 'Begin', 'stream_copy_begin', 1, NULL, NULL, NULL, NULL),
                                  (2, 1, 0, 130, 20, 'Mid: host service', 'stream_copy_host_service', 1, NULL,
                                   NULL, NULL, NULL),
                                  (3, 1, 0, 150, 10, 'Mid', 'stream_copy_mid', 1, NULL, NULL, NULL, 64),
                                  (4, 1, 1, 250, 50, 'Begin', 'stream_copy_begin', 1, NULL, NULL, NULL, NULL);
    """)
    db.commit()
    db.close()


class IpuWaitingForHostTest(unittest.TestCase):
    def test_outside_runs_begin_and_host_service_count_the_transfer_does_not(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.pop")
            write_host_accounting_profile(path)
            with ipusim_profile.open_profile(path) as p:
                w = p.ipu_waiting_for_host()
        # Windows [0, 200) and [200, 400): 400 cycles; outside runs [0, 100) and [200, 250).
        self.assertEqual(w.window_cycles, 400)
        self.assertEqual(w.outside_run_cycles, 150)
        self.assertEqual(w.begin_cycles, 70)
        self.assertEqual(w.host_service_cycles, 20)
        self.assertEqual(w.waiting_cycles, 240)
        self.assertAlmostEqual(w.share, 0.6)

    def test_no_captured_run_measures_nothing(self):
        # Adversarial pass 23: the share of no window read 0.0 ("never waits"); NaN, as the C++ definition
        # (report --json: null).
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.pop")
            write_host_accounting_profile(path)
            db = sqlite3.connect(path)
            db.execute("UPDATE runs SET captured = 0")
            db.commit()
            db.close()
            with ipusim_profile.open_profile(path) as p:
                w = p.ipu_waiting_for_host()
                self.assertEqual(w.window_cycles, 0)
                self.assertTrue(math.isnan(w.share))
                self.assertTrue(math.isnan(p.host_wait().share))


def write_minimal(path, meta):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    db.commit()
    db.close()


def write_counter_summary_profile(path, value_count=3):
    """A loss track of 3 values (ts 10, 12, 25) and its counter_summary as SCHEMA.md lays it out: origin 10,
    2 buckets of 10 cycles. `value_count` is written as the row's value_count (3 is right)."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '4'), ('complete', '1');
        CREATE TABLE tracks(id INTEGER PRIMARY KEY, parent_id INTEGER, kind TEXT, name TEXT, ipu INTEGER,
                            tile INTEGER, sort_order INTEGER);
        INSERT INTO tracks VALUES (7, NULL, 'counter', 'loss', NULL, NULL, 0);
        CREATE TABLE counters(track_id INTEGER, ts INTEGER, value REAL, run_id INTEGER, step INTEGER);
        INSERT INTO counters VALUES (7, 10, 2.5, 0, 0), (7, 12, 1.5, 0, 1), (7, 25, 0.75, 0, 2);
        CREATE TABLE counter_summary(track_id INTEGER PRIMARY KEY, value_count INTEGER, origin_ts INTEGER,
                                     bucket_cycles INTEGER, bucket_count INTEGER, bucket_values BLOB,
                                     first_ts BLOB, last_ts BLOB, value_min BLOB, value_max BLOB,
                                     value_first BLOB, value_last BLOB);
    """)
    db.execute("INSERT INTO counter_summary VALUES (7, ?, 10, 10, 2, ?, ?, ?, ?, ?, ?, ?)",
               (value_count, struct.pack("<2I", 2, 1), struct.pack("<2q", 10, 25), struct.pack("<2q", 12, 25),
                struct.pack("<2d", 1.5, 0.75), struct.pack("<2d", 2.5, 0.75), struct.pack("<2d", 2.5, 0.75),
                struct.pack("<2d", 1.5, 0.75)))
    complete_schema_4(db)
    db.commit()
    db.close()


def complete_schema_4(db):
    """What a schema 4 writer adds to a hand-made profile: every table the readers count (empty, with the
    columns the value rules and check 8 read) and meta.row_counts (SCHEMA.md checks 3, 6 and 8)."""
    from ipusim_profile.rules import COLUMN_RULES, ROW_KEYS
    from ipusim_profile.verification import COUNTED_TABLES, OPTIONAL_TABLES
    present = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in COUNTED_TABLES:
        if table in present or table in OPTIONAL_TABLES:
            continue
        columns = list(ROW_KEYS.get(table, [])) + (["track_id", "slice_id"] if table == "long_slices" else []) + (
            ["name"] if table == "runs" else [])  # (check 6 reads the runs' names)
        for rule in COLUMN_RULES:
            for column in (rule["column"], rule.get("min_column")):
                if rule["table"] == table and column and column not in columns:
                    columns.append(column)
        db.execute(f"CREATE TABLE {table}({', '.join(columns or ['x'])})")
    counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in COUNTED_TABLES if t in present or t not in OPTIONAL_TABLES}
    counts["meta"] += 1  # the row_counts row itself
    db.execute("INSERT INTO meta VALUES ('row_counts', ?)", (json.dumps(counts),))


class CounterSummaryTest(unittest.TestCase):
    def test_decodes_every_bucket(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.pop")
            write_counter_summary_profile(path)
            with ipusim_profile.open_profile(path) as p:
                s = p.counter_summary("loss")
                self.assertIsNone(p.counter_summary("accuracy"))
        self.assertEqual((s.value_count, s.origin_ts, s.bucket_cycles), (3, 10, 10))
        self.assertEqual(s.counts, (2, 1))
        self.assertEqual((s.first_ts, s.last_ts), ((10, 25), (12, 25)))
        self.assertEqual((s.min, s.max, s.first, s.last), ((1.5, 0.75), (2.5, 0.75), (2.5, 0.75), (1.5, 0.75)))

    def test_a_summary_that_disagrees_with_the_values_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.pop")
            write_counter_summary_profile(path, value_count=4)
            with self.assertRaisesRegex(ProfileError, "profile.pop: damaged profile: counter_summary row of track 7: "
                                                      "its buckets hold 3 values, value_count says 4"):
                ipusim_profile.open_profile(path)


class OpenErrorsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_missing_file_names_it(self):
        with self.assertRaisesRegex(ProfileError, "nowhere.pop: no such profile"):
            ipusim_profile.open_profile(self.path("nowhere.pop"))

    def test_not_sqlite(self):
        with open(self.path("text.pop"), "w") as f:
            f.write("this is not a database" * 100)
        with self.assertRaisesRegex(ProfileError, "text.pop: not an SQLite database"):
            ipusim_profile.open_profile(self.path("text.pop"))

    def test_incomplete_profile(self):
        write_minimal(self.path("half.pop"), {"schema_version": "1"})
        with self.assertRaisesRegex(ProfileError, "half.pop: incomplete profile"):
            ipusim_profile.open_profile(self.path("half.pop"))

    def test_newer_schema(self):
        write_minimal(self.path("new.pop"), {"schema_version": "99", "complete": "1"})
        with self.assertRaisesRegex(ProfileError, "schema version 99 is newer"):
            ipusim_profile.open_profile(self.path("new.pop"))

    def test_row_counts_are_checked_when_recorded(self):
        write_minimal(self.path("counted.pop"), {"schema_version": "2", "complete": "1",
                                                 "row_counts": '{"meta": 3}'})
        with ipusim_profile.open_profile(self.path("counted.pop")):
            pass
        write_minimal(self.path("lost.pop"), {"schema_version": "1", "complete": "1", "row_counts": '{"meta": 9}'})
        with self.assertRaisesRegex(ProfileError, "lost.pop: damaged profile: table meta has 3 rows, its writer "
                                                  "recorded 9"):
            ipusim_profile.open_profile(self.path("lost.pop"))

    def test_truncated_file_fails_the_quick_check(self):
        write_minimal(self.path("whole.pop"), {"schema_version": "1", "complete": "1"})
        db = sqlite3.connect(self.path("whole.pop"))
        db.execute("CREATE TABLE filler(x)")
        db.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 200)
        db.commit()
        db.close()
        with open(self.path("whole.pop"), "rb") as f:
            data = f.read()
        with open(self.path("cut.pop"), "wb") as f:
            f.write(data[: len(data) - 4096])
        with self.assertRaisesRegex(ProfileError, "cut.pop: (corrupt or truncated|not an SQLite)"):
            ipusim_profile.open_profile(self.path("cut.pop"))

    def test_directory_opens_its_profile_pop(self):
        write_minimal(self.path("profile.pop"), {"schema_version": "1", "complete": "1", "clock_hz": "2e9"})
        with ipusim_profile.open_profile(self.dir.name) as p:
            self.assertEqual(p.clock_hz, 2e9)
            self.assertEqual(p.seconds(4e9), 2.0)

    def test_a_directory_of_rank_profiles_names_them(self):
        # An mpirun run's report directory: a profile per rank, no profile.pop (adversarial pass 23: the error
        # said only "has no profile.pop"). As the C++ readers say it.
        with self.assertRaisesRegex(ProfileError, "report directory has no profile.pop$"):
            ipusim_profile.open_profile(self.dir.name)
        for rank in (1, 0, 10):
            write_minimal(self.path(f"profile.rank{rank}.pop"), {"schema_version": "1", "complete": "1"})
        message = (f"{self.dir.name}: report directory has no profile.pop; it holds 3 ranks' profiles of an mpirun "
                   f"run (profile.rank0.pop to profile.rank10.pop): name one (its rank's IPUs), e.g. "
                   f"{os.path.join(self.dir.name, 'profile.rank0.pop')}, or combine them with "
                   f"`ipusim combine {self.dir.name} -o FILE`")
        with self.assertRaises(ProfileError) as raised:
            ipusim_profile.open_profile(self.dir.name)
        self.assertEqual(str(raised.exception), message)


@unittest.skipUnless(PROFILE and BINARY, "IPUSIM_TEST_PROFILE and IPUSIM_BINARY are set by ctest")
class TutorialProfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = subprocess.run([BINARY, "report", PROFILE, "--json"], check=True, capture_output=True, text=True)
        cls.report = json.loads(out.stdout)
        cls.text_report = subprocess.run([BINARY, "report", PROFILE], check=True, capture_output=True,
                                         text=True).stdout
        cls.profile = ipusim_profile.open_profile(PROFILE)

    @classmethod
    def tearDownClass(cls):
        cls.profile.close()

    def test_runs_agree_with_report(self):
        runs = self.profile.runs()
        self.assertEqual(len(runs), self.report["runs"]["count"])
        self.assertEqual(sum(r.captured for r in runs), self.report["runs"]["captured"])
        self.assertEqual(sum(r.steps for r in runs), self.report["runs"]["steps"])
        self.assertEqual(runs[-1].end_cycle - runs[0].start_cycle, self.report["runs"]["span_cycles"])

    def test_steps_lie_inside_captured_runs(self):
        captured = {r.id: r for r in self.profile.runs() if r.captured}
        steps = self.profile.steps()
        self.assertEqual(len(steps), sum(r.steps for r in captured.values()))
        for s in steps:
            run = captured[s.run_id]
            self.assertTrue(run.start_cycle <= s.ts and s.ts + s.dur <= run.end_cycle)

    def test_phases_per_ipu_add_up_to_the_report(self):
        by_category = {}
        for p in self.profile.phases(ipu=0):
            by_category[p.category] = by_category.get(p.category, 0) + p.dur
        phases = self.report["captured"]["cycles_by_phase"][0]
        # bsp slices of one IPU do not overlap: their sums are the report's exclusive buckets.
        self.assertEqual(by_category.get("compute", 0), phases["compute"])
        self.assertEqual(by_category.get("exchange", 0), phases["exchange"])
        self.assertEqual(by_category.get("sync", 0), phases["sync"])

    def test_programs_form_a_tree(self):
        programs = {p.id: p for p in self.profile.programs()}
        self.assertEqual(len(programs), self.report["programs"]["count"])
        for p in programs.values():
            self.assertTrue(p.parent_id is None or p.parent_id in programs)

    def test_memory_per_tile_matches_the_report(self):
        # The report's figure is the peak per tile; its categories are the tile_memory rows.
        peaks = self.profile.tile_peaks()
        self.assertTrue(peaks)
        self.assertEqual(sum(p.peak_bytes for p in peaks), self.report["tile_memory"]["total_bytes"])
        self.assertEqual(max(p.peak_bytes for p in peaks), self.report["tile_memory"]["max_bytes"])
        by_category = {}
        for categories in self.profile.memory_per_tile().values():
            for category, b in categories.items():
                by_category[category] = by_category.get(category, 0) + b
        self.assertEqual(by_category, self.report["tile_memory"]["bytes_by_category"])

    def test_loss_counter(self):
        # Synthetic data computes no loss: then there is no counter at all.
        loss = self.report["loss"]
        self.assertEqual(len(self.profile.counters("loss")), loss["samples"] if loss else 0)
        self.assertEqual(self.profile.counters("no such counter"), [])

    def test_tile_phases_are_within_their_phase(self):
        tiles = self.profile.tile_phases(run_id=next(r.id for r in self.profile.runs() if r.captured))
        self.assertTrue(tiles, "the fixture profile is written at tile instrumentation level")
        for t in tiles[:1000]:
            self.assertTrue(0 <= t.tile < self.profile.tiles_per_ipu * self.profile.num_ipus)
            self.assertGreater(t.dur, 0)

    def test_ipu_waiting_for_host_is_the_report_figure(self):
        w = self.profile.ipu_waiting_for_host()
        expected = self.report["host_wait"]
        self.assertEqual(w.waiting_cycles, expected["waiting_cycles"])
        self.assertEqual(w.window_cycles, expected["window_cycles"])
        self.assertEqual(w.outside_run_cycles, expected["outside_run_cycles"])
        self.assertEqual(w.begin_cycles, expected["stream_copy_begin_cycles"])
        self.assertEqual(w.host_service_cycles, expected["host_service_cycles"])
        self.assertAlmostEqual(w.share, self.report["ipu_waiting_for_host"])

    def test_stream_copy_begin_is_the_report_figure(self):
        wait = self.profile.host_wait()
        self.assertEqual(wait.wait_cycles, self.report["captured"]["stream_copy_begin_cycles"])
        self.assertEqual(wait.window_cycles, self.report["captured"]["window_cycles"])
        self.assertGreater(wait.wait_cycles, 0)

    def test_worked_example_prints_the_report_line(self):
        out = subprocess.run([sys.executable, EXAMPLE, PROFILE], check=True, capture_output=True, text=True).stdout
        report_line = next(l.strip() for l in self.text_report.splitlines() if "IPU waiting for the host:" in l)
        self.assertIn(report_line, out)


if __name__ == "__main__":
    unittest.main()
