"""The value types every stage passes on: what the agents return, what a search step did, what the
citation check changed, and why a run stopped. A leaf module: it imports nothing of the project.

Pydantic validates every model answer against these types. Their JSON schemas carry every bound (score and
confidence ranges, list lengths, string lengths), so a server that decodes under a grammar built from the schema
(llama.cpp, vLLM, Ollama) cannot produce an answer that breaks them, and a degenerate model cannot write forever
inside one string. An answer from a model that ignores the bounds on lengths is shortened rather than sent back:
the length limits are applied by trimming before validation."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from deepcritical.text import collapse_whitespace

MAX_QUERIES_PER_TURN = 5
QUERY_CHARS = 200
SENTENCE_CHARS = 600


def _clean(items: Any, limit: int, chars: int = SENTENCE_CHARS) -> Any:
    """Strip blanks and repeats, keep order, cap the length of the list and of each item."""
    if not isinstance(items, list):
        return items
    kept: list[str] = []
    seen: set[str] = set()
    for item in items:
        text = collapse_whitespace(str(item))[:chars]
        if text and text.lower() not in seen:
            seen.add(text.lower())
            kept.append(text)
    return kept[:limit]


def _first(limit: int) -> BeforeValidator:
    """Keep the first ``limit`` items of a list (or characters of a string); anything else is left to validation."""
    return BeforeValidator(lambda value: value[:limit] if isinstance(value, list | str) else value)


ID_CHARS = 120
PARAGRAPH_CHARS = 2000
Query = Annotated[str, _first(QUERY_CHARS), Field(max_length=QUERY_CHARS)]
Sentence = Annotated[str, _first(SENTENCE_CHARS), Field(max_length=SENTENCE_CHARS)]
Paragraph = Annotated[str, _first(PARAGRAPH_CHARS), Field(max_length=PARAGRAPH_CHARS)]
EvidenceId = Annotated[str, _first(ID_CHARS), Field(max_length=ID_CHARS)]
# Lists a model writes, each capped (by trimming) at a length no honest answer needs to exceed.
MAX_TEXT_ITEMS = 6
MAX_CITED_IDS = 50
MAX_FINDING_IDS = 10
MAX_FINDINGS = 10
MAX_CONTRARY = 8
MAX_LIMITATIONS = 12
MAX_REFERENCES = 60


class BrainTurn(BaseModel):
    """The Brain's account of one planning turn."""

    # At least one query is asked of the model (a grammar enforces it), yet an empty list validates: the Brain
    # may have searched through its tool already, and the demo Brain reports only what ran.
    queries: list[Query] = Field(
        max_length=MAX_QUERIES_PER_TURN,
        description="The search queries run (or to run) this turn",
        json_schema_extra={"minItems": 1},
    )
    rationale: Sentence = Field(default="", description="One or two sentences: why these queries")

    @field_validator("queries", mode="before")
    @classmethod
    def _tidy(cls, value: Any) -> Any:
        return _clean(value, MAX_QUERIES_PER_TURN, QUERY_CHARS)


class AspectScore(BaseModel):
    score: int = Field(ge=0, le=10, description="0 = nothing on this aspect, 10 = strong, consistent evidence")
    reason: Sentence = Field(description="One sentence: what the evidence shows on this aspect, citing ids")


class ScoreCap(BaseModel):
    """A score lowered in code because the evidence cannot support it (``appraisal.ratings.cap_assessment``)."""

    aspect: Literal["mechanism", "clinical", "safety", "sufficient", "confidence"]
    given: float = Field(description="What the judge gave (for sufficient: 1 for true)")
    capped_to: float
    reason: str = Field(description="What in the counted evidence sets the ceiling")


class Assessment(BaseModel):
    """The Judge's verdict on the evidence it was shown."""

    mechanism: AspectScore = Field(description="Evidence for a biological mechanism")
    clinical: AspectScore = Field(description="Clinical evidence in humans: trials, cohorts, meta-analyses")
    safety: AspectScore = Field(description="Safety and contrary evidence: harms, null or negative results")
    sufficient: bool = Field(description="True when the evidence is enough to answer the question")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the verdict, 0 to 1")
    gaps: list[Sentence] = Field(default_factory=list, max_length=MAX_TEXT_ITEMS, description="What is still missing")
    next_queries: list[Query] = Field(
        default_factory=list, max_length=MAX_QUERIES_PER_TURN, description="Search queries that would fill the gaps"
    )
    candidate_answers: list[Sentence] = Field(
        default_factory=list, max_length=MAX_TEXT_ITEMS, description="Short candidate answers to the question"
    )
    cited_ids: Annotated[list[EvidenceId], _first(MAX_CITED_IDS)] = Field(
        default_factory=list, max_length=MAX_CITED_IDS, description="Ids of the evidence items the verdict rests on"
    )
    # Set in code, never by a model (left out of the schema a model is given): each score lowered because the
    # evidence judged cannot support it, and why. Recorded in run.json.
    caps: SkipJsonSchema[list[ScoreCap]] = Field(default_factory=list)

    @field_validator("gaps", "candidate_answers", mode="before")
    @classmethod
    def _tidy_text(cls, value: Any) -> Any:
        return _clean(value, MAX_TEXT_ITEMS)

    @field_validator("next_queries", mode="before")
    @classmethod
    def _tidy_queries(cls, value: Any) -> Any:
        return _clean(value, MAX_QUERIES_PER_TURN, QUERY_CHARS)

    @property
    def scores(self) -> dict[str, int]:
        return {"mechanism": self.mechanism.score, "clinical": self.clinical.score, "safety": self.safety.score}


