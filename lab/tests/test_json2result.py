"""json2result.py: bench JSON lines in, NPF RESULT lines out, a clear failure on anything else."""
import json
import subprocess
import sys
import unittest
from pathlib import Path

LAB = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LAB))

from json2result import ERROR_MARK, BenchOutputError, convert, parse_specs  # noqa: E402

TABLE_LINE = json.dumps({"table": "cuckoo", "op": "hit", "cycles": 12.5, "bytes_per_flow": 64.0})


def results(lines, *specs):
    return list(convert(lines, parse_specs(specs)))


class Convert(unittest.TestCase):
    def test_one_result_per_spec_and_line(self):
        self.assertEqual(results([TABLE_LINE], "CYCLES=cycles", "BYTES=bytes_per_flow"),
                         ["RESULT-CYCLES 12.5", "RESULT-BYTES 64.0"])

    def test_name_template_takes_fields_of_the_line(self):
        lines = [TABLE_LINE, json.dumps({"op": "spin-lock", "cycles": 3})]
        self.assertEqual(results(lines, "{op}_CYCLES=cycles"),
                         ["RESULT-HIT_CYCLES 12.5", "RESULT-SPIN_LOCK_CYCLES 3"])

    def test_a_condition_reads_only_the_lines_it_names(self):
        lines = [json.dumps({"mode": "single", "mqps": 1.5, "bits": 30}),
                 json.dumps({"mode": "bulk", "mqps": 4.0, "bits": 30})]
        self.assertEqual(results(lines, "{mode}_MQPS=mqps", "BITS=bits?mode=bulk"),
                         ["RESULT-SINGLE_MQPS 1.5", "RESULT-BULK_MQPS 4.0", "RESULT-BITS 30"])

    def test_a_condition_on_a_missing_field_is_named(self):
        self.assertFails([TABLE_LINE], "C=cycles?mode=bulk", says="line 1 lacks field 'mode'")

    def test_the_context_record_is_no_result(self):
        context = json.dumps({"context": {"commit": "8eb4f29", "cycles": 1}})
        self.assertEqual(results([context, TABLE_LINE], "C=cycles"), ["RESULT-C 12.5"])
        self.assertFails([context], "C=cycles", says="printed no JSON result line")

    def test_blank_lines_are_skipped(self):
        self.assertEqual(results(["", TABLE_LINE, "  "], "C=cycles"), ["RESULT-C 12.5"])

    def assertFails(self, lines, *specs, says):
        with self.assertRaises(BenchOutputError) as caught:
            results(lines, *specs)
        self.assertIn(says, str(caught.exception))

    def test_missing_field_is_named(self):
        self.assertFails([TABLE_LINE], "MPPS=mpps", says="line 1 lacks field 'mpps'")

    def test_missing_field_of_a_name_template_is_named(self):
        self.assertFails([TABLE_LINE], "{nf}_MPPS=cycles", says="lacks field 'nf'")

    def test_not_json(self):
        self.assertFails(["flowtrack: error: bad option"], "C=cycles", says="line 1 is not JSON")

    def test_not_an_object(self):
        self.assertFails(["[1, 2]"], "C=cycles", says="not a JSON object")

    def test_not_a_number(self):
        self.assertFails([TABLE_LINE], "T=table", says="field 'table' is \"cuckoo\", not a finite number")

    def test_two_lines_with_one_name(self):
        self.assertFails([TABLE_LINE, TABLE_LINE], "C=cycles", says="lines 1 and 2 both give RESULT-C")

    def test_no_output(self):
        self.assertFails([], "C=cycles", says="printed no JSON result line")

    def test_bad_spec(self):
        with self.assertRaises(ValueError):
            parse_specs(["cycles"])


class CommandLine(unittest.TestCase):
    def run_converter(self, stdin, *specs):
        return subprocess.run([sys.executable, str(LAB / "json2result.py"), *specs], input=stdin,
                              capture_output=True, text=True)

    def test_broken_line_fails_with_the_lab_error_mark(self):
        broken = json.dumps({"table": "cuckoo", "op": "hit"})  # a bench that lost its "cycles"
        run = self.run_converter(TABLE_LINE + "\n" + broken + "\n", "{op}_CYCLES=cycles")
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"{ERROR_MARK} bench output line 2 lacks field 'cycles'", run.stderr)

    def test_good_output(self):
        run = self.run_converter(TABLE_LINE + "\n", "{op}_CYCLES=cycles")
        self.assertEqual((run.returncode, run.stdout), (0, "RESULT-HIT_CYCLES 12.5\n"))


if __name__ == "__main__":
    unittest.main()
