"""The damaged-profile corpus (tests/data/damaged_profiles/cases.json) against both readers: each case
is refused by the Python reader and by every ipusim command that reads the damaged value, with words
naming the file and the damage (table.column and the value, or the meta key), and the good profile and
the cases of non-finite data are read by both. Run by ctest as python_reader.damaged_profiles:

    IPUSIM_TEST_PROFILE=report IPUSIM_BINARY=build/bin/ipusim python3 traces/python/tests/damaged_profile_corpus.py
"""

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import ipusim_profile  # noqa: E402

CASES_FILE = os.path.join(HERE, "..", "..", "..", "tests", "data", "damaged_profiles", "cases.json")
PROFILE = os.environ.get("IPUSIM_TEST_PROFILE")
BINARY = os.environ.get("IPUSIM_BINARY")
COMMANDS = ("report", "report --json", "report --ops", "report --liveness", "insights", "export")
LEAKS = ("terminate", "bad_alloc", "json.exception", "basic_filebuf", "Assertion", "Traceback")


def load_cases():
    with open(CASES_FILE, encoding="utf-8") as f:
        return json.load(f)["cases"]


def good_profile_file():
    return os.path.join(PROFILE, "profile.pop") if os.path.isdir(PROFILE) else PROFILE


def make_case(case, work):
    """The damaged profile of `case` under `work`; returns the path a reader is given."""
    folder = os.path.join(work, case["name"])
    os.makedirs(folder)
    path = os.path.join(folder, "profile.pop")
    if case.get("fifo"):
        os.mkfifo(path)
        return path
    if case.get("directory"):
        os.mkdir(path)
        return folder
    shutil.copyfile(good_profile_file(), path)
    if "sql" in case:
        db = sqlite3.connect(path)
        db.executescript(case["sql"])
        db.commit()
        db.close()
    if "truncate_bytes" in case:
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - case["truncate_bytes"])
    if "replace_with" in case:
        with open(path, "w", encoding="utf-8") as f:
            f.write(case["replace_with"])
    return path


def read_everything(path):
    """Every figure the Python reader makes, as a user of it would ask for them."""
    with ipusim_profile.open_profile(path) as p:
        figures = [p.clock_hz, p.num_ipus, p.tiles_per_ipu, p.tile_memory_bytes, p.runs(), p.tracks(),
                   p.programs(), p.tile_memory(), p.tile_peaks(), p.program_work(), p.tensors(), p.program_order(),
                   p.tensor_lifetimes(), p.static_phases(), p.steps(), p.phases()]
        figures += [list(p.slices(track_id=t["id"])) for t in p.tracks()]
        figures += [p.counters(t["name"]) for t in p.tracks("counter")]
        # As JSON, as a user saves them: a name stored as a blob (not text) came back as bytes, which json.dumps refused.
        figures += [json.dumps(p.operations().to_json()), json.dumps(p.liveness().to_json()), p.host_wait(),
                    p.ipu_waiting_for_host(),
                    p.run_cycles(), p.program_cycles(), p.step_phases(), p.compute_sets()]
        return p.counters("loss")


def run_ipusim(command, path, work):
    words = command.split()
    args = [BINARY] + words[:1] + [path] + words[1:]
    output = None
    if words[0] == "export":
        output = os.path.join(work, "export.json")
        args += ["-o", output]
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    # errors="replace": a message quoting a damaged text shows its bytes as they are (invalid UTF-8 too).
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", timeout=300,
                       env=env)
    return r.returncode, r.stdout, output


@unittest.skipUnless(PROFILE and BINARY, "needs IPUSIM_TEST_PROFILE and IPUSIM_BINARY")
class DamagedProfileCorpus(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="damaged_profiles_")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def test_the_good_profile_is_read_by_both(self):
        read_everything(PROFILE)
        for command in COMMANDS:
            code, out, output = run_ipusim(command, good_profile_file(), self.work)
            self.assertEqual(code, 0, f"{command}: {out}")
            if output:
                os.remove(output)

    def test_every_case_is_refused_by_both_readers_in_the_same_words(self):
        cases = load_cases()
        self.assertGreaterEqual(len(cases), 40)
        for case in cases:
            if case.get("accept"):
                continue
            with self.subTest(case=case["name"]):
                path = make_case(case, self.work)
                with self.assertRaises(ipusim_profile.ProfileError) as caught:
                    read_everything(path)
                message = str(caught.exception)
                for words in case["expect"]:
                    self.assertIn(words, message, "Python reader")
                self.assertIn(case["name"], message, "the message names the file")
                for command in case.get("commands", COMMANDS):
                    code, out, output = run_ipusim(command, path, self.work)
                    self.assertTrue(0 < code < 128, f"{command} exit {code}: {out}")
                    for words in case["expect"]:
                        self.assertIn(words, out, command)
                    self.assertIn(case["name"], out, f"{command}: the message names the file")
                    self.assertEqual(out.count("\n"), 1, f"{command}: one line: {out}")
                    for leak in LEAKS:
                        self.assertNotIn(leak, out, command)
                    if output:
                        self.assertFalse(os.path.exists(output), f"{command} wrote {output}")
                        self.assertEqual([n for n in os.listdir(self.work) if n.startswith("export")], [])

    def test_the_accepted_cases_are_read_by_both(self):
        for case in load_cases():
            if not case.get("accept"):
                continue
            with self.subTest(case=case["name"]):
                path = make_case(case, self.work)
                read_everything(path)
                for command in COMMANDS:
                    code, out, output = run_ipusim(command, path, self.work)
                    self.assertEqual(code, 0, f"{command}: {out}")
                    if output:
                        os.remove(output)

    def test_non_finite_values_are_data_for_both(self):
        for case in load_cases():
            if "shows" not in case:
                continue
            with self.subTest(case=case["name"]):
                path = make_case(case, self.work)
                loss = read_everything(path)
                shown = case["shows"]["loss"]
                last = loss[-1].value
                self.assertTrue(math.isnan(last) if shown == "nan" else math.isinf(last), f"last loss {last}")
                code, out, _ = run_ipusim("report --json", path, self.work)
                self.assertEqual(code, 0, out)
                self.assertEqual(json.loads(out)["loss"]["last"], shown, out)
                code, out, _ = run_ipusim("report", path, self.work)
                self.assertEqual(code, 0, out)
                self.assertIn(f"last {shown}", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
