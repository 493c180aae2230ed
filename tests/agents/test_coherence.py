"""Issue 15, item 2: the report's coherence, enforced in code whatever the model says, checked as properties
over many generated evidence sets (hypothesis), not golden strings.

Each example is a question about an intervention and a condition, a mix of items on and off its topic
(every design and level, with and without a number of participants, retracted or under a concern, quoting
favourable, null, harmful, unclear or advice sentences), a report drafted either in code (extractive) or
"by a model" (findings that cite at random, raw ids in prose, advice as findings, limitations that may be
false), and a judge's scores that may claim anything. The rendered Markdown is then read back as a
reader would: its table, its brief, its warnings, its ratings, its limitations and its citations."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from deepcritical.agents.judge import Judge
from deepcritical.appraisal.framing import REPORT_TEXT_CHARS, EvidenceView
from deepcritical.appraisal.passages import result_only
from deepcritical.appraisal.ratings import ceilings
from deepcritical.appraisal.strength import DIRECTIONS, strength_of
from deepcritical.appraisal.verdict import weighed_readings
from deepcritical.demo.models import demo_queries
from deepcritical.models import Evidence, Grade
from deepcritical.outputs import AspectScore, Assessment, Finding, ResearchReport, Verdict
from deepcritical.report.citations import verify_citations
from deepcritical.report.extractive import extractive_report
from deepcritical.report.render import RenderContext, render_markdown
from helpers.research_fakes import QUESTION, FakeStore, corpus_evidence, make_deps

INTERVENTIONS = ("metformin", "lithium", "colchicine", "semaglutide", "statins", "melatonin")
CONDITIONS = ("sepsis", "psoriasis", "glaucoma", "gout", "asthma", "dementia")
OUTCOMES = ("mortality", "relapse", "pain")
TEMPLATES = (
    "Can {i} be repurposed for {c}?",
    "Do {i} reduce {o} in {c}?",
    "Does {i} improve {o} in patients with {c}?",
    "Could {i} slow {c}?",
    "Is {i} effective for {c}?",
)
GRADES = (
    ("meta_analysis", 1, "humans"),
    ("systematic_review", 1, "humans"),
    ("randomized_controlled_trial", 2, "humans"),
    ("clinical_trial", 3, "humans"),
    ("cohort", 3, "humans"),
    ("case_control", 4, "humans"),
    ("narrative_review", 5, "humans"),
    ("preclinical", None, "animals"),
    ("preclinical", None, "in_vitro"),
    ("preprint", None, "humans"),
    ("guideline", None, "unknown"),
    ("web", None, "humans"),
    ("unknown", None, "unknown"),
    ("registered_trial", None, "humans"),
)
RESULTS = {
    "favourable": "{I} reduced {o} in patients with {c} (p = 0.01).",
    "null": "{I} did not reduce {o} in patients with {c}.",
    "unfavourable": "{I} use was associated with a higher risk of {o} in people with {c}.",
    "unclear": "This report describes how {i} and {c} were studied in routine records.",
}
# Advice a model (or an abstract) may offer as a finding; none may reach the findings of a report.
ADVICE = (
    "A randomised trial of {i} in {c} is required.",
    "Clinicians should consider {i} for {c}.",
    "Further research on {i} in {c} is needed.",
    "Choosing {i} and monitoring {c} closely may reduce harm.",
)
ADVICE_WORDS = ("is required", "should consider", "further research", "may reduce harm")
# Counts a model may state in its brief, true or not.
COUNTED_TRIALS = "{} randomised controlled trials found a benefit."
COUNTED_LAB = "In {} animal studies it worked."
SR_ABSENT = "No systematic review or meta-analysis among the evidence judged"
RCT_ABSENT = "No randomised controlled trial among the evidence judged"


@dataclass(frozen=True)
class Case:
    question: str
    intervention: str
    condition: str
    items: list[Evidence]
    on_topic: set[str]
    pool: list[str]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    i, other_i = draw(st.lists(st.sampled_from(INTERVENTIONS), min_size=2, max_size=2, unique=True))
    c, other_c = draw(st.lists(st.sampled_from(CONDITIONS), min_size=2, max_size=2, unique=True))
    o = draw(st.sampled_from(OUTCOMES))
    question = draw(st.sampled_from(TEMPLATES)).format(i=i, c=c, o=o)
    items: list[Evidence] = []
    on_topic: set[str] = set()
    for number in range(draw(st.integers(1, 14))):
        topical = draw(st.booleans()) or number == 0
        drug, disease = (i, c) if topical else (other_i, other_c)
        design, level, population = draw(st.sampled_from(GRADES))
        sentences = [
            RESULTS[draw(st.sampled_from(sorted(RESULTS)))],
            *([draw(st.sampled_from(ADVICE))] if draw(st.booleans()) else []),
        ]
        text = " ".join(s.format(I=drug.capitalize(), i=drug, c=disease, o=o) for s in sentences)
        web = design == "web" or draw(st.integers(0, 4)) == 0
        item = corpus_evidence(
            number,
            text,
            source="web" if web else "pubmed",
            title=f"Report {number}: {drug} and {disease}",
            relevance=draw(st.floats(0.1, 1.0)),
        )
        grade = Grade(
            design=design,  # type: ignore[arg-type]
            level=level,
            population=population,  # type: ignore[arg-type]
            basis="publication_type",
            sample_size=draw(st.none() | st.integers(10, 200_000)) if population == "humans" and level else None,
        )
        flags = draw(st.sampled_from(((False, False), (False, False), (True, False), (False, True))))
        item = item.model_copy(update={"grade": grade, "retracted": flags[0], "expression_of_concern": flags[1]})
        items.append(item)
        if topical:
            on_topic.add(item.id)
    ids = [item.id for item in items]
    pool = draw(st.sampled_from((ids, draw(st.lists(st.sampled_from(ids), min_size=1, unique=True)))))
    return Case(question, i, c, items, on_topic, pool)


def _views(items: list[Evidence]) -> list[EvidenceView]:
    return [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in items]


@st.composite
def drafts(draw: st.DrawFn, case: Case) -> ResearchReport:
    """A report drafted in code over the pool, or "by a model": findings citing anything, advice included,
    raw ids and URLs in the prose, limitations that may be false."""
    pooled = [item for item in case.items if item.id in case.pool]
    if draw(st.booleans()):
        return extractive_report(case.question, _views(pooled), notes=[SR_ABSENT, RCT_ABSENT])
    ids = [item.id for item in case.items]
    findings = [
        Finding(
            statement=draw(st.sampled_from((*ADVICE, *RESULTS.values()))).format(
                I=case.intervention.capitalize(), i=case.intervention, c=case.condition, o="pain"
            )
            + (f" ({draw(st.sampled_from(ids))})" if draw(st.booleans()) else ""),
            evidence_ids=draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True)),
        )
        for _ in range(draw(st.integers(0, 4)))
    ]
    named = ", ".join(draw(st.lists(st.sampled_from(ids), max_size=3, unique=True)))
    urls = " ".join(item.citation.url for item in draw(st.lists(st.sampled_from(case.items), max_size=2)))
    trials, animals = draw(st.integers(1, 4)), draw(st.sampled_from(("two", "three")))
    return ResearchReport(
        question=case.question,
        answer_brief=f"The evidence is mixed ({named}); see {urls} and pmid:424242. {COUNTED_TRIALS.format(trials)} "
        f"{COUNTED_LAB.format(animals)}",
        key_findings=findings[: len(findings) // 2 + 1] if findings else [],
        contrary_evidence=findings[len(findings) // 2 + 1 :],
        limitations=[SR_ABSENT, RCT_ABSENT, f"Mostly small studies ({named})."],
        references=[],
    )


def judges(case: Case) -> st.SearchStrategy[Assessment]:
    ids = [item.id for item in case.items]
    aspect = st.builds(
        AspectScore,
        score=st.integers(0, 10),
        reason=st.lists(st.sampled_from(ids), max_size=3).map(lambda chosen: f"Items ({', '.join(chosen)})."),
    )
    return st.builds(
        Assessment,
        mechanism=aspect,
        clinical=aspect,
        safety=aspect,
        sufficient=st.booleans(),
        confidence=st.floats(0, 1),
    )


@dataclass
class Read:
    """The rendered report, read back."""

    markdown: str
    references: dict[int, str]
    table: dict[str, dict[str, list[int]]]
    counted: int
    stated: int
    body: str

    def section(self, title: str) -> str:
        start = self.markdown.find(f"## {title}\n")
        if start < 0:
            return ""
        end = self.markdown.find("\n## ", start + 1)
        return self.markdown[start : end if end > 0 else None]


CELL = re.compile(r"^(\d+)(?: \\\[([\d, ]+)\\\])?$")
COLUMNS = (*DIRECTIONS, "unclear")


def read(markdown: str) -> Read:
    references = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"^(\d+)\. .*? Evidence id: `([^`]+)`", markdown.split("## References")[1], re.M)
    }
    table: dict[str, dict[str, list[int]]] = {}
    start = markdown.find("## Strength of evidence\n")
    strength_section = markdown[start : markdown.find("\n## ", start + 1)] if start >= 0 else ""
    for line in strength_section.splitlines():  # the study-results table below it has its own columns
        if line.startswith("| ") and not line.startswith("| Design"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            row: dict[str, list[int]] = {}
            for column, cell in zip(COLUMNS, cells[2:], strict=True):
                match = CELL.match(cell)
                assert match, cell
                numbers = [int(n) for n in match.group(2).split(", ")] if match.group(2) else []
                assert len(numbers) == int(match.group(1)), f"a count that does not cite its items: {cell}"
                row[column] = numbers
            table[cells[0]] = row
    totals = re.search(r"Counted: (\d+) of the (\d+) items? reviewed .*? \((\d+) states? a result\)", markdown)
    counted, stated = (int(totals.group(1)), int(totals.group(3))) if totals else (0, 0)
    return Read(markdown, references, table, counted, stated, markdown.split("## References")[0])


def render(case: Case, draft: ResearchReport, judged: Assessment | None) -> tuple[ResearchReport, str]:
    collected = {item.id: item for item in case.items}
    report, _ = verify_citations(draft, collected, question=case.question)
    context = RenderContext(demo=False, stop_reason="sufficient", assessment=judged, pool=case.pool)
    return report, render_markdown(report, collected, context)


EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@EXAMPLES
@given(data=st.data())
def test_the_rendered_report_is_coherent(data: st.DataObject) -> None:
    case = data.draw(cases())
    draft = data.draw(drafts(case))
    judged = data.draw(st.none() | judges(case))
    report, markdown = render(case, draft, judged)
    doc = read(markdown)
    by_id = {item.id: item for item in case.items}
    pooled = [by_id[i] for i in case.pool]
    strength = strength_of(case.question, _views(pooled))

    # One counted set: the table's cells are exactly the counted items, and its totals are the brief's.
    for row, cells in doc.table.items():
        for column, numbers in cells.items():
            ids = {doc.references[n] for n in numbers}
            label = next(label for label, _ in strength.rows if label.lower() == row.lower())
            way = None if column == "unclear" else column
            assert ids == set(strength.cells[label].get(way, [])), (row, column)  # type: ignore[arg-type]
    in_table = sum(len(numbers) for cells in doc.table.values() for numbers in cells.values())
    stated = sum(len(cells[way]) for cells in doc.table.values() for way in DIRECTIONS)
    assert (doc.counted, doc.stated) == (in_table, stated) == (len(strength.counted), len(strength.stated))

    brief = doc.section("Answer in brief")
    # The brief's weighing cites exactly the studies the verdict weighs (never a web page or commentary).
    if weighed := re.search(r"Weighing the (\d+) counted stud(?:y|ies) .*? \\\[([\d, ]+)\\\]", brief):
        numbers = [int(n) for n in weighed.group(2).split(", ")]
        assert int(weighed.group(1)) == len(numbers)
        weighing = {w.view.id for w in weighed_readings(case.question, strength)}
        assert {doc.references[n] for n in numbers} == weighing <= set(strength.stated)
    if strongest := re.search(r"OCEBM level (\d): (\d+) stud(?:y|ies) .*? \\\[([\d, ]+)\\\]", brief):
        numbers = [int(n) for n in strongest.group(3).split(", ")]
        assert int(strongest.group(2)) == len(numbers)
        assert {by_id[doc.references[n]].grade.level for n in numbers} == {int(strongest.group(1))}

    # A count the brief states is never more than the table counts.
    views = [strength.views[i] for i in strength.counted]
    trials = sum(
        v.design == "randomized_controlled_trial" and v.population not in ("animals", "in_vitro") for v in views
    )
    lab = sum(v.population in ("animals", "in_vitro") or v.design == "preclinical" for v in views)
    if stated_trials := re.search(r"(\d+) randomised controlled trials found", draft.answer_brief):
        assert (COUNTED_TRIALS.format(stated_trials.group(1)) in brief) == (int(stated_trials.group(1)) <= trials)
    if stated_lab := re.search(r"In (two|three) animal studies", draft.answer_brief):
        assert (COUNTED_LAB.format(stated_lab.group(1)) in brief) == (
            {"two": 2, "three": 3}[stated_lab.group(1)] <= lab
        )

    # Every number cites a listed reference; no raw id stands beside the numbers.
    for group in re.findall(r"\\\[([\d, ]+)\\\]", doc.body):
        assert all(int(n) in doc.references for n in group.split(", "))
    assert not re.search(r"\b(?:pmid|pmcid|doi):|\burl:", doc.body), "a raw id outside the references"
    # The findings' items come first; run.json's references are the same list (run.outcome).
    assert list(doc.references.values())[: len(report.references)] == report.references

    # Warnings only for items on the question's topic, and for every such item reviewed.
    warned = set(re.findall(r"^> - \*\*Retracted:\*\* (Report \d+)", markdown, re.M))
    retracted_on_topic = {
        by_id[i].citation.title.split(":")[0] for i in case.pool if by_id[i].retracted and i in case.on_topic
    }
    assert warned == retracted_on_topic
    concerned = set(re.findall(r"^> - \*\*Expression of concern:\*\* (Report \d+)", markdown, re.M))
    cited = {i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids}
    flagged = {i for i in cited if by_id[i].expression_of_concern and not by_id[i].retracted}
    assert concerned == {by_id[i].citation.title.split(":")[0] for i in {*strength.concern, *flagged}}
    assert {i for i in strength.concern} <= case.on_topic

    # Ratings are capped by what the counted items can support.
    if judged is not None:
        limits = ceilings(strength)
        for name, label in (("mechanism", "Mechanism"), ("clinical", "Clinical evidence"), ("safety", "Safety")):
            shown = re.search(rf"\*\*{label}[^:]*: (\d+)/10\.\*\*", markdown)
            assert shown is not None
            assert int(shown.group(1)) <= min(getattr(judged, name).score, limits.get(name, (10, ""))[0])

    # A limitation says a design is missing only when the report counts and cites none.
    human = {
        by_id[i].grade.design
        for i in {*strength.counted, *cited}
        if by_id[i].grade.population not in ("animals", "in_vitro")
    }
    limitations = doc.section("Limitations")
    assert (SR_ABSENT in limitations) == (
        SR_ABSENT in draft.limitations and not human & {"meta_analysis", "systematic_review"}
    )
    assert (RCT_ABSENT in limitations) == (
        RCT_ABSENT in draft.limitations and "randomized_controlled_trial" not in human
    )

    # A key finding is a result, never advice.
    findings = doc.section("Key findings") + doc.section("Contrary evidence")
    assert not any(words in findings for words in ADVICE_WORDS), findings


async def test_the_judge_stage_caps_a_models_scores_and_drops_gaps_the_items_refute() -> None:
    """The Judge's output check: a model that claims 10/10 and "sufficient" over one small null trial is
    capped, the caps are recorded with their reasons, and a gap denying the trial it was shown goes."""
    trial = corpus_evidence(1, "Metformin did not change cognition in patients with Alzheimer's disease.")
    trial = trial.model_copy(
        update={
            "grade": Grade(
                design="randomized_controlled_trial",
                level=2,
                population="humans",
                basis="publication_type",
                sample_size=40,
            )
        }
    )
    store = FakeStore()
    deps = make_deps(store=store, question=QUESTION)
    await deps.evidence.add([trial])

    def boastful(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        score = {"score": 10, "reason": f"Strong ({trial.id})."}
        args = {"mechanism": score, "clinical": score, "safety": score, "sufficient": True, "confidence": 0.99}
        args |= {"gaps": ["No randomised controlled trial among the evidence judged", "No cohort study"]}
        args |= {"caps": [{"aspect": "clinical", "given": 1, "capped_to": 1, "reason": "invented by the model"}]}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    assessment = (await Judge(FunctionModel(boastful))(deps)).assessment
    assert assessment.clinical.score == 5  # a randomised trial of 40 people supports at most 5
    assert assessment.safety.score == 5
    assert not assessment.sufficient
    assert assessment.confidence <= sum(assessment.scores.values()) / 30
    assert {cap.aspect for cap in assessment.caps} == {"clinical", "safety", "sufficient", "confidence"}
    assert all("invented" not in cap.reason for cap in assessment.caps)  # caps are set in code only
    assert "n = 40" in next(cap.reason for cap in assessment.caps if cap.aspect == "clinical")
    assert assessment.gaps == ["No cohort study"]


@pytest.mark.parametrize(
    ("statement", "kept"),
    [
        ("Uncontrolled cognitive changes cannot be interpreted; a randomised trial is required.", None),
        ("Choosing rosuvastatin or pravastatin and monitoring CK may reduce harm.", None),
        ("The panel recommends against starting statins, because trials showed no mortality benefit.", None),
        (
            "Continuing statins in sepsis was associated with lower mortality; a continuation trial is warranted.",
            "Continuing statins in sepsis was associated with lower mortality",
        ),
        (
            "In pregnant women with low vitamin D, prenatal cholecalciferol reduced postpartum depression, a finding"
            " that warrants confirmation in populations with adequate vitamin D.",
            "In pregnant women with low vitamin D, prenatal cholecalciferol reduced postpartum depression",
        ),
        ("Metformin lowered HbA1c, a finding that was consistent across the subgroups.", "same"),
        ("In larger studies, metformin was associated with a lower risk of dementia.", "same"),
        ("Use of metformin may reduce dementia risk.", "same"),
        ("Continuing statin therapy during septic shock was associated with lower mortality.", "same"),
    ],
)
def test_advice_goes_and_results_stay_verbatim(statement: str, kept: str | None) -> None:
    assert result_only(statement) == (statement if kept == "same" else kept)


def test_the_verdict_comes_first_under_the_title_cites_by_number_and_the_brief_follows_it() -> None:
    """The verdict block: right under the title, before the brief; its items are numbered references. The run
    line comes after the answer (issue 40: the answer first)."""
    item = corpus_evidence(1, "Metformin did not change cognition in patients with Alzheimer's disease.")
    report = ResearchReport(
        question=QUESTION,
        answer_brief="One null trial.",
        key_findings=[Finding(statement="Metformin did not change cognition.", evidence_ids=[item.id])],
        references=[item.id],
    )
    verdict = Verdict(label="no", confidence=0.6, evidence_ids=[item.id])
    context = RenderContext(demo=True, stop_reason="sufficient", run_id="r1", verdict=verdict)
    markdown = render_markdown(report, {item.id: item}, context)
    assert markdown.index("## Verdict") < markdown.index("## Answer in brief") < markdown.index("`r1`")
    verdict_section = markdown.split("## Verdict")[1].split("## Answer in brief")[0]
    assert "It rests on \\[1\\]" in verdict_section
    assert item.id not in verdict_section  # a number, never a raw id
    assert "## Verdict" not in render_markdown(report, {item.id: item}, RenderContext(True, "sufficient"))


def test_a_background_term_comes_only_from_context_about_the_question() -> None:
    brief = {"question": "Do statins reduce mortality in sepsis?", "iteration": 1}
    off_topic = "SGLT2 inhibitors reduced mortality in heart failure. SGLT2 inhibitors lowered mortality in diabetes."
    about = "Statins inhibit HMG-CoA reductase. In sepsis, statins may dampen inflammation via HMG-CoA pathways."
    assert not any("SGLT2" in query for query in demo_queries(brief, [off_topic]))
    assert any("HMG-CoA" in query for query in demo_queries(brief, [off_topic, about]))
