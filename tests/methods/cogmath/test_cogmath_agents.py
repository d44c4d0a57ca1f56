"""LLM agents: the Inquiry–Judge–Reference loop with retries and gaps, driven through the real openai
backend against the loopback server. The server's responder below is a scripted test double (it
recognises the agent prompts and answers by rule), not a language model."""

import re

import pytest

from paperkit.methods.cogmath import backends as B
from paperkit.methods.cogmath import solver as S
from paperkit.methods.cogmath.agents import llm_inquiries, parse_action
from paperkit.methods.cogmath.cache import ResponseCache
from paperkit.methods.cogmath.evaluate import evaluate
from paperkit.methods.cogmath.extract import extract_answer
from paperkit.methods.cogmath.prompts import load_prompts
from paperkit.methods.cogmath.sources import Problem, validate_rows
from paperkit.methods.cogmath.synthetic import generate

pytest.importorskip("openai")


def _field(prompt, name):
    m = re.search(rf"^{name}: (.*)$", prompt, flags=re.M)
    return m.group(1) if m else None


def scripted_agents(other_problem: str, picky_about: str):
    def respond(prompt, request):
        q = _field(prompt, "Problem") or _field(prompt, "Original problem")
        if prompt.startswith("You rewrite"):
            # like a model at temperature 0, it only writes something new when told the last try failed
            new = "Tell me how many" if "earlier proposal was rejected" in prompt else "What number of"
            return "Thought: reword the question.\nAction: " + q.replace("How many", new)
        if prompt.startswith("You edit math word problems. Delete"):
            return "Thought: drop the start.\nAction: " + re.sub(r"\d+", "some", q, count=1)
        if prompt.startswith("You edit math word problems. Add"):
            return "Thought: add a distractor.\nAction: " + q.replace(". ", ". Her cousin has 7 pencils. ", 1)
        if prompt.startswith("You write math word problems."):
            return "Thought: same steps.\nAction: " + other_problem
        if prompt.startswith("You edit math word problems. Change"):
            return "Thought: new numbers.\nAction: " + re.sub(r"\d+", lambda m: str(int(m.group()) + 2), q, count=1)
        if prompt.startswith("You edit math word problems. Redefine"):
            return "I would rather not."  # no Action: the dimension stays missing after every retry
        if prompt.startswith("You ask questions"):
            return "Thought: the first step.\nAction: Why is the first step needed?"
        if prompt.startswith("You write backward"):
            answer = re.search(r"answer is (\S+?),", prompt).group(1)
            return ("Thought: hide the first number.\nAction: In the problem \"" + re.sub(r"\d+", "x", q, count=1)
                    + f"\", the answer is {answer}. What is the value of x?")
        if "Action: Yes" in prompt:  # a judge prompt
            rewritten = _field(prompt, "Rewritten problem") or ""
            if picky_about in rewritten and "What number of" in rewritten:
                return "Thought: the question changed.\nAction: No"
            return "Thought: it meets the requirement.\nAction: Yes"
        if prompt.startswith("Solve the following math problem step by step and finish"):
            return S.solve(_field(prompt, "Problem"))
        if "Answer this question about the solution" in prompt:
            return "Because the story starts there; it gives 12 in the end."
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")

    return respond


def test_parse_action():
    assert parse_action("Thought: x\nAction: Rewritten text.") == "Rewritten text."
    assert parse_action('Action: "quoted"') == "quoted"
    assert parse_action("Action: a\nAction: b") == "b"
    assert parse_action("no action here") is None and parse_action(None) is None


def test_llm_agents_loop_over_http():
    from paperkit.methods.cogmath.testing import ChatServer

    problems_syn, _ = generate(3, seed=2)
    problems = [Problem(p.id, p.text, str(p.answer), p.solution) for p in problems_syn]
    other = generate(1, seed=99)[0][0]
    prompts = load_prompts()
    with ChatServer(scripted_agents(other.text, problems[0].question.split()[0])) as server:
        inner = B.OpenAIBackend("agent", base_url=server.base_url, retries=0, jobs=4)
        rows = llm_inquiries(problems, B.CachedBackend(inner, ResponseCache(None)), prompts, seed=0, max_retries=2)
    validate_rows(rows, "agents")
    by = {(r["problem"], r["dimension"]): r for r in rows}
    assert len(rows) == 30
    # the judge rejected the first paraphrase it saw, so that one took two rounds
    assert [by[(p.id, 1)]["attempts"] for p in problems] == [2, 1, 1]
    assert "judge said no" in by[(problems[0].id, 1)]["notes"]
    assert "Tell me how many" in by[(problems[0].id, 1)]["inquiry"]
    for p, sp in zip(problems, problems_syn, strict=True):
        # D7: the Inquiry agent never produced an Action → recorded as a gap after every retry
        assert by[(p.id, 7)]["judge"] == "rejected" and by[(p.id, 7)]["inquiry"] is None
        assert by[(p.id, 2)]["inquiry"].split() != p.question.split()
        assert by[(p.id, 1)]["reference"] == by[(p.id, 4)]["reference"] == p.answer
        assert by[(p.id, 3)]["expected"] == "unsolvable"
        assert by[(p.id, 5)]["reference"] == str(extract_answer(S.solve(other.text)))
        assert by[(p.id, 9)]["reference"] == str(sp.program.steps[0].amounts[0])  # the hidden first number
        assert by[(p.id, 8)]["expected"] == "explain" and by[(p.id, 8)]["reference"] == "12"
    # and the rows evaluate: the rule model masters them (explain rows by the rule judge fail: it gives no 12)
    res = evaluate(rows, B.CachedBackend(B.RuleBackend(template=prompts.solve), ResponseCache(None)), prompts)
    assert res.summary["accuracy"] == 1.0 and res.summary["dimensions"]["7"]["n"] == 0
    assert res.summary["dimensions"]["6"]["rpr"] == 1.0 and res.summary["dimensions"]["9"]["rpr"] == 1.0
