"""Imported first by the sweep's forkserver (its ``preload``): points the server's stderr, and so every worker's, at
/dev/null. A worker reports through its future (a cell's error, a crash as a broken pool, in one line from the
sweep); what a worker or the server would print itself (a traceback of a worker that was still starting when Ctrl-C
stopped the sweep) would break the one-line contract of the command line."""

import os

_devnull = os.open(os.devnull, os.O_WRONLY)
os.dup2(_devnull, 2)
os.close(_devnull)
