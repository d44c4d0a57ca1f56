"""Model output is read, never run: a payload corpus through every extraction entry point.

Answers come from models (any OpenAI-compatible server, a shell program, a local HF model, a replayed
cache), so ``\\boxed{...}`` text is untrusted. Before the whitelist parser (mathparse.py), an answer
like ``__import__(__os__.name.strip(_.name)).system(chr(116)+...)`` passed the old character class and
sympy's ``parse_expr`` ran it. Each payload below must leave the sentinel file absent, never reach
``os.system``/``subprocess``/``eval``/``exec``, raise nothing, and finish quickly.
"""

import builtins
import os
import subprocess
import time
from fractions import Fraction

import pytest

from paperkit.methods.cogmath import mathparse
from paperkit.methods.cogmath.extract import (
    answers_match,
    equivalent,
    extract_answer,
    is_refusal,
    latex_to_sympy,
    parse_answer,
)


def _name(word):
    return f"__{word}__.name.strip(_.name)"  # a string from a symbol's name: no quotes needed


def _chars(text):
    return "+".join(f"chr({ord(c)})" for c in text)


def payloads(sentinel):
    cmd = f"touch {sentinel}"
    return [
        # the reported exploit: builtins reached through parse_expr's namespace, a shell command built by chr()
        f"__import__({_name('os')}).system({_chars(cmd)})",
        f"pi.evalf.__globals__.get(__builtins__.name).get(__import__.name).__call__({_name('os')})"
        f".system({_chars(cmd)})",
        f"pi.evalf.__globals__.get(__builtins__.name).get({_name('exec')})({_chars('open(' + repr(str(sentinel)) + ', chr(119))')})",
        f"eval({_chars('__import__(' + repr('os') + ').system(' + repr(cmd) + ')')})",
        f"exec({_chars('open(' + repr(str(sentinel)) + ', ' + repr('w') + ')')})",
        f"(lambda: __import__({_name('os')}).system({_chars(cmd)}))()",
        f"lambda x: __import__({_name('os')}).system({_chars(cmd)})",
        "().__class__.__bases__[0].__subclasses__()",
        "pi.__class__.__mro__",
        "Symbol.__init__.__globals__",
        "1 .__class__",
        "2.real",
        # unicode tricks: NFKC-normalised identifiers (fullwidth, mathematical letters), other digits
        f"ｅｖａｌ({_chars('1')})",
        f"𝐞𝐱𝐞𝐜({_chars('1')})",
        f"__ｉｍｐｏｒｔ__({_name('os')}).system({_chars(cmd)})",
        "٣ + ٤",
        "2\u200b+\u200b2",
        "\\sqrt{2}\u202e)(metsys",
        # LaTeX commands outside the whitelist
        "\\input{/etc/passwd}",
        "\\write18{touch x}",
        "\\def\\x{1}\\x",
        # size and nesting: bounded time, no RecursionError
        "(" * 5000 + "1" + ")" * 5000,
        "\\sqrt{" * 5000 + "2" + "}" * 5000,
        "\\frac{" * 3000 + "1}{2}" + "}" * 3000,
        "-" * 10000 + "1",
        "2^" * 5000 + "2",
        "10^10^10^10",
        "(10^1000)^(10^1000)",
        "9" * 20000,
        "1" + "+1" * 5000,
        "1e99999999",
        "exp(10^100)",
        "\\sqrt[99999999]{2}",
        "sin(" * 2000 + "1" + ")" * 2000,
    ]


@pytest.fixture
def guarded(monkeypatch):
    """Record any attempt to run a program or evaluate Python while extraction runs."""
    # warm up first: sympy and mpmath exec their own generated code while they are first imported
    assert equivalent(parse_answer(r"\sqrt{8}"), parse_answer(r"2\sqrt{2}"))
    assert answers_match(r"\boxed{1+\sqrt{2}}", "2.414")[0] and not equivalent(parse_answer("sin(1)"), parse_answer("1"))
    calls = []

    def record(name):
        def f(*a, **k):
            calls.append(name)
            raise AssertionError(f"{name} called from answer extraction")
        return f

    monkeypatch.setattr(os, "system", record("os.system"))
    monkeypatch.setattr(os, "popen", record("os.popen"))
    monkeypatch.setattr(subprocess, "Popen", record("subprocess.Popen"))
    monkeypatch.setattr(subprocess, "run", record("subprocess.run"))
    # the import machinery execs code objects; evaluating a *string* is what must never happen
    for name in ("eval", "exec"):
        real = getattr(builtins, name)

        def on_text(source, *a, _real=real, _name=name, **k):
            if isinstance(source, (str, bytes)):
                calls.append(_name)
                raise AssertionError(f"{_name} of text called from answer extraction")
            return _real(source, *a, **k)

        monkeypatch.setattr(builtins, name, on_text)
    return calls


