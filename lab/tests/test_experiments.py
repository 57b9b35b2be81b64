"""Every NPF test file of the lab, on its tiny grid, through NPF and into a report; and a bench whose
output lacks a field stops its experiment with a message naming the field.

Needs the flowtrack binary ($FLOWTRACK_BIN, default build/flowtrack) and NPF (.venv).
"""
import os
import stat
import sys
import tempfile
import unittest
from pathlib import Path

LAB = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LAB))

import report  # noqa: E402
from labkit import LabError, npf_run  # noqa: E402
from labkit.experiments import EXPERIMENTS  # noqa: E402


class TinyReport(unittest.TestCase):
    """One tiny run of the whole lab: every experiment's RESULT lines, graph and report entry."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="lab-test-")
        cls.out = Path(cls.tmp.name)
        cls.status = report.main(["--mode", "tiny", "--out", str(cls.out)])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_report_is_written(self):
        self.assertEqual(self.status, 0)
        for name in ("index.html", "README.md"):
            self.assertTrue((self.out / name).stat().st_size > 0, name)

    def test_every_experiment_printed_its_results_and_drew_its_graph(self):
        work = LAB / "out" / "tiny"
        page = (self.out / "README.md").read_text()
        for exp in EXPERIMENTS:
            with self.subTest(exp.name):
                log = (work / f"{exp.name}.log").read_text()
                for result in npf_run.expected_results(exp.npf_file):
                    self.assertIn(f"RESULT-{result} ", log)
                graphs = list(self.out.glob(f"{exp.name}-*.png"))
                self.assertTrue(graphs, f"no graph for {exp.name}")
                for graph in graphs:
                    self.assertIn(f"]({graph.name})", page)


class BrokenBench(unittest.TestCase):
    """A flowtrack that prints a JSON line without the field the test file reads."""

    def test_missing_field_stops_the_experiment_and_is_named(self):
        with tempfile.TemporaryDirectory(prefix="lab-broken-") as tmp:
            fake = Path(tmp) / "flowtrack"
            fake.write_text('#!/bin/sh\necho \'{"table":"cuckoo","op":"hit","cycles_typo":1.0}\'\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            old = os.environ.get("FLOWTRACK_BIN")
            os.environ["FLOWTRACK_BIN"] = str(fake)
            try:
                with self.assertRaises(LabError) as caught:
                    npf_run.run(LAB / "table-cycles.npf", "tiny", Path(tmp) / "work")
            finally:
                if old is None:
                    del os.environ["FLOWTRACK_BIN"]
                else:
                    os.environ["FLOWTRACK_BIN"] = old
        self.assertIn("lacks field 'cycles'", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
