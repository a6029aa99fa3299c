#!/usr/bin/env python3
"""Fails (exit 1) on an import that goes the wrong way between modules of harness/src, or on an
import cycle.

Layers, top-down (docs/architecture.md draws them): cli → run → strategy → measure → the model
(scenario) and the machine (cuda, probe, platform); results → claims / compare → report beside the
runner; stats, units and error at the bottom. [`ALLOWED`] lists, for every top-level module, the
modules it may import; an import outside that list fails, and so does a module the table does not
name. A wrong-way import that is known and not yet fixed is listed in [`EXCEPTIONS`] with the
reason; the script says when one is no longer needed. A module in [`NO_HOST_CLOCK`] must not
name the host clock (`Instant`, `SystemTime`): `measure` owns every clock a sample is timed with.

Nodes: each top-level module of the crate (a folder with mod.rs is one node, a file is one node),
and, inside each folder, its files (mod.rs stands for the folder and is left out of the folder's
own graph). Edges: every `crate::a::b` path (also inside `use crate::{a, b::c}` groups) and, inside a
folder, `super::x` / `crate::folder::x` paths to a sibling file. Test-only code is excluded item
by item: files named tests.rs, a file declared `#[cfg(test)] mod name;`, and each item a
`#[cfg(test)]` attribute stands on (a `mod … { … }` block to its closing brace, a `use`, a `fn`, an
`impl`, a field); every other line of a file is read, before and after a test item.

Usage: scripts/check-imports.py [harness/src]    check the tree (exit 1 on a wrong-way import)
       scripts/check-imports.py --doc            print the table of docs/architecture.md from
                                                 ALLOWED (scripts/test_check_imports.py checks
                                                 that the doc shows exactly this)
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "harness", "src")


# `input` is how every input file is read (regular files only, bounds, text escaped): any layer
# that reads a file uses it, and it needs only error and units. `accounting` declares the
# accounting metrics (plain data that probes, columns, claims and reports all name).
BOTTOM = {"error", "units", "input", "accounting"}

# What each top-level module may import (besides itself). Lower layers never import higher ones.
ALLOWED = {
    # A CUDA failure outside a case keeps its typed code (`cuda` imports nothing of the crate).
    "error": {"cuda"},
    "units": set(),
    "input": {"error", "units"},
    # The accounting metrics' declarations (names, words, sources, platforms): plain data.
    "accounting": set(),
    # Model files' tensor tables and their page-cache state: read from files, no CUDA.
    "modelfile": BOTTOM,
    "stats": BOTTOM,
    "platform": BOTTOM,
    # The machine: CUDA driver calls and memory observers.
    "cuda": BOTTOM,
    "probe": BOTTOM | {"platform", "cuda"},
    # The model of what to run (cases, routes, claims), read by every layer below the CLI.
    "scenario": BOTTOM | {"platform", "cuda", "modelfile"},
    # How samples are taken and every clock they are timed with; it drives a trait of its own
    # (`Measurable`), never a strategy. A sample's stop reason is a `results` value.
    "measure": BOTTOM | {"scenario", "cuda", "stats", "results"},
    # How one transfer moves bytes, timed with measure's clocks.
    "strategy": BOTTOM | {"scenario", "cuda", "stats", "measure"},
    # Results files and what is computed from them, offline: no CUDA calls, no runner (a failure
    # keeps the driver's error code, a `cuda` type).
    "results": BOTTOM | {"platform", "scenario", "cuda", "probe", "stats"},
    "claims": BOTTOM | {"platform", "scenario", "results", "stats"},
    "compare": BOTTOM | {"platform", "scenario", "results", "stats"},
    "report": BOTTOM | {"platform", "scenario", "results", "stats", "compare", "claims", "health"},
    # Health verdicts from what a check measured and the recorded settings, offline.
    "health": BOTTOM | {"platform", "stats"},
    # Observing another program: its process tree, the observers of it, the event stream.
    "observe": BOTTOM | {"platform", "probe", "results"},
    # The runner: everything but the command line.
    "run": BOTTOM | {"platform", "scenario", "cuda", "probe", "strategy", "measure", "stats",
                     "results", "claims", "report", "health", "modelfile"},
    "cli": BOTTOM | {"platform", "scenario", "cuda", "probe", "strategy", "measure", "stats",
                     "results", "claims", "compare", "report", "run", "health", "modelfile", "observe"},
}

# Why an allowed import is there, where the name alone does not say it (shown in the doc's table).
WHY = {
    ("scenario", "cuda"): "the `HostFlags` value type",
    ("measure", "results"): "`StopReason`",
    ("strategy", "measure"): "the clocks, `Measurable`, `SampleTimes`",
    ("results", "cuda"): "a failure's driver `ErrorCode`",
    ("results", "probe"): "metric names",
}

# The doc's order: top-down, as the layers are drawn.
DOC_ORDER = ["cli", "observe", "run", "strategy", "measure", "scenario", "cuda", "probe", "platform",
             "report", "claims", "compare", "health", "results", "modelfile", "stats", "accounting", "input",
             "units", "error"]

# Modules that must not read the host clock themselves: a strategy times its work with the clocks
# of `measure` (`Stopwatch`, `Timer`, `WaitClock`, `call_alone`), so every sample is timed one way.
NO_HOST_CLOCK = {"strategy"}

# Known wrong-way imports, each with why it is still there. Remove an entry with its import.
EXCEPTIONS = {
}


CFG_TEST = "#[cfg(test)]"
# Item keywords: after one of these (past `pub`), a comma does not end the item (generics, where).
ITEM_WORDS = {"fn", "mod", "use", "struct", "enum", "impl", "const", "static", "type", "trait",
              "unsafe", "async", "extern", "macro_rules", "union"}


def blank(text):
    """The text with comments, string and char literals replaced by spaces (newlines kept), so
    that braces and paths inside them count for nothing."""
    pattern = re.compile(r"""//[^\n]*|/\*.*?\*/|b?r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?'(?:\\.|[^'\\])'""",
                         re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def item_end(text, i):
    """Where the item that starts at `i` ends (the index just past it): past its `;` or its
    closing brace at depth 0; at a `,` at depth 0 when it is a field or an expression; before a
    closing bracket of the enclosing item."""
    depth, first = 0, re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(\w+)", text[i:])
    is_item = bool(first) and first.group(1) in ITEM_WORDS
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return i
            depth -= 1
            if depth == 0 and ch == "}":
                return i + 1
        elif depth == 0 and (ch == ";" or (ch == "," and not is_item)):
            return i + 1
        i += 1
    return i


