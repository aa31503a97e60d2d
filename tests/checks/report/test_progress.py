"""Progress: a bar only on a terminal; in a log, one plain line per finished item and no carriage returns."""

import io

from fedbounds.checks.report.progress import LineProgress, progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_one_line_per_finished_item_and_no_carriage_return() -> None:
    out = io.StringIO()
    bar = progress(2, desc="claims", unit="claim", stream=out)
    assert isinstance(bar, LineProgress)
    bar.set_description("fednmap.theorem8")
    bar.set_postfix_str("running")
    bar.update(1, result="holds")
    bar.set_description("ds.lemma5_2")
    bar.update(1, result="violated")
    bar.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert [line.split(" (")[0] for line in lines] == ["[1/2 claim] fednmap.theorem8: holds", "[2/2 claim] ds.lemma5_2: violated"]


def test_a_terminal_gets_a_bar_and_disabled_means_silent() -> None:
    assert not isinstance(progress(3, stream=_Tty()), LineProgress)
    out = io.StringIO()
    bar = progress(3, stream=out, enabled=False)
    bar.update(1, result="holds")
    assert out.getvalue() == ""
