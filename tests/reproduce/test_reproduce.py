"""paperkit reproduce: verdicts from numbers, resume after an interrupt, one real claim, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperkit.core.runs import RunDir
from paperkit.reproduce import criteria, runner
from paperkit.reproduce.criteria import AllOf, Interval, Order, RatioAtLeast, RatioAtMost, SeedTest
from paperkit.reproduce.registry import Claim

# ------------------------------------------------------------------------------ criteria, synthetic
SEEDS3 = [{"a": 1.0, "b": 2.0}, {"a": 1.5, "b": 2.5}, {"a": 3.0, "b": 2.0}]


def test_unmeetable_criterion_does_not_hold():
    assert Interval("a", 100.0, 101.0).verdict(SEEDS3).verdict == criteria.FAILS
    assert RatioAtLeast("a", "b", 1e6).verdict(SEEDS3).verdict == criteria.FAILS


def test_ratio_against_a_non_positive_baseline_does_not_hold():
    """Returns -1.6 vs -0.7: the ratio 2.3 would pass "at least 90%" although the first is worse."""
    v = RatioAtLeast("a", "b", 0.9).verdict([{"a": -1.6, "b": -0.7}])
    assert v.verdict == criteria.FAILS and "not a comparison" in v.reason
    assert RatioAtMost("a", "b", 10.0).verdict([{"a": 1.0, "b": 0.0}]).verdict == criteria.FAILS


def test_value_inside_interval_holds():
    v = Interval("a", 1.0, 2.0).verdict(SEEDS3)  # mean 1.83
    assert v.verdict == criteria.HOLDS and "1.833" in v.reason


def test_order_on_some_seeds_is_partly():
    assert Order("a", "b").verdict(SEEDS3).verdict == criteria.PARTLY
    assert Order("a", "b").verdict(SEEDS3[:2]).verdict == criteria.HOLDS
    assert Order("a", "b", higher_is_better=True).verdict(SEEDS3[:2]).verdict == criteria.FAILS


def test_ratio_and_seed_test():
    assert RatioAtMost("a", "b", 1.0).verdict(SEEDS3).verdict == criteria.HOLDS  # 1.83/2.17
    clear = [{"x": 10.0 + i, "y": 1.0 + 0.1 * i} for i in range(5)]
    assert SeedTest("x", "y", higher_is_better=True, confidence=0.95).verdict(clear).verdict == criteria.HOLDS
    noisy = [{"x": 1.1, "y": 1.0}, {"x": 0.9, "y": 1.05}, {"x": 1.2, "y": 1.0}]
    assert SeedTest("x", "y", higher_is_better=True, confidence=0.95).verdict(noisy).verdict == criteria.PARTLY


def test_all_of_takes_the_weakest_part():
    holds, partly, fails = Interval("a", 0.0, 10.0), Order("a", "b"), Interval("a", 100.0, 101.0)
    assert AllOf((holds, holds)).verdict(SEEDS3).verdict == criteria.HOLDS
    v = AllOf((holds, partly)).verdict(SEEDS3)
    assert v.verdict == criteria.PARTLY and v.reason.count("(") >= 2 and "(holds)" in v.reason
    assert AllOf((partly, fails, holds)).verdict(SEEDS3).verdict == criteria.FAILS
    assert AllOf((fails, holds)).shown == "a"


# ---------------------------------------------------------------- runner, synthetic claims via scripts
SCRIPT = """import json, os, sys
out, seed, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if marker != "-" and not os.path.exists(marker):
    sys.stderr.write("simulated crash: no marker\\n"); sys.exit(4)