VerdictLabel = Literal["supported", "refuted", "mixed", "insufficient", "yes", "no", "maybe", "open"]
# The answer a systematic review gives for one outcome, the intervention against its comparator.
ReviewAnswer = Literal["higher", "lower", "no difference", "uncertain effect", "insufficient data"]
REVIEW_ANSWERS: tuple[ReviewAnswer, ...] = get_args(ReviewAnswer)
# GRADE's certainty of evidence, lowest first (a distance in levels is a difference of indices).
Certainty = Literal["very low", "low", "moderate", "high"]
CERTAINTIES: tuple[Certainty, ...] = get_args(Certainty)


QUOTE_CHARS = 400


class Finding(BaseModel):
    statement: Annotated[str, _first(PARAGRAPH_CHARS)] = Field(
        min_length=1, max_length=PARAGRAPH_CHARS, description="One claim, in one or two sentences"
    )
    evidence_ids: Annotated[list[EvidenceId], _first(MAX_FINDING_IDS)] = Field(
        max_length=MAX_FINDING_IDS, description="Ids of the collected evidence items that support the claim"
    )
    quote: Annotated[str | None, _first(QUOTE_CHARS)] = Field(
        default=None,
        max_length=QUOTE_CHARS,
        description="Words copied verbatim from the cited full-text passage that the claim stands on (optional)",
    )


class ResearchReport(BaseModel):
    """The final report, before citation checking and rendering (both done in code)."""

    question: Paragraph
    answer_brief: Paragraph = Field(description="The answer in two to four sentences, hedged as the evidence requires")
    # At least one finding is asked of the model; a report checked in code may end with none.
    key_findings: Annotated[list[Finding], _first(MAX_FINDINGS)] = Field(
        max_length=MAX_FINDINGS,
        description="The main findings, each citing evidence ids",
        json_schema_extra={"minItems": 1},
    )
    contrary_evidence: Annotated[list[Finding], _first(MAX_CONTRARY)] = Field(
        default_factory=list, max_length=MAX_CONTRARY, description="Null, negative or harmful findings"
    )
    limitations: Annotated[list[Sentence], _first(MAX_LIMITATIONS)] = Field(
        default_factory=list, max_length=MAX_LIMITATIONS, description="Limits of the evidence and of this review"
    )
    references: Annotated[list[EvidenceId], _first(MAX_REFERENCES)] = Field(
        default_factory=list, max_length=MAX_REFERENCES, description="Ids of every evidence item cited"
    )
    verdict: VerdictLabel | None = Field(
        default=None,
        description="The answer in one word: yes, no or maybe for a yes/no question; supported, refuted or mixed "
        "for a claim; insufficient when the evidence does not bear on it",
    )
    verdict_confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="Confidence in the verdict")


StopReason = Literal[
    "sufficient", "max_iterations", "max_evidence", "time_budget", "llm_budget", "llm_failed", "no_evidence", "error"
]
STOP_EXPLANATIONS: dict[str, str] = {
    "sufficient": "The judge found the evidence sufficient, with confidence at or above the threshold.",
    "max_iterations": "The iteration budget ran out: every planned round was run. Only a language-model judge "
    "that finds the evidence sufficient ends a run sooner; a judge computed in code never does.",
    "max_evidence": "The run reached its cap on collected evidence.",
    "time_budget": "The wall-clock budget ran out.",
    "llm_budget": "The budget of language-model requests ran out.",
    "llm_failed": "The language model failed on several calls in a row; the report uses the evidence collected "
    "until then.",
    "no_evidence": "The searches found no evidence for this question.",
    "error": "The run failed unexpectedly; the report uses the evidence collected until then.",
}

# Why a report was built in code rather than written by the Report agent.
FallbackReason = Literal["no_evidence", "report_failed", "no_cited_findings", "report_crashed", "code_only"]
FALLBACK_EXPLANATIONS: dict[FallbackReason, str] = {
    "no_evidence": "no evidence was collected, so there was nothing to report on",
    "report_failed": "the report model failed or ran out of time or requests",
    "no_cited_findings": "none of the report model's findings cited collected evidence",
    "report_crashed": "the report stage crashed (a bug, not a model failure)",
    "code_only": "the run used no language model",
}


