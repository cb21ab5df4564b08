"""Jupyter's own command-line tools against the installed tracebook kernelspec.

Usage: python3 console_check.py
Runs `jupyter kernelspec list` (the jupyter-client package's
jupyter-kernelspec) and `jupyter console --kernel tracebook` (the
jupyter-console package) with a cell piped on stdin, as a user at a
terminal would type it, and checks what they print. Exits 1 with a message
on the first failed check. Run by tests/jupyter/run.sh, which points
JUPYTER_PATH at a temporary kernelspec.
"""
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")

# jupyter kernelspec list: tracebook is there, pointing at its kernel.json.
out = subprocess.run(["jupyter", "kernelspec", "list"], env=env, capture_output=True, text=True, timeout=30)
if out.returncode != 0:
    fail("jupyter kernelspec list: exit %d: %s" % (out.returncode, out.stderr))
rows = [line.split() for line in out.stdout.splitlines()[1:]]
paths = {r[0]: r[1] for r in rows if len(r) == 2}
if "tracebook" not in paths:
    fail("jupyter kernelspec list has no tracebook:\n" + out.stdout)
with open(os.path.join(paths["tracebook"], "kernel.json"), encoding="utf-8") as f:
    spec = json.load(f)
if spec.get("language") != "sql" or "{connection_file}" not in spec.get("argv", []):
    fail("tracebook's kernel.json: %r" % spec)
print("kernelspec list: tracebook in", paths["tracebook"])

# jupyter console: a SQL cell piped in, its result table printed as Out[1].
cmd = ["jupyter", "console", "--kernel", "tracebook", "--simple-prompt"]
try:
    out = subprocess.run(cmd, input="SELECT 42 AS answer\n", env=env, capture_output=True, text=True, timeout=30)
except subprocess.TimeoutExpired as e:
    fail("jupyter console did not exit within 30 s; it printed:\n%s\n%s" % (e.stdout, e.stderr))
if out.returncode != 0:
    fail("jupyter console: exit %d:\n%s\n%s" % (out.returncode, out.stdout, out.stderr))
text = out.stdout
if "tracebook" not in text.split("In [1]")[0]:
    fail("the console's banner does not name tracebook:\n" + text)
result = text.split("Out[1]:", 1)[1] if "Out[1]:" in text else ""
lines = [line.strip() for line in result.splitlines()]
if "answer" not in lines or "42" not in lines or "1 row" not in lines:
    fail("SELECT 42 AS answer: want Out[1] with the column answer, 42 and '1 row'; the console printed:\n" + text)
print("console: SELECT 42 AS answer printed", lines[1:5])
print("OK")