json.dump({"v": 1.0 + seed, "w": 5.0}, open(os.path.join(out, "m.json"), "w"))
"""


def _measure(d: Path) -> dict:
    return json.loads((d / "m.json").read_text())


def _claim(tmp_path: Path, cid: str, criterion, marker: str = "-") -> Claim:
    script = tmp_path / "step.py"
    script.write_text(SCRIPT)
    return Claim(cid, "conformal-cv", "synthetic", "nowhere", "-", ((str(script), "{dir}", "{seed}", marker),),
                 _measure, criterion, seeds=(0, 1))


def _stable(results):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in results]


def test_resume_after_interrupt_gives_the_same_report(tmp_path):
    marker = tmp_path / "marker"
    claims = [_claim(tmp_path, "syn/ok", Interval("v", 0.0, 10.0)),
              _claim(tmp_path, "syn/crashy", Order("v", "w"), marker=str(marker))]
    run = RunDir(tmp_path / "r").prepare({"x": 1}, command="reproduce")
    first = runner.run_claims(claims, run, "quick", jobs=2, is_command=lambda c: True)
    assert [r["verdict"] for r in first] == [criteria.HOLDS, criteria.ERROR]
    assert "simulated crash" in first[1]["reason"]
    marker.write_text("")
    ok_checkpoint = run.checkpoint_path("claim-syn--ok.json")
    mtime = ok_checkpoint.stat().st_mtime_ns
    resumed_run = RunDir(tmp_path / "r", resume=True).prepare({"x": 1}, command="reproduce")
    resumed = runner.run_claims(claims, resumed_run, "quick", is_command=lambda c: True)
    assert ok_checkpoint.stat().st_mtime_ns == mtime  # the finished claim was loaded, not rerun
    fresh = runner.run_claims(claims, RunDir(tmp_path / "f").prepare({"x": 1}, command="reproduce"), "quick",
                              is_command=lambda c: True)
    assert _stable(resumed) == _stable(fresh)
    assert [r["verdict"] for r in resumed] == [criteria.HOLDS, criteria.HOLDS]  # v = 1, 2 < w = 5 on both seeds


def test_a_relative_run_dir_works(tmp_path, monkeypatch):
    """reproduce --run-dir out/quick (relative, as examples/Makefile calls it): the steps run inside their
    seed folder, so a relative {dir} used to nest their outputs one level too deep and every claim erred."""
    monkeypatch.chdir(tmp_path)
    run = RunDir(Path("out") / "quick").prepare({"x": 1}, command="reproduce")
    (res,) = runner.run_claims([_claim(tmp_path, "syn/ok", Interval("v", 0.0, 10.0))], run, "quick",
                               is_command=lambda c: True)
    assert res["verdict"] == criteria.HOLDS, res.get("reason")


COUNTING = """import json, os, sys
out, seed, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(log, "a") as f:
    f.write(out + "\\n")
