"""Answer extraction and matching: the failure cases peer harnesses report, and refusals."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paperkit.methods.cogmath.extract import (
    ExtractConfig,
    answers_match,
    equivalent,
    extract_answer,
    format_number,
    is_refusal,
    numbers_in,
    parse_answer,
)


@pytest.mark.parametrize("response, reference", [
    ("The total cost is $1,234.50.", "1234.5"),
    ("She sells 9 eggs.\n#### 18", "18"),
    (r"So the answer is \boxed{3/4}.", "0.75"),
    (r"Therefore \boxed{\frac{3}{4}}", "3/4"),
    (r"\boxed{\dfrac{3}{4}}", "0.75"),
    ("x = -3", "-3"),
    ("#### −3", "-3"),
    ("He ends up with -$3.", "-3"),
    ("The answer is $70,000.", "70000"),
    (r"\boxed{1{,}234}", "1234"),
    (r"\boxed{\$18}", "18"),
    (r"\boxed{18\%}", "18"),
    ("The percentage is 25%", "25"),
    (r"\boxed{2\sqrt{2}}", "2*sqrt(2)"),
    (r"\boxed{1+\sqrt{2}}", "2.414"),  # a reference written rounded to 3 places
    ("Final Answer: The final answer is 42. I hope it is correct.", "42"),
    ("16 - 3 - 4 = 9 eggs, and 9 * 2 = $18", "18"),  # fallback: the last number
    ("#### 5/2", "2.5"),
])
def test_matches(response, reference):
    ok, got = answers_match(response, reference)
    assert ok, (response, reference, got)


@pytest.mark.parametrize("response, reference", [
    ("#### 18", "-18"),  # the sign is kept
    ("x = -3", "3"),
    ("The answer is 4.46", "4.5"),  # rounding allowance needs >= 2 written decimals
    ("#### 1,234", "1.234"),
    ("#### 70007", "70000"),
    ("I cannot solve this.", "5"),
])
def test_mismatches(response, reference):
    assert not answers_match(response, reference)[0]


def test_first_marker_precedence():
    # a run-on generation keeps asking and answering its own questions: the first #### counts
    text = "Janet has 9 eggs left.\n#### 18\n\nQuestion: Tom has 3 apples...\nAnswer: ... #### 7"
    assert extract_answer(text).exact == 18
    # marker priority: #### beats "answer is" wherever they occur
    assert extract_answer("The answer is 5. Then again, #### 18").exact == 18
    assert extract_answer(r"The answer is 5 \boxed{6}").exact == 6
    # configurable: the last occurrence, or no fallback
    assert extract_answer(text, ExtractConfig(occurrence="last")).exact == 7
    assert not extract_answer("I think it is 12", ExtractConfig(fallback="none")).found
    assert extract_answer("3 then 12", ExtractConfig(fallback="first")).exact == 3


@pytest.mark.parametrize("text, value", [
    ("The answer is 5 - 2 = 3.", 3),
    ("The answer is 5 - 2 = 3. Next, 8 more.", 3),
    ("#### 16 - 3 - 4 = 9", 9),
    ("Final answer: 3 + 4 = 7 apples", 7),
    ("The answer is x = -3", -3),
    ("The final answer is $5 \\times 2 = 10$.", 10),
    ("The answer is 7 = 3 + 4", 7),
    ("The answer is 12 (= 3 × 4).", 12),  # a parenthetical remark is not the result
    ("The answer is 18 apples for the 3 kids.", 18),  # no "=": the first number, as before
    ("The answer is 3. Then 5 more.", 3),
])
def test_result_inside_a_marker_line(text, value):
    assert extract_answer(text).exact == value


def test_subtraction_is_not_a_sign():
    assert [n.exact for n in numbers_in("24 - 6 leaves 18; (4) - 1; 3-2")] == [24, 6, 18, 4, 1, 3, 2]
    assert [n.exact for n in numbers_in("with -3, x = -2; −5")] == [-3, -2, -5]
    assert extract_answer("So she has 10 - 3").exact == 3  # fallback: the last number, not -3
    assert extract_answer("He ends up with -$3.").exact == -3


def test_marker_without_number_is_no_answer():
    assert not extract_answer("#### unsolvable").found
    assert not extract_answer("").found and not extract_answer(None).found


@pytest.mark.parametrize("text", [
    "The problem cannot be solved because the price is missing.",
    "There is not enough information to determine the answer.",
    "This text doesn't make sense, so I can't solve it.",
    "It is impossible to determine how many apples remain.",
    "The question is unsolvable as stated.",
])
def test_refusals(text):
    assert is_refusal(text)


@pytest.mark.parametrize("text", [
    "She has 18 apples.\n#### 18",
    "The problem can be solved easily: #### 4",
    "Although some information is missing, I assume 3. #### 3",  # commits to a number: not a refusal
    "",
])
def test_not_refusals(text):
    assert not is_refusal(text)


BROAD = ExtractConfig(refusals=("is missing", "cannot be solved", "not enough information"))


@pytest.mark.parametrize("text", [
    # a refusal phrase in passing, then a committed result: an answer, not a refusal
    "Let me see what is missing here: 3 + 4 = 7. The total is 7.",
    "It cannot be solved exactly. Assuming she ate 2, she has 5 left.",
    "Not enough information is given, so I will guess.\nShe pays $12.",
])
def test_a_concluding_result_is_no_refusal(text):
    assert not is_refusal(text, BROAD, inquiry="Tom has 3 apples and 4 pears. How many does she have?")
    assert not is_refusal(text, BROAD)


@pytest.mark.parametrize("text", [
    # refusals that mention numbers: in the refusing sentence, or restating numbers the inquiry gives
    "The problem cannot be solved because we do not know how many of the 12 apples she ate.",
    "The problem cannot be solved. We know she has 12 apples and 3 pears, but not how many she ate.",
    "It cannot be solved for these reasons:\n1. the number eaten is missing\n2. so is the price",
    "Step 1: she has 12 apples. Step 2: 12 - ? apples. There is not enough information to finish.",
])
def test_refusals_mentioning_numbers(text):
    assert is_refusal(text, BROAD, inquiry="Ann has 12 apples and 3 pears. She eats some. How many are left?")


def test_broad_phrases_are_not_refusals_by_default():
    for text in ("Let me see what is missing here: 3 + 4 = 7.", "The list lacks the total, which is 7",
                 "It is unclear what 'each' means, so read it as 7", "The sum is incomplete until we add 7"):
        assert not is_refusal(text)


def test_refusal_phrases_configurable():
    cfg = ExtractConfig(refusals=("no idea",))
    assert is_refusal("No idea, honestly.", cfg)
    assert not is_refusal("The problem cannot be solved.", cfg)


def test_config_validation():
    from paperkit.core.errors import ConfigError

    with pytest.raises(ConfigError):
        ExtractConfig(occurrence="middle")
    with pytest.raises(ConfigError):
        ExtractConfig.from_mapping({"markers": "####"})
    with pytest.raises(ConfigError):
        ExtractConfig.from_mapping({"colour": 1})


@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=64))
def test_format_parse_roundtrip(x):
    s = format_number(x)
    assert parse_answer(s).exact == x
    assert extract_answer(f"so we get\n#### {s}").exact == x


@given(st.integers(min_value=-10**9, max_value=10**9))
def test_thousands_separators(n):
    text = f"The result is ${n:,}." if n >= 0 else f"The result is -${-n:,}."
    assert extract_answer(text).exact == n


def test_symbolic_equivalence():
    assert equivalent(parse_answer(r"\frac{\sqrt{8}}{2}"), parse_answer(r"\sqrt{2}"))
    assert not equivalent(parse_answer(r"\sqrt{3}"), parse_answer(r"\sqrt{2}"))
    assert parse_answer(r"\frac{6}{8}").exact == Fraction(3, 4)