def bracket_end(text, i):
    """Index just past the bracket that closes the one at `i` (an attribute's `[…]`)."""
    depth = 0
    for j in range(i, len(text)):
        depth += text[j] in "([{"
        depth -= text[j] in ")]}"
        if depth == 0:
            return j + 1
    return len(text)


def strip_tests(text):
    """The text without the items that `#[cfg(test)]` stands on (each attribute, the attributes
    after it and its item), and the names of the modules declared test-only (`mod name;`)."""
    text = blank(text)
    out, test_mods, pos = [], set(), 0
    while True:
        at = text.find(CFG_TEST, pos)
        if at < 0:
            out.append(text[pos:])
            return "".join(out), test_mods
        out.append(text[pos:at])
        i = at + len(CFG_TEST)
        # Further attributes on the same item (`#[path = …]`, `#[allow(…)]`).
        while True:
            m = re.match(r"\s*#\[", text[i:])
            if not m:
                break
            i = bracket_end(text, i + m.end() - 1)
        end = item_end(text, i)
        decl = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text[i:end])
        if decl:
            test_mods.add(decl.group(1))
        pos = end


def group_paths(body):
    """Top-level paths of a `{a, b::c, d::{e, f}}` group."""
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [p for p in out if p]


def paths(text, prefix):
    """Every path following `prefix::` as a list of segments (first two are enough here)."""
    found = []
    for m in re.finditer(r"\b" + prefix + r"::", text):
        rest = text[m.end():]
        if rest.startswith("{"):
            depth, i = 0, 0
            for i, ch in enumerate(rest):
                depth += ch == "{"
                depth -= ch == "}"
                if depth == 0:
                    break
            for p in group_paths(rest[1:i]):
                found.append(re.findall(r"\w+", p)[:2])
        else:
            seg = re.match(r"(\w+)(?:::(\w+))?", rest)
            if seg:
                found.append([s for s in seg.groups() if s])
    return found


def modules():
    """(top-level module, file within it or None, path) for every source file."""
    for dirpath, _, files in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        for f in files:
            if not f.endswith(".rs") or f == "tests.rs":
                continue
            parts = [] if rel == "." else rel.split(os.sep)
            if not parts:
                if f in ("lib.rs", "main.rs"):
                    continue
                yield f[:-3], None, os.path.join(dirpath, f)
            else:
                inner = None if f == "mod.rs" else f[:-3]
                # Nested folders (probe/windows) belong to their first file-level node.
                if len(parts) > 1:
                    inner = parts[1]
                yield parts[0], inner, os.path.join(dirpath, f)