def test_payloads_never_execute(tmp_path, guarded):
    sentinel = tmp_path / "PWNED"
    for p in payloads(sentinel):
        for text in (f"\\boxed{{{p}}}", f"#### {p}", f"The answer is {p}.", p):
            t0 = time.perf_counter()
            got = extract_answer(text)
            ok, _ = answers_match(text, "2")
            ref = parse_answer(p)
            equivalent(ref, parse_answer("2"))
            is_refusal(text)
            took = time.perf_counter() - t0
            assert took < 5.0, (p[:80], took)
            assert not ok or got.exact == 2, p[:80]
        assert guarded == [] and not sentinel.exists(), p[:80]


def test_payloads_are_not_answers():
    # every payload is outside the grammar (or over a bound): no expression is read from it
    for p in payloads("/nonexistent/x"):
        if p in ("2\u200b+\u200b2",):
            continue
        assert latex_to_sympy(p) is None, p[:80]


def test_bounds():
    assert mathparse.to_sympy("(" * (mathparse.MAX_DEPTH + 5) + "1" + ")" * (mathparse.MAX_DEPTH + 5)) is None
    assert mathparse.to_sympy("((((1))))") == 1
    assert mathparse.to_sympy("2^100") == 2 ** 100
    assert mathparse.to_sympy("2^200000") is None  # an exact power over the size bound
    assert mathparse.to_sympy("1" * (mathparse.MAX_DIGITS + 1)) is None
    assert mathparse.to_sympy("x" + "+x" * mathparse.MAX_TOKENS) is None


@pytest.mark.parametrize("text, value", [
    ("2\\sqrt{2}", "2*sqrt(2)"),
    ("1+\\sqrt{2}", "1 + sqrt(2)"),
    ("\\frac{\\sqrt{8}}{2}", "sqrt(2)"),
    ("\\frac{3}{4}", "3/4"),
    ("\\sqrt[3]{8}", "2"),
    ("2^3^2", "512"),
    ("-2^2", "-4"),
    ("2**-1", "1/2"),
    ("2^{10}", "1024"),
    ("\\pi/2", "pi/2"),
    ("1/2pi", "pi/2"),
    ("2 (3)", "6"),
    ("10\\times 3", "30"),
    ("5 \\cdot 2", "10"),
    ("6 ÷ 4", "3/2"),
    ("√2", "sqrt(2)"),
    ("2π", "2*pi"),
    ("sqrt 2", "sqrt(2)"),
    ("sin(1)", "sin(1)"),
    ("\\ln{2}", "log(2)"),
    ("abs(-2)", "2"),
    ("1,234+1", "1235"),
    ("2.5\\sqrt{2}", "5*sqrt(2)/2"),  # decimals are exact rationals
    ("1e3", "1000"),
])
def test_grammar(text, value):
    assert str(latex_to_sympy(text)) == value


@pytest.mark.parametrize("text", ["x", "3x", "3 4", "(2)3", "1/0", "\\frac{1}{0}", "2E", "2I", "apples",
                                  "3, 4", "\\log{0}", "", "+", "2+", "sqrt", "\\sqrt[x]{2}"])
def test_not_expressions(text):
    assert latex_to_sympy(text) is None


def test_symbolic_answers_still_compare():
    assert answers_match(r"\boxed{2\sqrt{2}}", "2*sqrt(2)")[0]
    assert answers_match(r"\boxed{\sqrt{8}}", "2*sqrt(2)")[0]
    assert answers_match(r"\boxed{1+\sqrt{2}}", "2.414")[0]
    assert not answers_match(r"\boxed{\sqrt{3}}", "2*sqrt(2)")[0]
    assert parse_answer("2pi").expr == "2*pi"  # not the number 2 followed by a word
    assert parse_answer(r"\frac{6}{8}").exact == Fraction(3, 4)


@pytest.mark.parametrize("text", [
    "sin(" * 7 + "1" + ")" * 7,  # sympy.simplify took seconds (and grows super-exponentially) on these
    "tan(" * 10 + "1" + ")" * 10 + "+exp(sin(cos(log(2))))",
    "+".join(f"\\sqrt{{{p}}}" for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53)),
])
def test_comparing_valid_but_heavy_answers_is_fast(text):
    assert equivalent(parse_answer("sin(1)"), parse_answer("sin(1)"))  # warm up sympy's lazy imports
    t0 = time.perf_counter()
    a = parse_answer(text)
    assert a.found
    assert not equivalent(a, parse_answer("2")) and equivalent(a, parse_answer(text))
    assert time.perf_counter() - t0 < 1.0
