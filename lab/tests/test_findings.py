"""The verdicts and sentences of labkit.findings and the fit of labkit.scale_model, on made-up results."""
import sys
import unittest
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labkit import findings, scale_model  # noqa: E402


def frame(columns, rows, metric):
    """NPF's dataframe shape: the variables, then y_<metric>."""
    return pd.DataFrame([dict(zip(columns + [f"y_{metric}"], r)) for r in rows])


class Verdicts(unittest.TestCase):
    def test_verdict_counts_the_checks(self):
        self.assertEqual(findings.verdict([True, True]), findings.REPRODUCED)
        self.assertEqual(findings.verdict([True, False]), findings.PARTLY)
        self.assertEqual(findings.verdict([False]), findings.NOT_REPRODUCED)
        self.assertEqual(findings.verdict([]), findings.NOT_TESTED)

    def test_table_cycles_names_the_tables_that_degrade(self):
        rows = [("cuckoo", 0.1, 10), ("cuckoo", 0.9, 12), ("robinhood", 0.1, 10),
                ("robinhood", 0.9, 30), ("hopscotch", 0.1, 10), ("hopscotch", 0.9, 11)]
        f = findings.table_cycles(frame(["TABLE", "LOAD"], rows, "HIT_CYCLES"))
        self.assertEqual(f.verdict, findings.PARTLY)
        self.assertIn("1.2 (cuckoo), 3 (robinhood), 1.1 (hopscotch)", f.sentence)
        self.assertIn("robinhood degrades more than the cuckoo tables (a factor at least 1.2 times "
                      "theirs), hopscotch does not", f.sentence)

    def test_a_grid_without_the_tables_is_not_tested(self):
        rows = [("chained", 0.5, 10), ("chained", 0.9, 12)]
        f = findings.table_cycles(frame(["TABLE", "LOAD"], rows, "HIT_CYCLES"))
        self.assertEqual(f.verdict, findings.NOT_TESTED)

    def test_scale_workers_compares_sharing_with_sharding(self):
        rows = [("sharded", 1, 10), ("sharded", 2, 19), ("rwlock", 1, 10), ("rwlock", 2, 4),
                ("spinlock", 1, 10), ("spinlock", 2, 9.5)]
        f = findings.scale_workers(frame(["STRATEGY", "WORKERS"], rows, "MPPS"))
        self.assertEqual(f.verdict, findings.REPRODUCED)
        self.assertIn("1.9x (sharded)", f.sentence)
        self.assertIn("sharding scales, rwlock falls behind it", f.sentence)
        self.assertIn("reach 0.5x the throughput of two sharded ones", f.sentence)


    def test_compact_lookups_compares_concury_with_the_maglev_style_table_at_the_largest_size(self):
        columns = ["STRUCTURE", "CONNECTIONS"]
        mqps = frame(columns, [("concury", 1024, 300), ("maglev-digest", 1024, 150),
                               ("concury", 1048576, 180), ("maglev-digest", 1048576, 60)], "BULK_MQPS")
        bits = frame(columns, [("concury", 1024, 8000), ("maglev-digest", 1024, 8100),
                               ("concury", 1048576, 36), ("maglev-digest", 1048576, 120)], "BITS_PER_CONNECTION")
        f = findings.compact_lookups(mqps.merge(bits, on=columns))
        self.assertEqual(f.verdict, findings.PARTLY)  # 3x (not 4x), in 0.3x the bits
        self.assertIn("run 3x the Maglev-style table's (180 against 60 Mqps) in 0.3x its bits", f.sentence)
        self.assertIn("2-3x across the grid (1024 to 1048576 connections)", f.sentence)

    def test_compact_lookups_below_a_million_connections_is_not_tested(self):
        rows = [("concury", 4096, 300), ("maglev-digest", 4096, 150)]
        df = frame(["STRUCTURE", "CONNECTIONS"], rows, "BULK_MQPS").assign(y_BITS_PER_CONNECTION=1.0)
        self.assertEqual(findings.compact_lookups(df).verdict, findings.NOT_TESTED)


class Model(unittest.TestCase):
    def test_linear_scaling_has_no_serial_fraction(self):
        self.assertEqual(scale_model.serial_fraction(10, 20), 0)
        self.assertEqual(scale_model.serial_fraction(10, 25), 0)  # better than linear: clamped
        self.assertAlmostEqual(scale_model.amdahl(10, 0, 8), 80)

    def test_the_fit_goes_through_both_measured_points(self):
        s = scale_model.serial_fraction(10, 15)
        self.assertAlmostEqual(scale_model.amdahl(10, s, 1), 10)
        self.assertAlmostEqual(scale_model.amdahl(10, s, 2), 15)
        self.assertLess(scale_model.amdahl(10, s, 64), 10 / s)  # bounded by 1 / s


if __name__ == "__main__":
    unittest.main()
