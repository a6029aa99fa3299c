#!/usr/bin/env python3
"""Tests of scripts/check-imports.py on copies of harness/src with imports planted in them, and
of the table docs/architecture.md shows (the script's `--doc` output).

Run: python3 -m unittest discover -s scripts -p 'test_*.py' (`.ci/run` does).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check-imports.py")
SRC = os.path.join(HERE, "..", "harness", "src")
DOC = os.path.join(HERE, "..", "docs", "architecture.md")
BEGIN = "<!-- table made by `scripts/check-imports.py --doc`: begin -->"
END = "<!-- table made by `scripts/check-imports.py --doc`: end -->"


def check(root):
    p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class CheckImports(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.src = os.path.join(self.tmp, "src")
        shutil.copytree(SRC, self.src)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def plant(self, rel, line, at_end=False):
        path = os.path.join(self.src, rel)
        text = ""
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        text = text + "\n" + line + "\n" if at_end else line + "\n" + text
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    def test_the_tree_passes(self):
        rc, out = check(self.src)
        self.assertEqual(rc, 0, out)

    def test_a_lower_layer_importing_the_runner_fails(self):
        self.plant("cuda/mod.rs", "use crate::run::Session;")
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("wrong-way import: cuda -> run (cuda/mod.rs)", out)

    def test_the_report_importing_cuda_fails(self):
        self.plant("report/chart/mod.rs", "use crate::{units::MIB, cuda::Gpu};")
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("wrong-way import: report -> cuda (report/chart/mod.rs)", out)

    def test_a_path_in_an_expression_counts_too(self):
        self.plant("stats/mod.rs", "fn f() { let _ = crate::scenario::Mode::Direct; }", at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("stats -> scenario", out)

    def test_measure_importing_a_strategy_fails(self):
        # strategy -> measure: the sampling loop drives its own trait and owns the clocks, so
        # measure importing strategy is wrong-way, and a cycle with strategy's imports of it.
        self.plant("measure/mod.rs", "use crate::strategy::Transfer;")
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("wrong-way import: measure -> strategy (measure/mod.rs)", out)
        self.assertIn("import cycle: modules:", out)

    def test_a_strategy_may_use_the_clocks_of_measure(self):
        self.plant("strategy/staged.rs", "use crate::measure::{Stopwatch, Streams, Timer};")
        rc, out = check(self.src)
        self.assertEqual(rc, 0, out)

    def test_a_strategy_reading_the_host_clock_fails(self):
        self.plant("strategy/empty.rs",
                   "fn f() -> f64 { std::time::Instant::now().elapsed().as_secs_f64() }",
                   at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("host clock read in strategy/empty.rs", out)

    def test_test_code_may_import_anything(self):
        self.plant("cuda/mod.rs", "#[cfg(test)]\nmod planted { use crate::run::Session; }",
                   at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 0, out)

    def test_a_wrong_way_import_after_a_test_only_fn_fails(self):
        # A `#[cfg(test)]` fn, then production code with a wrong-way import: the attribute
        # takes its own item out, not the rest of the file.
        self.plant("stats/sample.rs",
                   "#[cfg(test)]\npub(crate) fn planted() -> u8 { if true { 1 } else { 2 } }\n"
                   "use crate::cli::Cli;", at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("wrong-way import: stats -> cli (stats/sample.rs)", out)

    def test_a_wrong_way_import_after_a_test_module_fails(self):
        self.plant("cuda/code.rs",
                   "#[cfg(test)]\nmod planted {\n    use crate::run::Session;\n    fn f() {}\n}\n"
                   "fn after() { let _ = crate::report::render_report; }", at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("wrong-way import: cuda -> report (cuda/code.rs)", out)
        self.assertNotIn("cuda -> run", out)

    def test_a_wrong_way_import_after_a_test_use_or_field_fails(self):
        self.plant("probe/ledger.rs",
                   "#[cfg(test)]\nuse crate::run::{Session, open_session};\n"
                   "struct Planted {\n    #[cfg(test)]\n    a: crate::cli::Cli,\n"
                   "    b: crate::strategy::Transfer,\n}", at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("wrong-way import: probe -> strategy (probe/ledger.rs)", out)
        self.assertNotIn("probe -> run", out)
        self.assertNotIn("probe -> cli", out)

    def test_braces_in_strings_and_comments_do_not_end_a_test_item(self):
        self.plant("stats/change.rs",
                   "#[cfg(test)]\nmod planted {\n    // a } in a comment\n"
                   "    const S: &str = \"}\";\n    const C: char = '}';\n"
                   "    use crate::run::Session;\n}", at_end=True)
        rc, out = check(self.src)
        self.assertEqual(rc, 0, out)

    def test_a_file_declared_test_only_may_import_anything(self):
        self.plant("results/fixtures.rs", "use crate::run::Session;")
        rc, out = check(self.src)
        self.assertEqual(rc, 0, out)

    def test_a_module_missing_from_the_table_fails(self):
        self.plant("newthing.rs", "use crate::units::MIB;")
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("module `newthing` is not in ALLOWED", out)

    def test_a_cycle_between_allowed_modules_fails(self):
        # run may import report; report importing run is both wrong-way and a cycle.
        self.plant("report/chart/mod.rs", "use crate::run::Session;")
        rc, out = check(self.src)
        self.assertEqual(rc, 1, out)
        self.assertIn("import cycle: modules:", out)
        self.assertIn("wrong-way import: report -> run", out)


class DocTable(unittest.TestCase):
    def test_the_architecture_doc_shows_the_scripts_table(self):
        p = subprocess.run([sys.executable, SCRIPT, "--doc"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(DOC, encoding="utf-8") as fh:
            doc = fh.read()
        self.assertIn(BEGIN, doc)
        shown = doc.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"
        self.assertEqual(shown, p.stdout,
                         "docs/architecture.md's table is not ALLOWED: paste the output of "
                         "`python3 scripts/check-imports.py --doc` between its markers")


if __name__ == "__main__":
    unittest.main()
