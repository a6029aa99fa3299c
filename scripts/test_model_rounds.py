#!/usr/bin/env python3
"""Tests of scripts/model-rounds.py's pairs (each path alone, `publish.sh models` with ALONE=N) on
a folder laid out as publish.sh leaves it, with pinscope's CSV columns and the probe's own lines.

Run: python3 -m unittest discover -s scripts -p 'test_*.py' (`.ci/run` does).
"""
import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "model-rounds.py")
spec = importlib.util.spec_from_file_location("model_rounds", SCRIPT)
model_rounds = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model_rounds)

# The probe's lines as it prints them (fileload.cu's rep()).
PROBE = {
    ("pread-16m", "cold"): "pread into a 16 MiB x 3 pinned ring                  cold   {s:.3f} s   1.58 GB/s\n"
    "  (read 2.722 s, wait 0.003 s, one buffer)\n",
    ("mmap", "warm"): "mmap, cudaMemcpy per tensor (PIECES)                 warm   {s:.3f} s   8.49 GB/s\n",
}


def pair(root, name, case, cache, n, ours, theirs):
    d = os.path.join(root, "alone", name, f"{case}-{cache}")
    if ours is not None:
        os.makedirs(os.path.join(d, f"pinscope-{n}"), exist_ok=True)
        with open(os.path.join(d, f"pinscope-{n}", "20261207-061000-model-load.csv"), "w") as f:
            f.write("case_label,cache,status,time_median_ms\n")
            f.write(f"{case},{cache},ok,{ours * 1000:.3f}\n")
        # The raw samples beside it are not rows.
        with open(os.path.join(d, f"pinscope-{n}", "20261207-061000-model-load.samples.csv"), "w") as f:
            f.write("case_label,cache,status,time_median_ms\n")
            f.write(f"{case},{cache},ok,1\n")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"probe-{n}.txt"), "w") as f:
        f.write(PROBE[(case, cache)].format(s=theirs))


class Alone(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        name = "llama-7b.safetensors"
        # pread 16 MiB cold: 12 pairs measured on an H200 VM (2026-12-07), here 4 of them.
        for n, (a, b) in enumerate([(2.729, 2.608), (2.721, 2.030), (2.881, 2.738), (2.446, 2.356)], 1):
            pair(self.root, name, "pread-16m", "cold", n, a, b)
        pair(self.root, name, "mmap", "warm", 1, 0.652, 0.537)
        pair(self.root, name, "mmap", "warm", 2, 0.815, 0.684)
        # A pair whose pinscope run left no row (it failed) is not a pair.
        pair(self.root, name, "mmap", "warm", 3, None, 0.500)

    def test_pairs_join_pinscope_and_the_probe_by_path_and_cache(self):
        t = model_rounds.gather_alone(self.root)
        rows = t["llama-7b.safetensors"]
        self.assertEqual(len(rows[("pread-16m", "cold")]), 4)
        self.assertEqual(rows[("pread-16m", "cold")][1], (2.721, 2.030))
        # The probe's per-tensor copy out of the mapping is its mmap step.
        self.assertEqual(rows[("mmap", "warm")], [(0.652, 0.537), (0.815, 0.684)])

    def test_the_table_gives_medians_their_ratio_and_the_per_pair_range(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            model_rounds.report_alone(model_rounds.gather_alone(self.root))
        lines = out.getvalue().splitlines()
        pread = next(x for x in lines if x.startswith("pread-16m"))
        # Medians 2.725 / 2.482 = 1.098, per pair 1.04-1.34: not within 5%.
        self.assertEqual(pread.split(), ["pread-16m", "cold", "4", "2.725", "2.482", "1.098", "1.04–1.34", "no"])

    def test_the_script_reports_pairs_without_rounds(self):
        r = subprocess.run([sys.executable, SCRIPT, self.root], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("each path alone", r.stdout)

    def test_a_folder_with_neither_rounds_nor_pairs_is_refused(self):
        empty = tempfile.mkdtemp()
        r = subprocess.run([sys.executable, SCRIPT, empty], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no pairs", r.stderr)


if __name__ == "__main__":
    unittest.main()
