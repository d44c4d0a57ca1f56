"""Prompt templates: placeholder filling."""

from paperkit.methods.cogmath.prompts import fill, load_prompts


def test_fill_is_single_pass():
    # a problem that itself contains "{answer}" must not get the reference injected by a later placeholder
    t = "Problem: {question}\nIts answer is {answer}."
    out = fill(t, question="Say {answer} aloud. What is {solution}?", answer="42")
    assert out == "Problem: Say {answer} aloud. What is {solution}?\nIts answer is 42."
    # the order of the keyword arguments does not matter either
    assert fill(t, answer="42", question="Q {question}") == "Problem: Q {question}\nIts answer is 42."


def test_fill_leaves_other_braces_and_blanks_none():
    assert fill(r"\frac{1}{2} {note}{x}", note=None) == r"\frac{1}{2} {x}"
    assert fill("{a}", **{}) == "{a}"
    assert fill(load_prompts().solve, inquiry="Tom has 3 {inquiry} apples.").count("{inquiry}") == 1
