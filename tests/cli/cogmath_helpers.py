"""Shared helpers for the cogmath CLI tests."""

import json


def summary_line(r):
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    return json.loads(lines[0])


def one_line_error(r, code):
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], r.stderr
    return lines[0]


