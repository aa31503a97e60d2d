"""The ``fedbounds`` command line (its help text is :data:`DESCRIPTION`, :data:`EPILOG` and :data:`EXAMPLES`: plain text).

Each subcommand lives in its own module under :mod:`fedbounds.checks.commands` and is imported only when it runs, so
that ``fedbounds claims`` does not pay for numpy-heavy imports.

One error boundary (:func:`main`) turns every failure into one line on stderr and an exit status:

- 2: bad input or an unusable file (a bad value out of its range, a path that cannot be read or written, a corrupt
  store); the line names the thing at fault;
- 3: the environment (out of memory, out of disk space, a solver missing or out of time, missing or damaged
  committed evidence); the line names the limit or file and the step;
- 130: interrupted (Ctrl-C); 141: stdout closed by its reader (``fedbounds ... | head``), quietly;
- 70: a bug ("internal error"), never disguised as bad input.

``--debug`` (anywhere on the command line) or ``FEDBOUNDS_DEBUG=1`` (or true/yes/on) prints the traceback as well.
SIGTERM unwinds like Ctrl-C (temporary files removed, workers stopped) and exits 143. A closed stderr leaves
only the exit status; a closed stdout is refused at start (exit 2); errors writing stdout name it.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("fedbounds.checks.commands.check", "run the bound-checking suite and write a report"),
    "claims": ("fedbounds.checks.commands.claims", "list the papers' claims with their provenance"),
    "feasible": ("fedbounds.checks.commands.feasible", "which parameters a theorem allows, and what it promises"),
    "sweep": ("fedbounds.checks.commands.sweep", "run a resumable experiment grid from a TOML spec"),
    "report": ("fedbounds.checks.commands.report", "turn a sweep store into figures and a CSV"),
}

#: the top-level help's description and epilog (plain text: argparse prints them as they are)
DESCRIPTION = (
    "fedbounds: the claims of two federated-optimisation papers (FedNMap, arXiv 2602.03357; DS FedProxGrad,\n"
    "arXiv 2512.08671) as checked mathematics: bound checks, the claims' provenance, a feasibility calculator,\n"
    "experiment sweeps and their reports."
)
EPILOG = """examples:
  fedbounds check                          quick profile: a table, reports/report.json and the plots
  fedbounds claims --status erratum        the papers' mistakes, each with its evidence
  fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --mu 0.1 --epsilon 0.01
  fedbounds sweep tiny                     a small resumable grid; then: fedbounds report tiny
  fedbounds COMMAND --help                 a command's options and examples

exit status (one per kind of failure):
  0    success: every claim checked holds (feasible: admissible)
  1    a negative answer: a claim violated or a control not flagged (feasible: not admissible)
  2    bad input or an unreadable/unwritable file (one line naming what is at fault and the allowed range)
  3    the environment: out of memory, out of disk, a solver missing or out of time, damaged committed evidence
  70   internal error (a bug)
  130  interrupted (143 terminated by SIGTERM; 141 output pipe closed)