json.dump({"v": 1.0 + seed, "w": 5.0}, open(os.path.join(out, "m.json"), "w"))
"""


def test_claims_of_one_experiment_run_it_once(tmp_path):
    """Two claims with the same steps and seeds share one folder; the steps run once per seed, also with
    jobs > 1 and on --resume; a claim with other steps runs its own."""
    script, log = tmp_path / "count.py", tmp_path / "runs.log"
    script.write_text(COUNTING)
    steps = ((str(script), "{dir}", "{seed}", str(log)),)
    a = Claim("syn/a", "conformal-cv", "s", "w", "-", steps, _measure, Interval("v", 0.0, 10.0), seeds=(0, 1))
    b = Claim("syn/b", "conformal-cv", "s", "w", "-", steps, _measure, Order("v", "w"), seeds=(0, 1))
    c = Claim("syn/c", "conformal-cv", "s", "w", "-", steps, _measure, Order("v", "w"), seeds=(0,))
    run = RunDir(tmp_path / "r").prepare({}, command="reproduce")
    res = runner.run_claims([a, b, c], run, "quick", jobs=3, is_command=lambda _: True)
    assert [r["verdict"] for r in res] == [criteria.HOLDS] * 3
    assert res[0]["measurements"] == res[1]["measurements"] == [{"v": 1.0, "w": 5.0}, {"v": 2.0, "w": 5.0}]
    runs = log.read_text().splitlines()
    assert sorted(Path(x).parent.name for x in runs) == ["syn--a", "syn--a", "syn--c"]
    assert not (run.path / "claims" / "syn--b").exists()
    # a fresh report over the same folder after b's checkpoint is gone: b measures a's finished runs
    run.checkpoint_path("claim-syn--b.json").unlink()
    again = runner.run_claims([a, b], RunDir(tmp_path / "r", resume=True).prepare({}, command="reproduce"),
                              "quick", is_command=lambda _: True)
    assert _stable(again) == _stable(res[:2]) and len(log.read_text().splitlines()) == 3


def test_not_built_tool_is_not_run(tmp_path):
    c = _claim(tmp_path, "syn/x", Interval("v", 0.0, 1.0))
    c2 = Claim("syn/y", "conformal-cv", "s", "w", "-", (("no-such-tool", "--x"),), _measure, c.criterion)
    run = RunDir(tmp_path / "r").prepare({}, command="reproduce")
    (r,) = runner.run_claims([c2], run, "quick")
    assert r["verdict"] == criteria.NOT_RUN and "tool not built" in r["reason"]
    md = runner.markdown([r], mode="quick")
    assert "not run (tool not built" in md


# ----------------------------------------------------------------------------------- the command
def test_one_real_claim_end_to_end_and_resume(pk, tmp_path):
    res = pk("reproduce", "disempower/mitigation", "--run-dir", tmp_path / "r", "-j", "1")
    assert res.exit_code == 0, res.stderr
    assert "disempower/mitigation" in res.stdout and "| holds |" in res.stdout
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["claims"][0]["verdict"] == criteria.HOLDS
    assert (tmp_path / "r" / "report.md").is_file() and (tmp_path / "r" / "figures").is_dir()
    again = pk("reproduce", "disempower/mitigation", "--run-dir", tmp_path / "r", "--resume")
    assert again.exit_code == 0, again.stderr
    assert json.loads((tmp_path / "r" / "report.json").read_text())["claims"] == report["claims"]


@pytest.mark.parametrize("args,needle", [
    (["no-such-paper", "--run-dir", "X"], "unknown paper or claim 'no-such-paper'"),
    (["conformal/nope", "--run-dir", "X"], "unknown paper or claim"),
    (["--quick", "--full", "--run-dir", "X"], "exclusive"),
    (["conformal"], "missing --run-dir"),
])
def test_bad_input_is_one_line_exit_2(pk, tmp_path, args, needle):
    args = [str(tmp_path / a) if a == "X" else a for a in args]
    res = pk("reproduce", *args)
    assert res.exit_code == 2
    assert needle in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "X").exists()


def test_list_prints_every_claim(pk):
    res = pk("reproduce", "--list")
    assert res.exit_code == 0
    from paperkit.reproduce.registry import load

    assert {line.split("\t")[0] for line in res.stdout.splitlines()} == {c.id for c in load()}


def test_docs_block_replaced_in_place_and_idempotent(tmp_path):
    from paperkit.reproduce import docs

    (tmp_path / "examples" / "syn").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# x\n\n## Reproducing the papers\n\n" + docs.BEGIN + "\nold\n" + docs.END + "\n\n## Next\n")
    (tmp_path / "examples" / "syn" / "README.md").write_text("# syn\n\nhand-written table\n")
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"id": "syn/a", "where": "Tab. 1", "paper_value": "1", "metric": "v", "ours_mean": 1.0, "ours_se": 0.1,
             "seeds": [0, 1], "verdict": "holds", "reason": "r", "seconds": 3.0}]
    (run / "report.json").write_text(json.dumps({"mode": "quick", "total_seconds": 3.0, "claims": rows}))
    assert len(docs.update(run, tmp_path)) == 2
    top = (tmp_path / "README.md").read_text()
    assert "\nold\n" not in top and "| syn/a |" in top and top.endswith("## Next\n")
    assert "hand-written table" in (tmp_path / "examples" / "syn" / "README.md").read_text()
    assert docs.update(run, tmp_path) == []  # a second pass changes nothing


def _report(run: Path, rows: list[dict], mode: str = "quick") -> Path:
    run.mkdir(exist_ok=True)
    (run / "report.json").write_text(json.dumps({"mode": mode, "total_seconds": 1.0, "claims": rows}))
    return run


def _row(cid: str, mean: float, verdict: str = "holds", seconds: float = 10.0) -> dict:
    return {"id": cid, "where": "w", "paper_value": "p", "metric": "v", "ours_mean": mean, "ours_se": None,
            "seeds": [0], "verdict": verdict, "reason": f"reason {cid} {mean}", "seconds": seconds}


def test_docs_merge_a_partial_report_by_claim_id(tmp_path):
    """A report of one paper replaces that paper's rows and reasons and keeps the others'; the total is the
    rows' sum; a claim new to the block goes after its paper's rows; merging twice changes nothing."""
    from paperkit.reproduce import docs

    (tmp_path / "README.md").write_text("# x\n\n## Reproducing the papers\n\nold text\n")
    full = [_row("a/one", 1.0, seconds=5), _row("b/two", 2.0, seconds=7), _row("c/three", 3.0, "not run", 0)]
    docs.update(_report(tmp_path / "r1", full), tmp_path)
    docs.update(_report(tmp_path / "r2", [_row("b/two", 9.0, "does not hold", 40), _row("b/new", 4.0, seconds=1)]),
                tmp_path)
    top = (tmp_path / "README.md").read_text()
    rows = [line for line in top.splitlines() if line.startswith("| ") and not line.startswith("| claim")]
    assert [r.split(" | ")[0][2:] for r in rows] == ["a/one", "b/two", "b/new", "c/three"]
    assert "v = 9 (n=1) | does not hold | 40 s |" in rows[1] and "v = 1 (n=1)" in rows[0]
    notes = [line for line in top.splitlines() if line.startswith("- **")]
    assert notes == ["- **a/one** (holds): reason a/one 1.0", "- **b/two** (does not hold): reason b/two 9.0",
                     "- **b/new** (holds): reason b/new 4.0"]
    assert "each claim's row from its latest report; the claims took 46 s.\n\n| claim | where in the paper |" in top
    assert "| verdict | time |\n|---|---|---|---|---|---|\n| a/one |" in top and "old text" in top
    assert docs.update(tmp_path / "r2", tmp_path) == []
    # a report in the other mode, or one that covers every claim, replaces the block whole
    docs.update(_report(tmp_path / "r3", [_row("a/one", 5.0)], mode="full"), tmp_path)
    top = (tmp_path / "README.md").read_text()
    assert "| a/one |" in top and "| b/two |" not in top and "in full mode; the claims took 10 s" in top


def test_strict_exits_1_only_when_a_claim_does_not_hold(pk, tmp_path, monkeypatch):
    from paperkit.reproduce import registry

    impossible = _claim(tmp_path, "syn/impossible", Interval("v", 100.0, 101.0))
    monkeypatch.setattr(registry, "load", lambda packages=None: [impossible])
    monkeypatch.setattr(registry, "_is_command", lambda name: True)
    res = pk("reproduce", "syn/impossible", "--run-dir", tmp_path / "a")
    assert res.exit_code == 0 and "| does not hold |" in res.stdout
    res = pk("reproduce", "syn/impossible", "--run-dir", tmp_path / "a", "--resume", "--strict")
    assert res.exit_code == 1
    assert json.loads((tmp_path / "a" / "report.json").read_text())["claims"][0]["verdict"] == criteria.FAILS


def test_docs_refuses_a_missing_or_foreign_report_in_one_line(tmp_path, capsys):
    from paperkit.reproduce import docs

    (tmp_path / "README.md").write_text("# x\n")
    assert docs.main([str(tmp_path / "absent"), str(tmp_path)]) == 3
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.json").write_text('{"rows": []}')
    assert docs.main([str(tmp_path / "run"), str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "report.json" in err[0] and "not a paperkit reproduce report" in err[1]
    assert (tmp_path / "README.md").read_text() == "# x\n"
