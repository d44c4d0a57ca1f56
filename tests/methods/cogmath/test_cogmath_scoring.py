"""Scoring invariants and a hand-computed relative-pass-rate fixture."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperkit.methods.cogmath.extract import ExtractConfig
from paperkit.methods.cogmath.scoring import explain_keys, judge_verdict, rule_explain, score_row, summarize
from paperkit.methods.cogmath.sources import make_row


def rows_for(problems):
    """problems: {pid: set of available dimensions}"""
    rows = []
    for pid, dims in problems.items():
        rows.append(make_row(pid, 0, "q", "answer", "1"))
        for d in range(1, 10):
            if d in dims:
                rows.append(make_row(pid, d, "q", "unsolvable" if d in (2, 3) else "answer", "1"))
    return rows


def scores_for(verdicts):
    return [{"problem": p, "dimension": d, "pass": int(v), "status": "x", "extracted": ""}
            for (p, d), v in verdicts.items()]


def test_hand_computed_three_problem_fixture():
    # A: original right; passes D1, D2, D5; fails D3. B: original right; lacks D3; passes D1, D2, D3?-, D5.
    # C: original wrong; passes D1, D2, D3, D5.  Only D1, D2, D3, D5 exist (A and C have all four; B lacks D3).
    problems = {"A": {1, 2, 3, 5}, "B": {1, 2, 5}, "C": {1, 2, 3, 5}}
    verdicts = {("A", 0): 1, ("A", 1): 1, ("A", 2): 1, ("A", 3): 0, ("A", 5): 1,
                ("B", 0): 1, ("B", 1): 1, ("B", 2): 0, ("B", 5): 1,
                ("C", 0): 0, ("C", 1): 1, ("C", 2): 1, ("C", 3): 1, ("C", 5): 1}
    s = summarize(rows_for(problems), scores_for(verdicts))
    # Pass_0 = {A, B}: accuracy 2/3. A fails D3, B fails D2: nobody is mastered.
    assert s["accuracy"] == round(2 / 3, 6) and s["pass_rate"] == 0.0
    assert s["overestimation"] == round(2 / 3, 6)
    d = s["dimensions"]
    assert d["1"]["rpr"] == 1.0  # A, B pass D1
    assert d["2"]["rpr"] == 0.5  # A passes, B fails
    assert d["3"]["rpr"] == 0.0  # only A has D3 among Pass_0, and fails it
    assert d["5"]["rpr"] == 1.0
    assert d["4"]["rpr"] is None and d["4"]["n"] == 0  # no problem has D4
    assert d["3"]["n"] == 2 and d["3"]["passed"] == 1 and d["3"]["pass_rate"] == 0.5  # A fails, C passes
    # stage 1 = D1-D4: A fails D3, B fails D2 → 0/2; stage 2 = D5 only → 2/2; stage 3: none available
    assert s["stages"]["1"]["rpr"] == 0.0 and s["stages"]["2"]["rpr"] == 1.0 and s["stages"]["3"]["rpr"] is None
    assert s["n_missing_dimensions"] == 5 + 6 + 5


def test_mastery_needs_the_original_and_every_available_dimension():
    problems = {"A": set(range(1, 10))}
    all_pass = {("A", d): 1 for d in range(10)}
    assert summarize(rows_for(problems), scores_for(all_pass))["pass_rate"] == 1.0
    for d in range(10):
        v = dict(all_pass)
        v[("A", d)] = 0
        assert summarize(rows_for(problems), scores_for(v))["pass_rate"] == 0.0
    # a missing verdict (e.g. a failed call never scored) is not a pass
    v = dict(all_pass)
    del v[("A", 4)]
    assert summarize(rows_for(problems), scores_for(v))["pass_rate"] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sets(st.integers(1, 9)), st.lists(st.booleans(), min_size=10, max_size=10)),
                min_size=1, max_size=12))
def test_pass_rate_never_exceeds_accuracy(data):
    problems = {f"p{i}": dims for i, (dims, _) in enumerate(data)}
    verdicts = {}
    for i, (dims, bits) in enumerate(data):
        verdicts[(f"p{i}", 0)] = bits[0]
        for d in dims:
            verdicts[(f"p{i}", d)] = bits[d]
    s = summarize(rows_for(problems), scores_for(verdicts))
    assert 0.0 <= s["pass_rate"] <= s["accuracy"] <= 1.0
    assert s["overestimation"] >= 0
    mastered = {p for p, dims in problems.items() if verdicts[(p, 0)] and all(verdicts[(p, d)] for d in dims)}
    assert s["pass_rate"] == round(len(mastered) / len(problems), 6)
    for k, d in s["dimensions"].items():
        base = [p for p, dims in problems.items() if int(k) in dims and verdicts[(p, 0)]]
        if not base:
            assert d["rpr"] is None
            continue
        # every mastered problem that has dimension k counts in RPR_k's numerator
        assert d["rpr"] * len(base) >= sum(1 for p in mastered if int(k) in problems[p]) - 1e-5


def test_score_row_statuses():
    cfg = ExtractConfig()
    ans = make_row("p", 6, "q", "answer", "18")
    assert score_row(ans, "so #### 18", None, cfg)["pass"] is True
    assert score_row(ans, "#### 17", None, cfg)["status"] == "wrong"
    assert score_row(ans, "no idea", None, cfg)["status"] == "no_answer"
    assert score_row(ans, None, "HTTP 500", cfg) == {"problem": "p", "dimension": 6, "pass": False,
                                                      "status": "error", "extracted": ""}
    uns = make_row("p", 3, "q", "unsolvable", None)
    assert score_row(uns, "It cannot be solved: the price is missing.", None, cfg)["pass"] is True
    assert score_row(uns, "#### 18", None, cfg)["pass"] is False
    assert score_row(uns, None, "timed out", cfg)["pass"] is False


def test_explain_rows_rule_and_llm_judge():
    cfg = ExtractConfig()
    row = make_row("p", 8, "Why does she sell exactly 9 eggs?", "explain", "9",
                   reference_text="16 - 3 - 4 = 9 eggs remain, which she sells.")
    assert rule_explain("Because 16 - 7 leaves 9 eggs to sell.", row, cfg)
    assert not rule_explain("Because she likes eggs.", row, cfg)
    assert score_row(row, "whatever", None, cfg, judge_response="Thought: ok\nAction: Yes")["pass"] is True
    assert score_row(row, "whatever", None, cfg, judge_response="Action: No")["pass"] is False
    assert score_row(row, "whatever", None, cfg, judge_response=None, judge_error="HTTP 500")["status"] == "judge_error"


def test_rule_explain_ignores_quantities_the_inquiry_gives():
    cfg = ExtractConfig()
    # official D8 layout: the question names the step's result, the explanation how it is reached
    row = make_row("p", 8, "Why does Mina sell exactly 18 rolls?", "explain", "18",
                   reference_text="She starts with 24 and gives away 6, and 24 - 6 leaves 18 rolls to sell.")
    assert [str(k) for k in explain_keys(row)] == ["24", "6"]
    assert not rule_explain("She sells 18 rolls because that is how many she sells.", row, cfg)
    assert score_row(row, "Exactly 18 rolls are sold.", None, cfg)["status"] == "misses_key"
    assert rule_explain("She baked 24 and gave her aunt 6, which leaves 18.", row, cfg)
    assert score_row(row, "24 - 6 = 18", None, cfg) == {"problem": "p", "dimension": 8, "pass": True,
                                                         "status": "mentions_key", "extracted": ""}
    # a reference that only repeats the inquiry's numbers gives the rule nothing to check: no pass
    bare = make_row("p", 8, "Why does Mina sell exactly 18 rolls?", "explain", "18",
                    reference_text="Because 18 rolls are left.")
    assert explain_keys(bare) == []
    assert score_row(bare, "Because 18 rolls are left.", None, cfg)["status"] == "no_key"
    assert score_row(bare, "Because 18 rolls are left.", None, cfg)["pass"] is False


@pytest.mark.parametrize("text, verdict", [("Thought: fine.\nAction: Yes", True), ("Action:No", False),
                                           ("Action: **Yes**", True), ("Yes.", True), ("", None),
                                           ("Action: No ... on reflection Action: Yes", True), ("maybe", None)])
def test_judge_verdict(text, verdict):
    assert judge_verdict(text) is verdict