--debug (or FEDBOUNDS_DEBUG=1) shows the traceback of an error."""

#: subcommand -> the examples printed at the end of its --help
EXAMPLES: dict[str, str] = {
    "check": """examples:
  fedbounds check                          the quick profile (every claim), report in reports/
  fedbounds check --claim fednmap.theorem8  one claim
  fedbounds check --claim ds.              a family prefix: every DS FedProxGrad claim
  fedbounds check --claim fednmap.pep      worst cases over the whole assumption class (PEP certificates)
  fedbounds check --profile full --out reports/full""",
    "claims": """examples:
  fedbounds claims                         every claim: id, paper label, status, statement
  fedbounds claims --status reconstructed  what was read into lost text
  fedbounds claims --paper ds --json        DS FedProxGrad's claims as JSON
  fedbounds claims --id ds.lemma5_2 --latex""",
    "feasible": """examples:
  fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --mu 0.1 --epsilon 0.01
  fedbounds feasible fednmap.theorem5 --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --json
  fedbounds feasible ds-fedproxgrad --L-f 0.45 --L-r 0.9 --lam 1 --G 0.3 --B 1 --G-r 1 --sigma 0.1 --alpha 0.75
  fedbounds feasible fednmap --L 1 --rho 0.1 --n 10 --Q 5 --sigma 1 --plot region.png
  fedbounds feasible THEOREM --help        the theorem's constants and parameters""",
    "sweep": """examples:
  fedbounds sweep tiny                     a small grid; rerun to resume
  fedbounds sweep fednmap_speedup --processes 2
  fedbounds sweep my_grid.toml --dry-run   count the cells: total, stored, missing""",
    "report": """examples:
  fedbounds report tiny                    the default store of the shipped spec 'tiny'
  fedbounds report reports/sweeps/tiny-0123abcd.sqlite --out tiny-report""",
}

EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader quit

#: folders of the fedbounds layers: a ValueError raised from code here is validation (bad input)
_OWN_CODE = tuple(str(Path(__file__).resolve().parents[1] / d) + os.sep for d in ("checks", "theory", "algorithms"))


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit status 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch scheduler's stop): unwinds like Ctrl-C, so the same cleanup runs, and exits 143."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


_INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


def route_interrupts() -> None:
    """Deliver Ctrl-C and SIGTERM through one Python thread, whatever C code is running.

    A solver may install its own SIGINT handler while it runs (SCS does: it stops early and returns a status that
    reads like a result), and a signal may land on any of the threads that BLAS starts. So both signals are blocked
    in every thread (threads started later inherit the mask) and a watcher thread takes them with ``sigwait`` and
    raises them in the main thread (``_thread.interrupt_main``): KeyboardInterrupt, or :class:`Terminated`, at the
    main thread's next Python instruction. PEP solves run in a solver process that the waiting main thread kills at
    once (:mod:`fedbounds.checks.pep.bounded`); other C code in this process runs to its end first. Worker processes unblock both
    signals for themselves (``fedbounds.checks.sweep.runner``). Only for the console script: called from ``main()``
    when it reads ``sys.argv``, never for in-process calls."""
    import _thread
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "sigwait"):
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)

    def watch() -> None:
        while True:
            _thread.interrupt_main(signal.sigwait(_INTERRUPTS))

    threading.Thread(target=watch, name="fedbounds-signals", daemon=True).start()


def unblock_interrupts() -> None:
    """Undo :func:`route_interrupts`' mask in a child process (a sweep worker), so that it stops on SIGTERM/SIGINT."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _INTERRUPTS)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def debug_requested(argv: Sequence[str]) -> bool:
    """``--debug`` on the command line, or ``FEDBOUNDS_DEBUG`` set to 1/true/yes/on (0/false/no/off or unset: off)."""
    value = os.environ.get("FEDBOUNDS_DEBUG", "").strip().lower()
    if value not in _TRUE + _FALSE:
        raise UsageError(f"fedbounds: error: FEDBOUNDS_DEBUG={value!r}: expected one of 1, true, yes, on, 0, false, no, off")
    return "--debug" in argv or value in _TRUE


class _NamedStdout:
    """stdout, whose write errors name it: a full disk or a closed device behind stdout reads "standard output: No
    space left on device" rather than a bare errno. Characters the stream cannot encode are escaped, not fatal."""

    def __init__(self, stream: object) -> None:
        self._stream = stream
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream that cannot be reconfigured
                pass

    def _call(self, name: str, *args: object) -> object:
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), "standard output") from None

    def write(self, text: str) -> object:
        return self._call("write", text)

    def flush(self) -> object:
        return self._call("flush")

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: error: {message}")


