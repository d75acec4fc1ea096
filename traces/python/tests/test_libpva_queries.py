"""The reader's libpva-style queries against the C++ analyses, which define
every figure: `ipusim report --ops --json` (operations summary), `--liveness
--json` (liveness by program step) and `--json` (runs), on the tutorial profile
ctest writes (IPUSIM_TEST_PROFILE, IPUSIM_BINARY; see test_reader.py)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import ipusim_profile  # noqa: E402
from ipusim_profile.cycles import BSP_CATEGORIES  # noqa: E402

PROFILE = os.environ.get("IPUSIM_TEST_PROFILE", "")
BINARY = os.environ.get("IPUSIM_BINARY", "")
EXAMPLES = os.path.join(HERE, "..", "examples")


def report(*args):
    out = subprocess.run([BINARY, "report", PROFILE, *args], check=True, capture_output=True, text=True)
    return out.stdout


def assert_same_json(test, ours, theirs, where=""):
    """Equal, with floats to 1e-12 relative (the C++ computes them in another order)."""
    if isinstance(theirs, float) or isinstance(ours, float):
        test.assertAlmostEqual(ours, theirs, delta=1e-12 * max(1.0, abs(theirs)), msg=where)
    elif isinstance(theirs, dict):
        test.assertEqual(sorted(ours), sorted(theirs), where)
        for key in theirs:
            assert_same_json(test, ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        test.assertEqual(len(ours), len(theirs), where)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_json(test, a, b, f"{where}[{i}]")
    else:
        test.assertEqual(ours, theirs, where)


@unittest.skipUnless(PROFILE and BINARY, "IPUSIM_TEST_PROFILE and IPUSIM_BINARY are set by ctest")
class LibpvaQueriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.profile = ipusim_profile.open_profile(PROFILE)
        cls.ops_json = json.loads(report("--ops", "--json"))

    @classmethod
    def tearDownClass(cls):
        cls.profile.close()

    def test_operations_summary_is_report_ops(self):
        ours = self.profile.operations().to_json()
        theirs = self.ops_json
        self.assertTrue(theirs["operations"])
        for key in ("profile",):  # the C++ names the file it opened; the reader, the path it was given
            ours.pop(key), theirs.pop(key)
        # A row's program ids come in slice order, which the two readers walk differently.
        for row in ours["operations"] + theirs["operations"]:
            row["program_ids"] = sorted(row["program_ids"])
        assert_same_json(self, ours, theirs, "ops")

    def test_liveness_is_report_liveness(self):
        ours = self.profile.liveness().to_json()
        theirs = json.loads(report("--liveness", "--json"))
        self.assertTrue(theirs["available"])
        self.assertGreater(theirs["peak_bytes"], theirs["always_live_bytes"])
        ours.pop("profile"), theirs.pop("profile")
        assert_same_json(self, ours, theirs, "liveness")

    def test_each_steps_phases_per_ipu_add_up_to_the_operations_busy_cycles(self):
        steps = self.profile.step_phases()
        self.assertEqual(len(steps), self.ops_json["windows"])
        total = sum(c for _, per_ipu in steps for cats in per_ipu.values() for c in cats.values())
        self.assertEqual(total, self.ops_json["busy_cycles"])
        for step, per_ipu in steps:
            self.assertEqual(sorted(per_ipu), list(range(self.profile.num_ipus)))
            for cats in per_ipu.values():
                self.assertTrue(set(cats) <= set(BSP_CATEGORIES))
                self.assertLessEqual(sum(cats.values()), step.dur)

    def test_run_cycles_are_the_reports(self):
        runs = json.loads(report("--json"))["runs"]
        self.assertEqual(sum(self.profile.run_cycles().values()), runs["run_cycles"])
        self.assertEqual(sum(self.profile.run_cycles(captured_only=True).values()), runs["captured_cycles"])
        self.assertEqual(len(self.profile.run_cycles()), runs["count"])

    def test_program_cycles_per_ipu_and_run(self):
        runs = [r for r in self.profile.runs() if r.captured]
        per_run = [self.profile.program_cycles(run_id=r.id) for r in runs]
        overall = self.profile.program_cycles()
        self.assertTrue(overall)
        for key, cycles in overall.items():
            self.assertEqual(cycles, sum(p.get(key, 0) for p in per_run), key)
        # An Execute program's cycles on an IPU are its BSP phases' there (its compute set, then its sync).
        executes = {p.id for p in self.profile.programs() if p.kind == "Execute"}
        for ipu in range(self.profile.num_ipus):
            phases = {}
            for phase in self.profile.phases(ipu=ipu):
                if phase.program_id in executes:
                    phases[phase.program_id] = phases.get(phase.program_id, 0) + phase.dur
            self.assertTrue(phases)
            for program_id, cycles in phases.items():
                self.assertEqual(overall[(ipu, program_id)], cycles, (ipu, program_id))

    def test_compute_sets_carry_the_operations_work_and_memory(self):
        sets = self.profile.compute_sets()
        self.assertTrue(sets)
        rows = {(r["layer"], r["op"]): r for r in self.ops_json["operations"]}
        for cs in sets:
            self.assertGreater(cs.vertices, 0)
            row = rows.get((cs.layer, cs.op))
            if row is not None and cs.layer:
                self.assertEqual(cs.variable_bytes, row["memory_bytes"], cs.name)
                self.assertLessEqual(cs.tiles, row["tiles"] or cs.tiles)


@unittest.skipUnless(PROFILE and BINARY, "IPUSIM_TEST_PROFILE and IPUSIM_BINARY are set by ctest")
class ExamplesTest(unittest.TestCase):
    def run_example(self, name, *args):
        env = dict(os.environ, MPLBACKEND="Agg")
        return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], check=True,
                              capture_output=True, text=True, env=env).stdout

    def test_operations_example_prints_report_ops_word_for_word(self):
        self.assertEqual(self.run_example("operations.py", PROFILE), report("--ops"))

    def test_memory_per_tile_example_plots_or_explains(self):
        with tempfile.TemporaryDirectory() as tmp:
            png = os.path.join(tmp, "memory.png")
            out = self.run_example("memory_per_tile.py", PROFILE, png)
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.assertIn("matplotlib is not installed", out)
            else:
                self.assertTrue(os.path.getsize(png) > 0)
            self.assertIn("fullest tile", out)


# A pipelined model (two stages on two IPUs, token ids): the operations
# summary counted FLOPs and tiles from the first IPU's compute slices only,
# so the second stage's matmuls read 0 FLOPs on 0 tiles, in both readers
# (found by the fifth adversarial pass of issue 33).
PIPELINED = {
    "name": "pipelined",
    "dataset": {"format": "synthetic", "batch_size": 2, "examples": 32, "input_shape": [8], "classes": 6},
    "model": {"layers": [
        {"type": "embedding", "input_dim": 6, "output_dim": 8, "mask_zero": True, "name": "emb", "stage": 0},
        {"type": "layer_normalization", "name": "ln", "stage": 0},
        {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "use_causal_mask": True,
         "inputs": ["ln", "ln"], "name": "mha", "stage": 1},
        {"type": "dense", "units": 6, "activation": "softmax", "name": "out", "stage": 1}]},
    "pipeline": {"schedule": "grouped", "gradient_accumulation_count": 4},
    "optimizer": {"type": "sgd", "learning_rate": 0.05},
    "training": {"steps": 8, "steps_per_execution": 8},
    "ipu": {"tiles": 16, "num_ipus": 2},
}


@unittest.skipUnless(BINARY, "IPUSIM_BINARY is set by ctest")
class PipelinedOperationsTest(unittest.TestCase):
    def test_a_later_stages_flops_are_counted_as_report_ops_counts_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            workload = os.path.join(tmp, "w.json")
            with open(workload, "w") as f:
                json.dump(PIPELINED, f)
            reports = os.path.join(tmp, "reports")
            options = json.dumps({"autoReport.all": "true", "autoReport.directory": reports})
            subprocess.run([BINARY, "run", workload, "--engine-options", options], check=True, capture_output=True)
            theirs = json.loads(subprocess.run([BINARY, "report", reports, "--ops", "--json"], check=True,
                                               capture_output=True, text=True).stdout)
            with ipusim_profile.open_profile(reports) as profile:
                ours = profile.operations().to_json()
        rows = {(r["layer"], r["op"]): r for r in ours["operations"]}
        # The second stage's matmul, on IPU 1: 2 x (2 examples x 8 steps) x 8 x 6 a step.
        self.assertEqual(rows[("out", "matmul")]["flops_per_step"], 2.0 * 16 * 8 * 6)
        self.assertGreater(rows[("out", "matmul")]["tiles"], 0)
        ours.pop("profile"), theirs.pop("profile")
        for row in ours["operations"] + theirs["operations"]:
            row["program_ids"] = sorted(row["program_ids"])
        assert_same_json(self, ours, theirs, "ops")
