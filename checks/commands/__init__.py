"""One module per ``fedbounds`` subcommand, each with ``configure(parser)`` and ``run(args) -> int``."""
