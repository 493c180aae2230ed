"""Natural-language questions become PubMed queries without losing the caller's PubMed syntax."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from deepcritical.sources.query import (
    OPERATORS,
    STOP_WORDS,
    is_search_query,
    tidy_query,
    to_pubmed_query,
    with_terms,
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Could metformin help treat Alzheimer's disease?", "metformin treat Alzheimer's disease"),
        ("What is the role of statins in sepsis?", "role statins sepsis"),
        ("Does long-COVID cause fatigue?", "long-COVID cause fatigue"),
        ("Can SARS-CoV-2 infect β-cells?", "SARS-CoV-2 infect β-cells"),
        ("What’s known about IL-6 in long COVID?", "IL-6 long COVID"),
    ],
)
def test_question_words_filler_and_punctuation_are_dropped(question: str, expected: str) -> None:
    assert to_pubmed_query(question) == expected


def test_quoted_phrases_are_kept_intact_including_their_filler() -> None:
    query = to_pubmed_query('What is the effect of "the gut microbiome" on depression?')
    assert query == 'effect "the gut microbiome" depression'


def test_curly_quotes_become_a_pubmed_phrase() -> None:
    assert to_pubmed_query("Is “insulin resistance” linked to dementia?") == '"insulin resistance" linked dementia'


def test_upper_case_operators_and_parentheses_are_kept() -> None:
    query = "(metformin OR sulfonylurea) AND dementia NOT review"
    assert to_pubmed_query(query) == query


def test_lower_case_and_or_not_are_prose_not_operators() -> None:
    assert to_pubmed_query("statins and sepsis or not") == "statins sepsis"


def test_field_tags_survive() -> None:
    query = 'metformin[tiab] AND "alzheimer disease"[MeSH Terms]'
    assert to_pubmed_query(query) == query


def test_truncation_wildcard_survives() -> None:
    assert to_pubmed_query("neurodegenerat* in mice") == "neurodegenerat* mice"


def test_operators_left_dangling_by_dropped_filler_are_removed() -> None:
    assert to_pubmed_query("the AND (what OR is) AND statins") == "statins"
    assert to_pubmed_query("AND metformin OR") == "metformin"


def test_unbalanced_parentheses_are_dropped_not_sent() -> None:
    assert to_pubmed_query("(metformin OR insulin AND dementia") == "metformin OR insulin AND dementia"


def test_all_filler_falls_back_to_the_original_words() -> None:
    assert to_pubmed_query("What is it?") == "What is it"


def test_punctuation_only_falls_back_to_the_original() -> None:
    assert to_pubmed_query("???") == "???"


def test_empty_input_gives_empty_query() -> None:
    assert to_pubmed_query("   ") == ""


@given(st.text(min_size=1).filter(lambda text: text.strip()))
def test_never_empty_for_non_empty_input(text: str) -> None:
    assert to_pubmed_query(text).strip()


@given(st.text())
@example("'\x1f)")  # a control character that str.split() reads as whitespace, around punctuation only
def test_no_stop_word_or_dangling_operator_survives_unless_it_is_the_fallback(text: str) -> None:
    query = to_pubmed_query(text)
    words = query.split()
    if not words or query == " ".join(text.split()):
        return
    phrase_free = " ".join(part for index, part in enumerate(query.split('"')) if index % 2 == 0)
    tokens = phrase_free.replace("(", " ").replace(")", " ").split()
    if all(token.lower() in STOP_WORDS for token in tokens if token not in OPERATORS):
        return  # the fallback: nothing but filler was asked
    assert tokens[0] not in OPERATORS
    assert tokens[-1] not in OPERATORS
    assert query.count("(") == query.count(")")


def test_with_terms_adds_only_missing_terms_and_keeps_boolean_queries_whole() -> None:
    assert with_terms("metformin alzheimer disease", ["metformin", "Alzheimer's"]) == "metformin alzheimer disease"
    assert with_terms("statin mortality", ["statins", "sepsis"]) == "statin mortality sepsis"  # plural folded
    assert with_terms("(metformin OR biguanide) AND dementia", ["Alzheimer's"]) == (
        "((metformin OR biguanide) AND dementia) AND Alzheimer's"
    )


@pytest.mark.parametrize(
    "text",
    [
        'metformin[tiab] AND ("alzheimer disease"[mh] OR dementia)',
        "statins sepsis mortality randomized",
        "SGLT2 inhibitors heart failure outcomes 2020-2024",
        "Does cognitive function predict speech recognition in listeners with normal hearing?",
        "return to work after stroke rehabilitation",
        "print media coverage of vaccine safety",
        "import of counterfeit antimalarial drugs",
        "HbA1c <7% target in older adults; hypoglycaemia",
        "BMI>=30 bariatric surgery mortality",
        "renal function (eGFR) decline after contrast",
        "Does lung function (FEV1) predict mortality in COPD?",
        "fever <three days and >38C in children",
        "IL-6 <normal range> sepsis",
        "import restrictions on essential medicines",
    ],
)
def test_real_queries_with_pubmed_syntax_are_search_queries(text: str) -> None:
    assert is_search_query(text)


@pytest.mark.parametrize(
    "text",
    [
        "```python\nimport requests\n```",
        "def search(term): return term",
        "results = search(query)",
        "const terms = require('pubmed')",
        '<a href="https://example.org">trial</a>',
        "from Bio import Entrez",
        "function search(term) { return term }",
        "print(results)",
        "response = requests.get(url)",
        "see https://example.org/metformin",
        "<b>metformin</b>",
        "",
        " ".join(["word"] * 33),
    ],
)
def test_code_markup_urls_and_paragraphs_are_not(text: str) -> None:
    assert not is_search_query(text)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("][ metformin Alzheimer's disease", "metformin Alzheimer's disease"),
        (", metformin Alzheimer's disease;", "metformin Alzheimer's disease"),
        ("- statins | sepsis mortality", "statins sepsis mortality"),
        ('(metformin OR biguanide) AND "Alzheimer disease"', '(metformin OR biguanide) AND "Alzheimer disease"'),
        ("( statins ) sepsis", "( statins ) sepsis"),
        ("HbA1c <7% metformin", "HbA1c <7% metformin"),
        ("HbA1c < 7% metformin", "HbA1c < 7% metformin"),
        ("] [ , ;", ""),
        # PubMed syntax at the end is kept: a field tag's bracket, a truncation, a percentage.
        ("metformin[tiab] AND dementia[tiab]", "metformin[tiab] AND dementia[tiab]"),
        ('dapagliflozin AND "heart failure"[MeSH]', 'dapagliflozin AND "heart failure"[MeSH]'),
        ("metformin AND diabet*", "metformin AND diabet*"),
        ("metformin HbA1c < 7%", "metformin HbA1c < 7%"),
        ("statins sepsis mortality.]", "statins sepsis mortality"),
    ],
)
def test_a_query_loses_stray_punctuation_and_keeps_its_terms_and_syntax(query: str, expected: str) -> None:
    assert tidy_query(query) == expected


@given(st.lists(st.from_regex(r"[A-Za-z](?:[A-Za-z0-9'-]{0,9}[A-Za-z0-9'])?", fullmatch=True), min_size=1, max_size=6))
def test_tidying_never_drops_a_word(words: list[str]) -> None:
    noisy = " ] ".join(words) + " ,"
    assert tidy_query(noisy).split() == words
