"""cogmath-report bad input (its tables and plot are checked in test_cogmath_eval.py)."""

from .cogmath_helpers import one_line_error


def test_report_bad_input(pk, tmp_path):
    assert "summary.json" in one_line_error(pk("cogmath-report", tmp_path), 3)
    (tmp_path / "summary.json").write_text('{"x": 1}')
    assert "not a cogmath-eval summary" in one_line_error(pk("cogmath-report", tmp_path), 3)


def test_report_missing_run_is_bad_input(pk, tmp_path):
    line = one_line_error(pk("cogmath-report", tmp_path / "no-such-run"), 3)
    assert "no-such-run" in line and "no such run directory" in line