def _build_parser(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    from fedbounds import __version__

    raw = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="fedbounds", description=DESCRIPTION, epilog=EPILOG, formatter_class=raw)
    parser.add_argument("--version", action="version", version=f"fedbounds {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (also FEDBOUNDS_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    modules: dict[str, object] = {}
    wanted = next((a for a in argv if a in SUBCOMMANDS), None)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text, epilog=EXAMPLES.get(name), formatter_class=raw)
        if name == wanted:
            module = importlib.import_module(module_name)
            module.configure(sp)
            modules[name] = module
    return parser, modules


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fedbounds`` console script; returns the exit status (never raises)."""
    console = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    # figures are written to files, never shown: a bad $MPLBACKEND (or a display backend) cannot break a run
    os.environ["MPLBACKEND"] = "Agg"
    from fedbounds.checks.runtime import address_space
    from fedbounds.checks.runtime.mplconfig import ensure_mplconfigdir

    ensure_mplconfigdir()  # an unusable $MPLCONFIGDIR: a private one, not matplotlib's two warnings
    _one_blas_thread_under_a_limit()
    previous_term = _install(signal.SIGTERM, _on_sigterm)
    if console:
        route_interrupts()
    real_stdout = sys.stdout
    debug = "--debug" in argv
    try:
        debug = debug_requested(argv)
        argv = [a for a in argv if a != "--debug"]
        if sys.stdout is None:
            raise UsageError("fedbounds: error: standard output is closed; redirect it to a file or /dev/null instead")
        sys.stdout = _NamedStdout(real_stdout)  # type: ignore[assignment]
        command = next((a for a in argv if not a.startswith("-")), None)
        if command not in (None, "claims") and (small := address_space.too_small()) is not None:  # before numpy loads
            _say(f"fedbounds: error: {small}")
            return EXIT_ENVIRONMENT
        parser, modules = _build_parser(argv)
        args = parser.parse_args(argv)
        status = int(modules[args.command].run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the boundary, not at interpreter exit
        return status
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except (Exception, KeyboardInterrupt) as exc:  # other BaseExceptions (a test runner's) pass through
        return _fail(exc, debug)
    finally:
        if sys.stdout is not real_stdout and real_stdout is not None:
            sys.stdout = real_stdout
        _install(signal.SIGTERM, previous_term)


def _install(signum: int, handler: object) -> object:
    """Set a signal handler where that is possible (the main thread); returns the previous one."""
    try:
        return signal.signal(signum, handler)  # type: ignore[arg-type]
    except (ValueError, TypeError):  # not the main thread, or no previous Python-level handler to restore
        return handler


def _fail(exc: Exception | KeyboardInterrupt, debug: bool) -> int:
    """Report ``exc`` in one line (after its traceback under ``debug``) and return the exit status."""
    if isinstance(exc, BrokenPipeError):
        _silence_stdout()
        return EXIT_PIPE
    if debug:
        _say("".join(traceback.format_exception(exc)).rstrip(), raw=True)
    if isinstance(exc, UsageError):
        _say(str(exc))
        return EXIT_USAGE
    if isinstance(exc, Terminated):
        _say("fedbounds: terminated")
        return EXIT_TERMINATED
    if isinstance(exc, KeyboardInterrupt):
        _say("fedbounds: interrupted")
        return EXIT_INTERRUPTED
    message = environment_fault(exc)
    if message is not None:
        _say(f"fedbounds: error: {message}")
        return EXIT_ENVIRONMENT
    message = user_fault(exc)
    if message is not None:
        _say(f"fedbounds: error: {message}")
        return EXIT_USAGE
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})"
    hint = "" if debug else "; rerun with --debug for the traceback"
    _say(f"fedbounds: internal error: {type(exc).__name__}: {_flat(exc)}{where}. This is a bug{hint}")
    return EXIT_INTERNAL


#: errno values that mean the machine ran out of something (disk, quota, memory), not that the input is wrong
_ENVIRONMENT_ERRNOS = {getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "ENOMEM") if hasattr(errno, n)}


def memory_limit() -> str:
    """The address-space limit this process runs under, in words ('no limit' when none)."""
    from fedbounds.checks.runtime.address_space import limit_words

    return limit_words()


#: what the dynamic loader says when a library does not fit under the address-space limit
_MAP_FAILED = "failed to map segment"


def _chain_text(exc: BaseException) -> str:
    """The messages of ``exc`` and the exceptions it was raised from."""
    parts, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    return " ".join(parts)


def _one_blas_thread_under_a_limit() -> None:
    """Under an address-space limit (``ulimit -v``), OpenBLAS's per-thread buffers that do not fit make it print a line
    and exit the process with status 1 (read as "a claim failed"); with one thread its allocations are Python's, and a
    shortage is a MemoryError (exit status 3). Only a default: an explicit OPENBLAS_NUM_THREADS is kept."""
    from fedbounds.checks.runtime.address_space import limit_kib

    if limit_kib() is not None:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _step(exc: BaseException) -> str:
    """The deepest frame of fedbounds' own code in ``exc``'s traceback, as 'module.function'."""
    own = [f for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()).startswith(_OWN_CODE)]
    if not own:
        return "start-up"
    f = own[-1]
    return f"{Path(f.filename).stem}.{f.name}"


def environment_fault(exc: BaseException) -> str | None:
    """The one-line message of a failure of the environment (exit status 3), or None.

    Out of memory (a MemoryError), out of disk space or quota (an OSError ENOSPC/EDQUOT, naming the path), a solver
    process that ran out of time or memory or could not start (:class:`fedbounds.checks.pep.bounded.SolverLimit`), and
    missing or damaged committed evidence (:class:`fedbounds.theory.core.evidence.EvidenceError`)."""
    if isinstance(exc, MemoryError) or (isinstance(exc, ImportError) and _MAP_FAILED in _chain_text(exc)):
        return f"out of memory under {memory_limit()} while running {_step(exc)}; raise the limit or reduce the sizes"
    if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT_ERRNOS:
        where = f"{str(exc.filename)!r}: " if exc.filename is not None else ""
        return f"{where}{exc.strerror or _flat(exc)}"
    names = {c.__name__ for c in type(exc).__mro__}
    if "EvidenceError" in names:
        return _flat(exc)
    if "SolverLimit" in names:
        return f"the solver could not finish: {_flat(exc)}"
    return None


def user_fault(exc: BaseException) -> str | None:
    """The one-line message of a failure caused by the input or the environment, or None for a bug.

    User faults: an OSError (a path that cannot be read or written), a MemoryError (sizes too large), a
    UnicodeError (a file that is not text), and a ValueError raised by fedbounds' own validation (a
    ValueError raised inside a library is a validation gap, hence a bug).
    """
    if isinstance(exc, OSError):
        name = exc.filename if exc.filename is not None else None
        text = exc.strerror or _flat(exc)
        return f"{str(name)!r}: {text}" if name is not None else text
    if isinstance(exc, MemoryError):
        return f"out of memory ({_flat(exc) or 'the sizes asked for do not fit'}); reduce the sizes in the input"
    if isinstance(exc, UnicodeError):
        return _flat(exc)
    if isinstance(exc, ValueError):
        frames = traceback.extract_tb(exc.__traceback__)
        origin = str(Path(frames[-1].filename).resolve()) if frames else ""
        if not frames or origin.startswith(_OWN_CODE):
            return _flat(exc)
    return None


def _flat(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _say(text: str, raw: bool = False) -> None:
    """Print to stderr: one line unless ``raw`` (control characters from the input are escaped)."""
    if not raw:
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if sys.stderr is None:  # stderr closed: the exit status alone speaks (never into stdout, a --json pipe)
        return
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed too: nothing left to tell
        pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again (Python docs, "Note on
    SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured in tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
