"""The offline problem source: completeness and exact references of the nine inquiries."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import sympy

from paperkit.methods.cogmath import program, solver, synthetic
from paperkit.methods.cogmath.extract import parse_answer

# An interpreter written here, independent of program.execute: the meaning of each step, by hand.
WORDS = {"double": 2, "triple": 3, "half": Fraction(1, 2), "a third": Fraction(1, 3), "a quarter": Fraction(1, 4),
         "dozen": 12}


def step(kind, v, a, word, words):
    if kind == "init":
        return a[0]
    if kind == "gain":
        return v + a[0]
    if kind == "gain_groups":
        return v + a[0] * a[1]
    if kind == "lose":
        return v - a[0]
    if kind == "lose_pct":
        return v * (100 - a[0]) / 100
    if kind == "scale":
        return v * words[word]
    if kind == "lose_frac":
        return v * (1 - words[word])
    assert kind == "gain_dozen"
    return v + a[0] * words["dozen"]


def run(prog, words=WORDS):
    v = None
    values = []
    for s in prog.steps:
        v = step(s.kind, v, s.amounts, s.word, words)
        values.append(v)
    if prog.intermediate is not None:
        return values[prog.intermediate]
    q = prog.question
    return v if q.kind == "count" else (v / q.amount if q.kind == "share" else v * q.amount)


@pytest.fixture(scope="module")
def generated():
    return synthetic.generate(200, seed=7)


def test_all_nine_inquiries_exist(generated):
    problems, rows = generated
    assert len(problems) == 200
    got = Counter((r["problem"], r["dimension"]) for r in rows if r["judge"] == "accepted" and r["inquiry"])
    assert all(got[(p.id, d)] == 1 for p in problems for d in range(10))
    assert len(rows) == 200 * 10


def _ref(row):
    return parse_answer(row["reference"]).exact


def test_original_and_d1_d4_keep_the_answer(generated):
    problems, rows = generated
    by = {(r["problem"], r["dimension"]): r for r in rows}
    for p in problems:
        a = run(solver.parse_problem(p.text).program)
        assert a == p.answer == _ref(by[(p.id, 0)])
        for d in (1, 4):
            parsed = solver.parse_problem(by[(p.id, d)]["inquiry"])
            assert run(parsed.program) == a and _ref(by[(p.id, d)]) == a
        assert by[(p.id, 1)]["inquiry"] != p.text
        assert solver.parse_problem(by[(p.id, 4)]["inquiry"]).distractor_numbers


def test_d6_d7_d5_d8_references_equal_re_execution(generated):
    problems, rows = generated
    by = {(r["problem"], r["dimension"]): r for r in rows}
    for p in problems:
        for d in (5, 6, 7, 8):
            row = by[(p.id, d)]
            prog = solver.parse_problem(row["inquiry"]).program
            words = dict(WORDS)
            if prog.redefinition is not None:
                words[prog.redefinition[0]] = prog.redefinition[2]
            assert run(prog, words) == _ref(row), (d, row["inquiry"])
        d6 = solver.parse_problem(by[(p.id, 6)]["inquiry"]).program
        assert d6.inputs() != p.program.inputs() and _ref(by[(p.id, 6)]) != p.answer
        d7 = solver.parse_problem(by[(p.id, 7)]["inquiry"]).program
        assert d7.redefinition is not None and d7.redefinition[0] in p.text and _ref(by[(p.id, 7)]) != p.answer
        d5 = solver.parse_problem(by[(p.id, 5)]["inquiry"]).program
        assert d5.structure() == p.program.structure() and d5.lexicon.item != p.program.lexicon.item


def test_d9_references_are_the_unique_sympy_solution(generated):
    problems, rows = generated
    by = {(r["problem"], r["dimension"]): r for r in rows}
    x = sympy.Symbol("x")
    for i, p in enumerate(problems):
        row = by[(p.id, 9)]
        m = solver._BACKWARD_RE.match(row["inquiry"])
        masked = solver.parse_problem(m.group("inner")).program
        for slot in masked.slots():  # the test's own interpreter over sympy numbers
            v = masked.get(slot)
            masked = masked.set(slot, x if not isinstance(v, Fraction) else sympy.Rational(v.numerator, v.denominator))
        expr = run(masked, {k: sympy.Rational(Fraction(v).numerator, Fraction(v).denominator) for k, v in WORDS.items()})
        stated = parse_answer(m.group("ans")).exact
        ref = _ref(row)
        assert ref != p.answer
        # the reference solves the equation, and the equation is linear in x: the solution is unique
        assert expr.subs(x, sympy.Rational(ref.numerator, ref.denominator)) == sympy.Rational(stated.numerator,
                                                                                              stated.denominator)
        num, _ = sympy.fraction(sympy.together(expr - sympy.nsimplify(stated)))
        assert sympy.Poly(num, x).degree() == 1
        if i < 10:  # and sympy.solve agrees, on a sample (it is slow)
            sols = sympy.solve(sympy.Eq(expr, sympy.nsimplify(stated)), x)
            assert len(sols) == 1 and Fraction(str(sols[0])) == ref


def test_d2_is_a_different_permutation_and_d3_lacks_a_needed_quantity(generated):
    problems, rows = generated
    by = {(r["problem"], r["dimension"]): r for r in rows}
    for p in problems:
        d2 = by[(p.id, 2)]["inquiry"]
        assert sorted(d2.split()) == sorted(p.text.split()) and d2.split() != p.text.split()
        assert by[(p.id, 2)]["expected"] == by[(p.id, 3)]["expected"] == "unsolvable"
        d3 = solver.parse_problem(by[(p.id, 3)]["inquiry"]).program
        assert solver.missing_inputs(d3) and solver.symbolic_answer(d3).free_symbols


def test_same_seed_same_rows_and_problems_are_independent_of_n():
    _, a = synthetic.generate(5, seed=3)
    _, b = synthetic.generate(5, seed=3)
    _, c = synthetic.generate(8, seed=3)
    assert a == b and c[:len(a)] == a
    assert synthetic.generate(5, seed=4)[1] != a


def test_render_parse_roundtrip_random_programs():
    rng = np.random.default_rng(0)
    for _ in range(300):
        prog = program.random_program(rng, min_steps=1, max_steps=6)
        for words in (False, True):
            back = solver.parse_problem(program.render(prog, words=words).text).program
            assert [(s.kind, s.amounts, s.word) for s in back.steps] == [(s.kind, s.amounts, s.word) for s in prog.steps]
            assert run(back) == program.execute(prog)


def test_judge_rejects_bad_candidates():
    rng = np.random.default_rng(1)
    sp = synthetic.make_problem("t", rng)
    same = synthetic.Candidate(sp.text, "answer", sp.answer)
    assert synthetic.judge(1, sp, same)[0] is False
    assert synthetic.judge(2, sp, synthetic.Candidate(sp.text, "unsolvable", None))[0] is False  # not shuffled
    assert synthetic.judge(3, sp, synthetic.Candidate(sp.text, "unsolvable", None))[0] is False  # nothing missing
    wrong = synthetic.Candidate(program.render(program.resample_numbers(sp.program, rng)).text, "answer", sp.answer + 1)
    assert synthetic.judge(6, sp, wrong)[0] is False


def test_gaps_are_recorded_when_the_judge_keeps_rejecting(monkeypatch):
    rng = np.random.default_rng(2)
    sp = synthetic.make_problem("t", rng)
    monkeypatch.setitem(synthetic.PROPOSERS, 8, lambda sp, rng: synthetic.Candidate(sp.text, "answer", sp.answer))
    rows = synthetic.inquiries_for(sp, rng, max_retries=2)
    d8 = [r for r in rows if r["dimension"] == 8][0]
    assert d8["judge"] == "rejected" and d8["inquiry"] is None and d8["attempts"] == 2


def test_prepare_and_execute_generate_follow_the_settings():
    """The orchestration passes seed, steps and retries through: the same rows as calling the generator."""
    from paperkit.core.errors import UsageError
    from paperkit.methods.cogmath.run import GenerateSettings, execute_generate, prepare_generate

    s = GenerateSettings(seed=5, min_steps=3, max_steps=3, retries=1)
    result = execute_generate(prepare_generate(s, "synthetic:2"))
    assert result.rows == synthetic.generate(2, 5, max_retries=2, min_steps=3, max_steps=3)[1]
    with pytest.raises(UsageError, match="above --max-steps"):
        prepare_generate(GenerateSettings(min_steps=4, max_steps=3), "synthetic:2")
    with pytest.raises(UsageError, match="needs a language model"):
        prepare_generate(GenerateSettings(agents="llm"), "synthetic:2")
