"""Shared test configuration: hypothesis profiles, and one quick-profile run of each claim per test session.

CI runs the derandomised ``ci`` profile (the default), so it never flakes; ``HYPOTHESIS_PROFILE=dev`` widens the
search locally. Every pytest-xdist worker loads this file, so every worker runs the same derandomised profile.

The suite runs on every core (``-n auto`` in pyproject.toml's addopts; ``-n 0`` runs it in one process). Several
modules need the quick profile's result of the same claims (test_quick_profile, test_families, the teeth and PEP
modules): the :func:`quick_result` fixture computes each claim once per session, for every module and every
worker. The first worker to need a claim computes it under a lock file and pickles the result into a folder of
the session's base temporary directory (shared by all workers of one run, new for each run); the others wait for
it and read it. :func:`quick_results` takes a list and starts with the claims no other worker is computing.

The default run stays within its budget (5 minutes on 2 cores) by leaving the long runs to ``-m slow``: a test
parametrized by a claim of :data:`HEAVY_CLAIMS` (whose quick run alone takes more than about 10 s, or 5 s for the
last ones added) and the cases of :data:`SLOW_CASES` are marked slow here; whole tests are marked where they are
defined. ``pytest -m slow`` runs them, and ``fedbounds check`` runs every claim's quick profile itself.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=25,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=300,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: claims whose quick-profile run takes more than about 10 s on an idle core (reports/report.json of 2026-12-04, elapsed
#: seconds, solver processes included); their quick runs are the quick check's, not the default suite's
HEAVY_CLAIMS = frozenset({
    "fednmap.theorem8", "fednmap.theorem8.floor", "fednmap.theorem5.rate", "fednmap.lyapunov", "fednmap.theorem8.complexity",
    "fednmap.pep.lyapunov_constants", "fednmap.spep.lyapunov_windows", "ds.lemma5_2", "ds.lemma5_1", "ds.theorem5_3",
    "ds.corollary_ii", "ds.constant_step_floor", "ds.corollary_decaying", "erratum.constant_gamma_floor", "ds.pep.absorption",
    # 2026-12-04, stop 30: the quick runs of 2.8 to 9.9 CPU-s (checks/runtime/costs.py) that kept the default suite over 5 min
    "fednmap.spep.theorem8_existence", "fednmap.nat_nor_relation", "fednmap.theorem5.conditions",
    "fednmap.pep.shape_exponent",
})
#: parametrized cases that took more than 8 s at load 5-7 (pytest --durations, 2026-12-04); the test's other cases stay
SLOW_CASES = frozenset({
    "tests/checks/ds_fedproxgrad/test_decaying.py::test_planted_bug_bound_over_twice_the_slack[2.0-violated]",
    "tests/checks/fednmap/pep/test_encoding.py::test_symmetric_block_form_has_the_full_worst_case[2-2-2]",
    "tests/checks/fednmap/pep/test_encoding.py::test_symmetric_block_form_has_the_full_worst_case[2-2-3]",
    "tests/checks/pep/test_pepit_reference.py::test_fednmap_round_noise_equals_plain_pepit_encoding[2-2-1.0-0.1]",
    "tests/checks/test_readme_examples.py::test_readme_command_works[sweep tiny]",
    "tests/checks/test_readme_examples.py::test_readme_command_works[report fednmap_speedup]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof[fednmap.nat_nor_relation:fednmap_nat_nor_tight:bound]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof"
    "[fednmap.nor_in_subdifferential:fednmap_nor_in_subdifferential:bound]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof"
    "[fednmap.theorem8.floor_coupled:fednmap_floor_coupled:upper]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof"
    "[fednmap.theorem8.complexity_derived:fednmap_pl_complexity_derived:complexity]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof"
    "[fednmap.theorem8.complexity_derived:fednmap_pl_complexity_derived:eta_hat_for_variance]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof"
    "[fednmap.theorem8.complexity_derived:fednmap_pl_complexity_derived:rounds_for_transient]",
    "tests/theory/test_derived_reach.py::test_perturbing_the_claim_breaks_its_proof[fednmap.compact_form:fednmap_compact_form:z_next]",
    "tests/theory/test_proof_steps.py::test_step_is_proved[ds_pep_descent_parametric]",
    "tests/theory/test_teeth.py::test_perturbed_step_fails[fednmap_pl_complexity_derived:21600 -> 2160]",
    # 2026-12-04, stop 30 (CI run: 328.6 s inside pytest): cases of 5 to 7 s in its --durations
    "tests/checks/fednmap/pep/test_encoding.py::test_symmetric_block_form_has_the_full_worst_case[3-2-1]",
    "tests/checks/test_faults_round2.py::test_ctrl_c_while_the_pool_starts_is_one_line[3.0]",
})


@pytest.hookimpl(tryfirst=True)  # before the -m selection of the mark plugin
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark slow the cases of :data:`SLOW_CASES` and every test parametrized by a claim of :data:`HEAVY_CLAIMS`."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.nodeid in SLOW_CASES or any(isinstance(v, str) and v in HEAVY_CLAIMS for v in params.values()):
            item.add_marker(pytest.mark.slow)
    _COLLECTED.update((item.nodeid.split("::")[0], item.nodeid) for item in items)


#: (file, node id) of every test collected in this process, before the -m selection
_COLLECTED: set[tuple[str, str]] = set()


@pytest.fixture(scope="session")
def slow_cases_unmatched() -> list[str]:
    """The :data:`SLOW_CASES` whose file was collected but which match no test: a renamed test or case."""
    files, ids = {f for f, _ in _COLLECTED}, {i for _, i in _COLLECTED}
    return sorted(c for c in SLOW_CASES if c.split("::")[0] in files and c not in ids)


class _SharedResults:
    """Quick-profile results (seed 0) by claim id, computed once per session across xdist workers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.memo: dict[str, Any] = {}

    def _paths(self, check_id: str) -> tuple[Path, Path]:
        return self.folder / f"{check_id}.pickle", self.folder / f"{check_id}.lock"

    def _load(self, check_id: str) -> Any | None:
        path, _ = self._paths(check_id)
        if check_id not in self.memo and path.exists():
            self.memo[check_id] = pickle.loads(path.read_bytes())
        return self.memo.get(check_id)

    def _compute(self, check_id: str) -> Any:
        from fedbounds.checks.registry import CheckContext, get_check
        from fedbounds.checks.runtime.profiles import QUICK

        res = get_check(check_id).func(CheckContext(profile=QUICK, seed=0))
        path, _ = self._paths(check_id)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(res))
        os.replace(tmp, path)
        self.memo[check_id] = res
        return res

    def get(self, check_id: str, *, block: bool = True) -> Any | None:
        """The result of ``check_id``; None when ``block`` is false and another worker is computing it."""
        import fcntl

        if (res := self._load(check_id)) is not None:
            return res
        _, lock = self._paths(check_id)
        with open(lock, "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
            except BlockingIOError:
                return None
            try:
                return self._load(check_id) or self._compute(check_id)
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def many(self, check_ids: Sequence[str]) -> dict[str, Any]:
        """Every result of ``check_ids``: those nobody is computing first (computed here), then wait for the rest."""
        out: dict[str, Any] = {}
        pending = list(check_ids)
        while pending:
            left = []
            for cid in pending:
                res = self.get(cid, block=False)
                if res is None:
                    left.append(cid)
                else:
                    out[cid] = res
            if len(left) == len(pending):  # all busy elsewhere: wait for the first
                out[left[0]] = self.get(left[0])
                left = left[1:]
            pending = left
        return {cid: out[cid] for cid in check_ids}


@pytest.fixture(autouse=True)
def _ctrl_c_reaches_the_tests() -> None:
    """Undo an 'ignore SIGINT' before each test. A process started with SIGINT ignored (an asynchronous job of a shell
    without job control), or a test process whose SIGINT disposition something left at SIG_IGN, installs no
    KeyboardInterrupt handler, and every process the tests start inherits the ignore: the Ctrl-C tests then hang or
    fail for a reason outside the code under test. Seen once, in a CI run on a fresh clone: an xdist worker with SIGINT
    ignored waited 600 s on the stopped solver of ``test_ctrl_c_kills_the_solver_process_at_once...``. A handled
    signal is reset to its default across exec, so restoring Python's handler restores it in subprocesses too."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def _shared_results(tmp_path_factory: pytest.TempPathFactory) -> _SharedResults:
    base = tmp_path_factory.getbasetemp()
    # an xdist worker's base is <session base>/popen-gwN: the session base is shared by the run's workers only
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "fedbounds-quick-results"
    folder.mkdir(exist_ok=True)
    return _SharedResults(folder)


@pytest.fixture(scope="session")
def heavy_claims() -> frozenset[str]:
    """:data:`HEAVY_CLAIMS`, for tests that pick the claims of the default run."""
    return HEAVY_CLAIMS


@pytest.fixture(scope="session")
def quick_result(_shared_results: _SharedResults) -> Callable[[str], Any]:
    """``quick_result(check_id)``: the claim's quick-profile CheckResult (seed 0), computed once per session."""
    return _shared_results.get


@pytest.fixture(scope="session")
def quick_results(_shared_results: _SharedResults) -> Callable[[Sequence[str]], dict[str, Any]]:
    """``quick_results(ids)``: {id: CheckResult} for several claims, starting with those no other worker computes."""
    return _shared_results.many
