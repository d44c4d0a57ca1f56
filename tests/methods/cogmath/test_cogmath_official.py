"""A 3-problem fixture in the official CogMath layout, one problem lacking a dimension.

The fixture's problems are written for this test (the official data is not redistributed).
"""

import json
from pathlib import Path

import pytest

from paperkit.core.errors import InputError
from paperkit.methods.cogmath import backends
from paperkit.methods.cogmath.cache import ResponseCache
from paperkit.methods.cogmath.prompts import load_prompts
from paperkit.methods.cogmath.run import evaluate
from paperkit.methods.cogmath.sources import read_official, validate_rows

FIXTURE = Path(__file__).parent / "data" / "official_3.json"


class Scripted(backends.Backend):
    """Answers by a table from inquiry text to response (a scripted model for a known verdict)."""

    def __init__(self, table, template):
        super().__init__("scripted")
        self.table = table
        self.prefix, _, self.suffix = template.partition("{inquiry}")

    def generate(self, prompt):
        inquiry = prompt[len(self.prefix):len(prompt) - len(self.suffix) if self.suffix else None]
        return self.table[inquiry]


def test_loads_with_expected_outcomes_and_references():
    problems, rows = read_official(FIXTURE)
    assert [p.id for p in problems] == ["TOY@0", "TOY@1", "TOY@2"]
    assert [p.answer for p in problems] == ["36", "53", "150"]
    by = {(r["problem"], r["dimension"]): r for r in rows}
    assert ("TOY@1", 7) not in by and len(rows) == 3 * 10 - 1
    assert by[("TOY@0", 1)]["reference"] == "36" and by[("TOY@0", 4)]["reference"] == "36"
    assert by[("TOY@0", 2)]["expected"] == by[("TOY@0", 3)]["expected"] == "unsolvable"
    assert by[("TOY@0", 5)]["reference"] == "36"  # "... earns 18 * 2 = $36."
    assert by[("TOY@1", 6)]["reference"] == "37" and by[("TOY@2", 6)]["reference"] == "120"
    assert by[("TOY@2", 9)]["reference"] == "60"  # "60 km"
    assert by[("TOY@0", 8)]["expected"] == "explain" and by[("TOY@0", 8)]["reference"] == "18"
    validate_rows(rows, "fixture")  # the imported rows are a valid inquiry file


def test_scores_a_scripted_model():
    problems, rows = read_official(FIXTURE)
    prompts = load_prompts()
    right = {("TOY@0", d): t for d, t in enumerate(["#### 36", "She earns $36.", "This cannot be solved.",
                                                     "Not enough information to answer.", "#### 36", "#### 36",
                                                     "#### 60", "#### 18", "Because 24 - 6 = 18.", "x = 24"])}
    right.update({("TOY@1", d): t for d, t in zip([0, 1, 2, 3, 4, 5, 6, 8, 9], [
        "#### 53", "#### 53", "The problem doesn't make sense.", "It cannot be determined.", "#### 53", "#### 53",
        "#### 37", "Because he lost 7 of his 60 pens, leaving 53.", "#### 5"], strict=True)})
    # TOY@2: right on the original but it answers the garbled D2 text with the memorised 150
    right.update({("TOY@2", d): t for d, t in enumerate(["#### 150", "150 km", "#### 150", "cannot be solved",
                                                         "#### 150", "#### 150", "#### 120", "#### 300",
                                                         "60 * 2.5 = 150 km", "#### 60"])})
    table = {r["inquiry"]: right[(r["problem"], r["dimension"])] for r in rows}
    res = evaluate(rows, backends.CachedBackend(Scripted(table, prompts.solve), ResponseCache(None)), prompts)
    s = res.summary
    assert s["accuracy"] == 1.0
    assert s["pass_rate"] == round(2 / 3, 6)  # TOY@1 is mastered though it lacks D7
    assert s["dimensions"]["2"]["rpr"] == round(2 / 3, 6)
    assert s["dimensions"]["7"]["n"] == 2 and s["dimensions"]["7"]["rpr"] == 1.0
    assert s["n_missing_dimensions"] == 1
    assert all(x["pass"] for x in res.scores if x["problem"] != "TOY@2" or x["dimension"] != 2)


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d["TOY@0"].pop("ori_question"), "lacks field 'ori_question'"),
    (lambda d: d["TOY@0"].pop("ori_answer"), "lacks field 'ori_answer'"),
    (lambda d: d["TOY@1"]["Dimension 6"].pop("inquiry answer"), "lacks 'inquiry answer'"),
    (lambda d: d["TOY@1"]["Dimension 1"].pop("inquiry"), "lacks 'inquiry'"),
    (lambda d: d.__setitem__("TOY@2", "text"), "is not an object"),
])
def test_missing_fields_are_named(tmp_path, mutate, match):
    data = json.loads(FIXTURE.read_text())
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=match):
        read_official(path)


def test_example_layout_without_originals_is_refused(tmp_path):
    # the repository's example_data.json has the dimensions but not ori_question/ori_answer
    path = tmp_path / "example.json"
    path.write_text(json.dumps({"X_0": {"Dimension 1": {"inquiry": "q"}}}))
    with pytest.raises(InputError, match="ori_question"):
        read_official(path)


def test_llm_judge_grades_explanations():
    problems, rows = read_official(FIXTURE)
    prompts = load_prompts()
    by = {(r["problem"], r["dimension"]): r for r in rows}
    explain = [by[(p.id, 8)] for p in problems]
    table = {r["inquiry"]: "Because of the earlier step." for r in rows}
    table[explain[0]["inquiry"]] = "Because 24 - 6 leaves 18."

    class Grader(Scripted):
        def generate(self, prompt):
            if prompt.startswith("You are grading"):
                graded = prompt.split("Answer to grade:", 1)[1]
                return "Thought: compare.\nAction: " + ("Yes" if "18" in graded else "No")
            return super().generate(prompt)

    backend = backends.CachedBackend(Grader(table, prompts.solve), ResponseCache(None))
    res = evaluate(rows, backend, prompts, judge="llm")
    verdicts = {(s["problem"], s["dimension"]): s for s in res.scores}
    assert verdicts[("TOY@0", 8)]["status"] == "judge_yes" and verdicts[("TOY@0", 8)]["pass"]
    assert verdicts[("TOY@1", 8)]["status"] == "judge_no" and not verdicts[("TOY@1", 8)]["pass"]
    assert "judge_response" in next(r for r in res.responses if r["dimension"] == 8)
