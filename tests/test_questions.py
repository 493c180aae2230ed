"""A question's checks (``deepcritical.questions``), the one function every front end asks: what it refuses
and, as much, what it must not refuse."""

from __future__ import annotations

import pytest

from deepcritical.questions import checked_question, question_problem
from deepcritical.text import MAX_QUESTION_CHARS


@pytest.mark.parametrize(
    "question",
    [
        "Can metformin be repurposed for Alzheimer's disease?",
        "Do statins prevent dementia?",
        "Is de novo lipogenesis reduced by metformin?",
        "Does aspirin given per os in vitro and in vivo lower platelet aggregation?",
        "Na intake and blood pressure",
        "Metformin and Alzheimer risk",
        "SGLT2 inhibitors heart failure",
        "Does La Crosse virus infection cause encephalitis in children?",
    ],
)
def test_english_questions_pass_whatever_foreign_looking_words_they_carry(question: str) -> None:
    assert question_problem(question) is None


@pytest.mark.parametrize(
    "question",
    [
        "Wie wirkt Metformin bei Alzheimer?",
        "Hilft Aspirin gegen Schlaganfall?",
        "Metformin und Demenz",
        "¿Reduce la metformina la mortalidad en la sepsis?",
        "Quel est l'effet de la metformine sur la maladie d'Alzheimer ?",
        "La metformina è efficace nella malattia di Alzheimer?",
        "Werkt metformine bij de ziekte van Alzheimer?",
    ],
)
def test_questions_in_another_language_written_in_latin_letters_are_refused(question: str) -> None:
    problem = question_problem(question)
    assert problem is not None
    assert problem.startswith("the question reads as a language other than English (")
    assert "only English questions are supported" in problem


def test_the_checks_take_the_question_as_a_run_uses_it() -> None:
    assert checked_question("\x1b[31m\x07 ") == ("", "the question is empty: give a non-empty question")
    assert checked_question("  Do statins\nprevent dementia?\x1b[0m") == ("Do statins prevent dementia?", None)
    text, problem = checked_question("Does aspirin prevent stroke? " * 80)
    assert problem == f"the question is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}: shorten it"