class Judgement(BaseModel):
    """What the judge stage produced: the assessment, how many items it rests on, and who made it
    (``code`` when the Judge's model failed and the assessment was computed in code instead)."""

    assessment: Assessment
    items_judged: int = Field(ge=0)
    by: Literal["model", "code"] = "model"


class SearchStep(BaseModel):
    """What one search step did, in counts and ids (the evidence itself lives in the run's collection)."""

    queries: list[str]
    sources_answered: list[str] = Field(description="Sources that answered at least one query")
    sources_failed: dict[str, str] = Field(description="Source -> first error, for sources that failed a query")
    found: int = Field(description="Items the sources returned, before any de-duplication")
    kept_ids: list[str] = Field(description="Items new to this run, stored and collected")
    deduplicated: int = Field(description="Items dropped as duplicates in meaning of stored evidence")
    duplicates: dict[str, str] = Field(description="Dropped id -> id of the stored item it duplicates")
    already_collected: int = Field(description="Items this run had already collected")
    related_ids: list[str] = Field(description="Stored items recalled as related to the question")
    capped: bool = Field(description="True when the evidence cap stopped items from being added")
    errors: list[str]
    search_seconds: float
    store_seconds: float


class CitationAudit(BaseModel):
    """What the citation check changed."""

    repaired: dict[str, str] = Field(default_factory=dict, description="Id as written -> collected id")
    dropped_ids: list[str] = Field(default_factory=list, description="Cited ids that were never collected")
    dropped_findings: list[str] = Field(default_factory=list, description="Findings left with no valid citation")
    stripped_urls: list[str] = Field(default_factory=list, description="URLs removed from model-written text")
    unlisted_references: list[str] = Field(default_factory=list, description="References dropped from the list")
    retracted_ids: list[str] = Field(
        default_factory=list, description="Cited items that have been retracted: removed, as they support nothing"
    )
    unverified_quotes: list[str] = Field(
        default_factory=list, description="Quotes found in none of the passages their finding cites: removed"
    )

    @property
    def clean(self) -> bool:
        return not (self.dropped_ids or self.dropped_findings or self.stripped_urls)


MAX_VERDICT_IDS = 10
MAX_GRADED_IDS = 100  # the studies of a body of evidence GRADE rates (a run counts fewer)
MAX_CANDIDATES = 10


class CandidateMember(BaseModel):
    """A drug a candidate class holds ("rosuvastatin" under statins) and the ids of its own studies."""

    name: Sentence
    ids: list[EvidenceId] = Field(default_factory=list, max_length=MAX_VERDICT_IDS)


class Candidate(BaseModel):
    """One intervention an open question's counted studies tested, and how their results for the question's
    outcome read: the ids of the studies in each direction, strongest design first."""

    intervention: Sentence
    favourable: list[EvidenceId] = Field(default_factory=list, max_length=MAX_VERDICT_IDS)
    null: list[EvidenceId] = Field(default_factory=list, max_length=MAX_VERDICT_IDS)
    unfavourable: list[EvidenceId] = Field(default_factory=list, max_length=MAX_VERDICT_IDS)
    strongest_design: str | None = None
    strongest_level: int | None = Field(default=None, ge=1, le=5)
    members: list[CandidateMember] = Field(
        default_factory=list, description="A drug class only: its members the studies tested, each with its studies"
    )
    indirect: dict[EvidenceId, Sentence] = Field(
        default_factory=dict,
        description="Its studies of other people than the question's, with why ('people without heart failure'): "
        "they answer the question only indirectly",
    )

    @property
    def summary(self) -> str:
        """'statins (of which rosuvastatin): 2 favourable, 1 null (strongest: meta-analysis, OCEBM level 1)'."""
        counts = ", ".join(
            f"{len(ids)} {name}"
            for name, ids in (("favourable", self.favourable), ("null", self.null), ("unfavourable", self.unfavourable))
            if ids
        )
        if self.indirect:
            counts += f", of which {len(self.indirect)} indirect (other people)"
        level = f", OCEBM level {self.strongest_level}" if self.strongest_level else ""
        strongest = f" (strongest: {self.strongest_design}{level})" if self.strongest_design else ""
        members = f" (of which {', '.join(member.name for member in self.members)})" if self.members else ""
        return f"{self.intervention}{members}: {counts}{strongest}"


