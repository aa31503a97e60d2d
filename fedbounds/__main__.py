"""``python -m fedbounds``: the command line (same as the ``fedbounds`` script)."""

from fedbounds.checks.cli import main

raise SystemExit(main())
