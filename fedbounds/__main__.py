"""``python -m fedbounds``: the command line (same as the ``fedbounds`` script)."""

from fedbounds.checks.cli import main

if __name__ == "__main__":  # importing the module (a documentation builder does) runs nothing
    raise SystemExit(main())
