#!/usr/bin/env python3
"""Outputs of the real kernel match the outputs of `tracebook run`.

run.sh executes every notebook of notebooks/ with `jupyter nbconvert --execute`
(the kernel, over the Jupyter protocol) into EXECUTED_DIR. The notebooks in
NOTEBOOKS_DIR were saved by `tracebook run` (the same session code, no
server). This script compares, cell by cell, the text/plain of every output
(the text of streams, ename and evalue of errors): they must be equal, except
for what `tracebook run` leaves out on purpose to keep re-runs
byte-identical (load times and rates, and whether the parse cache served a
load). A notebook saved without outputs is skipped.

Usage: parity.py EXECUTED_DIR NOTEBOOKS_DIR
"""
import pathlib
import re
import sys

import nbformat

# The kernel's load lines carry timings and cache use; `tracebook run`'s do not.
LOADED = re.compile(r"^loaded (\d+ files?)(?: from the parse cache)?: ([\d,]+ events)[^\n]*$", re.M)
DROPPED = re.compile(r"^(?:parsed [^\n]* of JSON in [^\n]*|served from the parse cache[^\n]*)\n", re.M)


def normalise(text):
    return LOADED.sub(r"loaded \1: \2", DROPPED.sub("", text))


def outputs(nb):
    """Maps each code cell's id to its outputs as (type, text) pairs."""
    cells = {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        got = []
        for out in cell.get("outputs", []):
            kind = out.output_type
            if kind == "stream":
                text = out.name + ": " + out.text
            elif kind == "error":
                text = out.ename + ": " + out.evalue
            else:
                text = out.get("data", {}).get("text/plain", "")
                if isinstance(text, list):
                    text = "".join(text)
            got.append((kind, normalise(text)))
        cells[cell.get("id", str(i))] = got
    return cells


def first_difference(a, b):
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return "line %d:\n  tracebook run: %r\n  kernel:        %r" % (n + 1, x, y)
    return "lengths differ: %d and %d lines" % (len(a.splitlines()), len(b.splitlines()))


def main(executed_dir, notebooks_dir):
    failed = 0
    checked = 0
    for path in sorted(pathlib.Path(notebooks_dir).glob("*.ipynb")):
        saved = nbformat.read(path, as_version=4)
        want = outputs(saved)
        if not any(want.values()):
            print("skip %s: saved without outputs" % path.name)
            continue
        executed = pathlib.Path(executed_dir) / path.name
        if not executed.exists():
            print("FAIL %s: nbconvert did not write %s" % (path.name, executed))
            failed += 1
            continue
        got = outputs(nbformat.read(executed, as_version=4))
        problems = []
        for cell_id, want_outs in want.items():
            got_outs = got.get(cell_id)
            if got_outs is None:
                problems.append("cell %s: missing from the executed notebook" % cell_id)
                continue
            if [k for k, _ in want_outs] != [k for k, _ in got_outs]:
                problems.append("cell %s: output types %s, kernel %s" % (
                    cell_id, [k for k, _ in want_outs], [k for k, _ in got_outs]))
                continue
            for (kind, w), (_, g) in zip(want_outs, got_outs):
                if w != g:
                    problems.append("cell %s, %s output: %s" % (cell_id, kind, first_difference(w, g)))
        checked += 1
        if problems:
            failed += 1
            print("FAIL %s:\n  %s" % (path.name, "\n  ".join(problems)))
        else:
            print("ok   %s: %d code cells match" % (path.name, len(want)))
    print("parity: %d notebooks compared, %d failed" % (checked, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
