"""The dispatcher: bad command lines end in one line on stderr and exit status 2, never a traceback."""

import pytest
from fedbounds.checks.cli import main


@pytest.mark.parametrize(
    "argv",
    [[], ["nonsense"], ["feasible", "fednmap", "--L", "x"], ["claims", "--status", "bogus"], ["check", "--profile", "huge"]],
)
def test_bad_command_lines_exit_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "error" in err and "Traceback" not in err


def test_value_errors_from_a_command_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["feasible", "fednmap", "--L", "1", "--rho", "0.1", "--n", "10", "--Q", "0", "--sigma", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedbounds: error:") and "Q" in err and len(err.strip().splitlines()) == 1
