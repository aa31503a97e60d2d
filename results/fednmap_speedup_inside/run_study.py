"""Regenerate this folder with one command (the sweep(s), the tables, the figure, RUN.json):

    .venv/bin/python results/fednmap_speedup_inside/run_study.py [--processes 2]

It runs ``python -m fedbounds.checks.studies.exact speedup_inside``; see that module for what it writes.
"""

from __future__ import annotations

import sys

from fedbounds.checks.studies.exact import main

if __name__ == "__main__":
    raise SystemExit(main(["speedup_inside", *sys.argv[1:]]))