class Verdict(BaseModel):
    """What a run concludes, in one label a reader can act on: for a yes/no question ``yes``, ``no`` or
    ``maybe``, for a claim ``supported``, ``refuted`` or ``mixed``; ``insufficient`` when nothing collected
    bears on it; ``open`` for a question that asks which intervention ("Which drugs reduce mortality in
    sepsis?"): no yes or no, but the ``candidates`` with their readings. ``by`` says who gave it: the Report
    model, or code (no model, or the model failed)."""

    label: VerdictLabel
    confidence: float = Field(ge=0.0, le=1.0, description="How sure the verdict is, 0 to 1")
    evidence_ids: Annotated[list[EvidenceId], _first(MAX_VERDICT_IDS)] = Field(
        default_factory=list, max_length=MAX_VERDICT_IDS, description="Ids of the items the verdict rests on"
    )
    strongest_design: str | None = Field(default=None, description="The strongest study design behind it")
    strongest_level: int | None = Field(default=None, ge=1, le=5, description="Its OCEBM 2011 level")
    by: Literal["model", "code"] = "code"
    method: str = Field(default="", description="How the verdict was reached")
    probabilities: dict[str, float] = Field(default_factory=dict, description="Pooled stance, code verdicts only")
    confidence_is_split: bool = Field(
        default=False,
        description="The confidence of a maybe or mixed weighed from the counted studies' readings: how evenly they "
        "split (1 when evenly), not how sure the verdict is",
    )
    borderline: bool = Field(
        default=False,
        description="A verdict from the counted studies' readings whose favourable share lies within a small margin of "
        "a threshold (yes from 0.65, no up to 0.35): one study read otherwise could change it",
    )
    rationale: Sentence = ""
    against_ids: Annotated[list[EvidenceId], _first(MAX_VERDICT_IDS)] = Field(
        default_factory=list,
        max_length=MAX_VERDICT_IDS,
        description="Counted studies that read against the verdict: for a yes or no from the counted readings, every "
        "weighed study read the other way; for the stance model's, those at the report's best level of evidence",
    )
    answer: ReviewAnswer | None = Field(
        default=None,
        description="The question's outcome under the intervention against the comparator, as a review states it "
        "(higher, lower, no difference, uncertain effect, insufficient data); the label is derived from it",
    )
    certainty: Certainty | None = Field(default=None, description="GRADE certainty of the evidence for the answer")
    certainty_reasons: list[Sentence] = Field(
        default_factory=list,
        max_length=8,
        description="GRADE: where the certainty started and each domain rated down, with its reason",
    )
    certainty_ids: Annotated[list[EvidenceId], _first(MAX_GRADED_IDS)] = Field(
        default_factory=list, max_length=MAX_GRADED_IDS, description="The studies GRADE rated: the summary's body"
    )
    counted: Verdict | None = Field(
        default=None, description="A model's verdict only: what the counted studies' readings give, when it differs"
    )
    candidates: list[Candidate] = Field(
        default_factory=list,
        max_length=MAX_CANDIDATES,
        description="An open question only: the interventions the counted studies tested, with their readings",
    )

    @property
    def headline(self) -> str:
        """'Verdict: yes (confidence 0.72)'; for an open question, its candidates."""
        if self.label == "open":
            listed = "; ".join(candidate.summary for candidate in self.candidates) or "none found"
            return f"open question, no yes or no; candidate interventions: {listed}"
        return f"{self.label}{', borderline' if self.borderline else ''} ({self.confidence_text})"

    @property
    def stated(self) -> str:
        """The answer as a run's last line and MCP state it: the headline, which way the question's outcome moves
        under the intervention against the comparator, and the GRADE certainty; for ``insufficient``, no
        confidence to give but what nothing matched (the rationale)."""
        if self.label == "insufficient":
            return self.rationale or "insufficient"
        answer = f" · the outcome: {self.answer}" if self.answer is not None else ""
        certainty = f" · GRADE certainty {self.certainty}" if self.certainty is not None else ""
        return f"{self.headline}{answer}{certainty}"

    @property
    def confidence_text(self) -> str:
        """The confidence as a report words it (``confidence_words``)."""
        return confidence_words(self.label, self.confidence, split=self.confidence_is_split)

    @property
    def favourable_share(self) -> float | None:
        """The favourable share of the weight a verdict from the counted studies' readings is read from (yes from
        0.65, no up to 0.35), whatever its label; None for the stance model's verdict or a model's."""
        if self.by == "code" and set(self.probabilities) == {"yes", "no"}:
            return self.probabilities["yes"]
        return None


def confidence_words(label: str, confidence: float, *, split: bool) -> str:
    """A verdict's confidence in words. A maybe (or mixed) weighed from the counted readings carries how evenly the
    evidence is split (1 when evenly), which "Maybe (confidence 1.00)" would read as certainty; every other verdict
    carries how sure it is of its label (the stance model's maybe, though computed in code too, carries its
    probability of maybe)."""
    if split and label in ("maybe", "mixed"):
        return f"the studies are divided: {confidence:.2f}, where 1 is an even split"
    return f"confidence {confidence:.2f}"