def cycle(graph):
    """A cycle as a list of nodes, or None."""
    color, stack = {}, []

    def visit(n):
        color[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not color.get(m):
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if not color.get(n):
            c = visit(n)
            if c:
                return c
    return None


def layering(top, where):
    """Messages for imports the table does not allow, and notes for exceptions no longer used."""
    bad, notes = [], []
    for mod in sorted(top):
        if mod not in ALLOWED:
            bad.append(f"module `{mod}` is not in ALLOWED of scripts/check-imports.py: add it "
                       "with the modules it may import")
            continue
        for dep in sorted(top[mod]):
            if dep in ALLOWED[mod] or (mod, dep) in EXCEPTIONS:
                continue
            files = ", ".join(sorted(where[(mod, dep)]))
            bad.append(f"{mod} -> {dep} ({files}): `{mod}` may import only "
                       f"{', '.join(sorted(ALLOWED[mod])) or 'nothing of the crate'}")
    for (mod, dep), why in sorted(EXCEPTIONS.items()):
        if dep not in top.get(mod, ()):
            notes.append(f"note: the exception {mod} -> {dep} ({why}) is no longer needed: "
                         "delete it from EXCEPTIONS")
    return bad, notes


def read_sources():
    """(module, file node, path, text without test items) for every production source file."""
    read, test_files = [], set()
    for mod, sub, path in modules():
        with open(path, encoding="utf-8") as fh:
            text, test_mods = strip_tests(fh.read())
        here = os.path.dirname(path)
        for name in test_mods:
            test_files.add(os.path.normpath(os.path.join(here, name + ".rs")))
            test_files.add(os.path.normpath(os.path.join(here, name, "mod.rs")))
            # `mod x;` declared in a.rs (not mod.rs) lives at a/x.rs.
            stem = os.path.splitext(os.path.basename(path))[0]
            if stem not in ("mod", "lib", "main"):
                test_files.add(os.path.normpath(os.path.join(here, stem, name + ".rs")))
        read.append((mod, sub, path, text))
    return [r for r in read if os.path.normpath(r[2]) not in test_files]


def doc_table():
    """The table of docs/architecture.md, made from ALLOWED and WHY."""
    names = set(ALLOWED)
    lines = ["| module | may import (besides " + ", ".join(f"`{b}`" for b in sorted(BOTTOM))
             + ", which are at the bottom) |", "|---|---|"]
    for mod in DOC_ORDER + sorted(names - set(DOC_ORDER)):
        allowed = ALLOWED[mod] - BOTTOM if mod not in BOTTOM else ALLOWED[mod]
        missing = sorted(names - allowed - {mod} - BOTTOM)
        if mod in BOTTOM and not allowed:
            what = "nothing of the crate"
        elif mod in BOTTOM:
            what = ", ".join(f"`{d}`" for d in sorted(allowed))
        elif not missing:
            what = "every module"
        elif len(missing) <= 2 and len(allowed) > 2:
            what = "every module but " + " and ".join(f"`{d}`" for d in missing)
        elif not allowed:
            what = "—"
        else:
            what = ", ".join(f"`{d}`" + (f" ({WHY[(mod, d)]})" if (mod, d) in WHY else "")
                             for d in sorted(allowed))
        lines.append(f"| `{mod}` | {what} |")
    return "\n".join(lines) + "\n"


def main():
    global ROOT
    if sys.argv[1:] == ["--doc"]:
        print(doc_table(), end="")
        return 0
    if len(sys.argv) > 1:
        ROOT = sys.argv[1]
    top, inner, where = {}, {}, {}
    files_in, clocks = {}, []
    sources = read_sources()
    for mod, sub, _, _ in sources:
        if sub:
            files_in.setdefault(mod, set()).add(sub)
    for mod, sub, path, text in sources:
        top.setdefault(mod, set())
        if mod in NO_HOST_CLOCK and re.search(r"\b(Instant|SystemTime)\b", text):
            clocks.append(f"host clock read in {os.path.relpath(path, ROOT)}: `{mod}` times its "
                          "work with the clocks of crate::measure (Stopwatch, Timer, WaitClock)")
        for p in paths(text, "crate"):
            if p[0] == "Error":
                p = ["error"]
            if p[0] != mod:
                top[mod].add(p[0])
                where.setdefault((mod, p[0]), set()).add(os.path.relpath(path, ROOT))
            elif sub and len(p) > 1 and p[1] in files_in.get(mod, ()) and p[1] != sub:
                inner.setdefault(mod, {}).setdefault(sub, set()).add(p[1])
        if sub:
            for p in paths(text, "super"):
                if p[0] in files_in.get(mod, ()) and p[0] != sub:
                    inner.setdefault(mod, {}).setdefault(sub, set()).add(p[0])
    bad = []
    c = cycle(top)
    if c:
        bad.append("import cycle: modules: " + " -> ".join(c))
    for mod, g in sorted(inner.items()):
        c = cycle(g)
        if c:
            bad.append(f"import cycle: files in {mod}/: " + " -> ".join(c))
    wrong, notes = layering(top, where)
    bad += ["wrong-way import: " + w for w in wrong]
    bad += clocks
    for n in notes:
        print(n)
    if bad:
        for b in bad:
            print(b)
        return 1
    print(f"no import cycle and no wrong-way import among {len(top)} modules of "
          f"{os.path.normpath(ROOT)} ({len(EXCEPTIONS)} recorded exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
