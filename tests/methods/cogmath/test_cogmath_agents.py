"""LLM agents: the Inquiry–Judge–Reference loop with retries and gaps, driven through the real openai
backend against the loopback server. The server's responder below is a scripted test double (it
recognises the agent prompts and answers by rule), not a language model."""

import re

import pytest

from paperkit.methods.cogmath import backends, solver
from paperkit.methods.cogmath.agents import llm_inquiries, parse_action
from paperkit.methods.cogmath.cache import ResponseCache
from paperkit.methods.cogmath.extract import extract_answer
from paperkit.methods.cogmath.prompts import load_prompts
from paperkit.methods.cogmath.run import evaluate
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
            return solver.solve(_field(prompt, "Problem"))
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
        inner = backends.OpenAIBackend("agent", base_url=server.base_url, retries=0, jobs=4)
        rows = llm_inquiries(problems, backends.CachedBackend(inner, ResponseCache(None)), prompts, seed=0, max_retries=2)
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
        assert by[(p.id, 5)]["reference"] == str(extract_answer(solver.solve(other.text)))
        assert by[(p.id, 9)]["reference"] == str(sp.program.steps[0].amounts[0])  # the hidden first number
        assert by[(p.id, 8)]["expected"] == "explain" and by[(p.id, 8)]["reference"] == "12"
    # and the rows evaluate: the rule model masters them (explain rows by the rule judge fail: it gives no 12)
    res = evaluate(rows, backends.CachedBackend(backends.RuleBackend(template=prompts.solve), ResponseCache(None)), prompts)
    assert res.summary["accuracy"] == 1.0 and res.summary["dimensions"]["7"]["n"] == 0
    assert res.summary["dimensions"]["6"]["rpr"] == 1.0 and res.summary["dimensions"]["9"]["rpr"] == 1.0


class RecordingAgent(backends.Backend):
    """A scripted, deterministic agent (a function of the prompt, like a model at temperature 0; not a
    model): the Inquiry agent's proposal depends on how many rejections its prompt lists, and the Judge
    rejects every proposal below ``accept_at`` with a reason naming it."""

    def __init__(self, accept_at=None):
        super().__init__("recorder")
        self.accept_at = accept_at
        self.prompts = []

    def generate(self, prompt):
        self.prompts.append(prompt)
        if prompt.startswith("You rewrite"):
            version = prompt.count("It was rejected because:") + 1
            return f"Thought: try {version}.\nAction: Reworded problem, version {version}."
        if "Rewritten problem:" in prompt:
            version = int(re.search(r"Rewritten problem: Reworded problem, version (\d+)\.", prompt).group(1))
            if self.accept_at is not None and version >= self.accept_at:
                return "Thought: faithful.\nAction: Yes"
            return f"Thought: version {version} drops the price of the pens.\nAction: No"
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")


def _inquiry_prompts(agent):
    return [p for p in agent.prompts if p.startswith("You rewrite")]


def test_retries_send_a_new_prompt_with_the_rejection():
    problems = [Problem("p", "Ann buys 3 pens for $2 each. How much does she pay?", "6", "3 * 2 = 6")]
    agent = RecordingAgent()
    backend = backends.CachedBackend(agent, ResponseCache(None))
    rows = llm_inquiries(problems, backend, load_prompts(), max_retries=4, dimensions=(1,))
    asked = _inquiry_prompts(agent)
    # every attempt is a real call with its own prompt (a cached identical prompt would repeat the rejection)
    assert len(asked) == 4 and len(set(asked)) == 4 and backend.misses == 8 and backend.cache.hits == 0
    assert "attempt" not in asked[0].lower() and "rejected" not in asked[0]
    for k in range(2, 5):
        prompt = asked[k - 1]
        assert f"This is attempt {k}" in prompt
        for j in range(1, k):  # every earlier proposal, with the Judge's reasoning for rejecting it
            assert f"Attempt {j} proposed: Reworded problem, version {j}." in prompt
            assert f"It was rejected because: version {j} drops the price of the pens." in prompt
    row = next(r for r in rows if r["dimension"] == 1)
    assert row["judge"] == "rejected" and row["inquiry"] is None and row["attempts"] == 4
    assert row["notes"].count("judge said no") == 4


def test_retry_feedback_lets_a_later_attempt_pass():
    problems = [Problem("p", "Ann buys 3 pens for $2 each. How much does she pay?", "6", "3 * 2 = 6")]
    agent = RecordingAgent(accept_at=3)
    rows = llm_inquiries(problems, backends.CachedBackend(agent, ResponseCache(None)), load_prompts(), max_retries=3,
                         dimensions=(1,))
    row = next(r for r in rows if r["dimension"] == 1)
    assert row["judge"] == "accepted" and row["attempts"] == 3
    assert row["inquiry"] == "Reworded problem, version 3."
    # the whole loop again from the cache gives the same rows without calling the agent
    cache = ResponseCache(None)
    first = llm_inquiries(problems, backends.CachedBackend(RecordingAgent(accept_at=3), cache), load_prompts(),
                          max_retries=3, dimensions=(1,))
    again = llm_inquiries(problems, backends.CachedBackend(None, cache, model="recorder", settings=""), load_prompts(),
                          max_retries=3, dimensions=(1,))
    assert again == first == rows


def test_many_missing_dimensions_warn(caplog):
    problems = [Problem("p", "Ann buys 3 pens for $2 each. How much does she pay?", "6", "3 * 2 = 6")]
    with caplog.at_level("INFO", logger="paperkit.methods.cogmath.agents"):
        llm_inquiries(problems, backends.CachedBackend(RecordingAgent(), ResponseCache(None)), load_prompts(),
                      max_retries=2, dimensions=(1, 2))
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "1 of 2 inquiries were never accepted" in warned[0].getMessage()
    assert "D1: 1" in warned[0].getMessage()
