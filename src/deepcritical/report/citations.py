"""Citation checking in code: a report may cite only evidence this run collected.

An id in a trivially different form of a collected one (a bare PMID, "PMID: 123", a doi.org link, a
URL that normalises to a collected URL) is repaired; any other unknown id is dropped, and a finding
left without a valid citation is dropped. URLs in model-written text are removed: the only links in
a rendered report are those of the collected sources, in the reference list. A retracted item supports
nothing: it is removed from every finding (the audit lists it), and a finding left without support goes.
A finding is a result: clauses that give advice are removed, and a finding that is only advice goes; so
does a finding about another outcome than the question's that cites only studies read for another outcome.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence

from deepcritical.appraisal.framing import STUDY_TEXT_CHARS, EvidenceView, no_result_section
from deepcritical.appraisal.passages import result_only
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.models import PUBMED_URL, Evidence, normalize_doi, normalize_url
from deepcritical.outputs import CitationAudit, Finding, ResearchReport
from deepcritical.text import collapse_whitespace

URL = re.compile(r"(?:\burl:)?(?:\b(?:https?|ftp|library)://|\bwww\.)[^\s<>\"'`()\[\]]*[^\s<>\"'`()\[\].,;:!?]", re.I)
MARKDOWN_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*([^)\s]*)[^)]*\)")
INLINE_ID = re.compile(r"[\[(]\s*((?:pmid|pmcid|pmc|doi|url)\s*:?\s*[^\])\s][^\])]*)[\])]", re.IGNORECASE)
LINK_REMOVED = "[link removed]"
_DOI = re.compile(r"10\.\d{4,9}/\S+")


class CitationIndex:
    """Every form under which a collected item may be cited, mapped to its evidence id."""

    def __init__(self, collected: Mapping[str, Evidence]) -> None:
        self.ids = set(collected)
        self._by_pmid: dict[str, str] = {}
        self._by_pmcid: dict[str, str] = {}
        self._by_doi: dict[str, str] = {}
        self._by_url: dict[str, str] = {}
        for evidence_id, item in collected.items():
            citation = item.citation
            if citation.pmid:
                self._by_pmid[citation.pmid] = evidence_id
            if citation.pmcid:
                self._by_pmcid[citation.pmcid.lower()] = evidence_id
            if citation.doi:
                self._by_doi[citation.doi] = evidence_id
            self._by_url[normalize_url(citation.url)] = evidence_id
            if evidence_id.startswith("url:"):
                self._by_url[evidence_id[4:]] = evidence_id

    def resolve(self, raw: str) -> str | None:
        """The collected id ``raw`` names, or None."""
        text = raw.strip().strip("[]()<>.,;").strip()
        if text in self.ids:
            return text
        lowered = text.lower()
        if match := re.fullmatch(r"(?:pmid|pubmed)?\s*:?\s*(\d{1,9})", lowered):
            return self._by_pmid.get(match.group(1))
        if match := re.fullmatch(r"(?:pmcid\s*:?\s*)?(pmc\d+)", lowered):
            return self._by_pmcid.get(match.group(1))
        if lowered.startswith("url:"):
            text, lowered = text[4:].strip(), lowered[4:].strip()
        if lowered.startswith(("http://", "https://")):
            if match := PUBMED_URL.match(text):
                return self._by_pmid.get(match.group(1))
            if "doi.org/" in lowered and (doi := _DOI.search(text)):
                return self._by_doi.get(normalize_doi(doi.group(0)))
            return self._by_url.get(normalize_url(text))
        if lowered.startswith(("doi", "10.")) and (doi := _DOI.search(text)):
            return self._by_doi.get(normalize_doi(doi.group(0)))
        return None


def remove_urls(text: str, on_url: Callable[[str], str] | None = None) -> str:
    """Text without links: Markdown links keep their label, bare URLs become ``[link removed]``
    (or whatever ``on_url`` returns for them)."""
    replace = on_url or (lambda _url: LINK_REMOVED)

    def label(match: re.Match[str]) -> str:
        replacement = replace(match.group(2)) if match.group(2) else ""
        return f"{match.group(1)} {replacement}".strip() if replacement == LINK_REMOVED else match.group(1)

    text = MARKDOWN_LINK.sub(label, text)
    return collapse_whitespace(URL.sub(lambda match: replace(match.group(0)), text))


_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-"})
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _comparable(text: str) -> str:
    """Text as a quote is compared: case, runs of whitespace, dash and quotation-mark variants, outer
    quotation marks and a closing ellipsis do not count."""
    flat = collapse_whitespace(unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES).lower())
    return flat.strip(" \"'").removesuffix("...").removesuffix("\u2026").strip(" .")


def quote_in(quote: str, items: Sequence[Evidence]) -> bool:
    """True when ``quote`` occurs in the text of one of ``items`` (a passage, or an abstract)."""
    wanted = _comparable(quote)
    return bool(wanted) and any(wanted in _comparable(item.content) for item in items)


class _Checker:
    def __init__(
        self, collected: Mapping[str, Evidence], question: str | None = None, reader: StudyReader | None = None
    ) -> None:
        self.collected = collected
        self.reader = reader or (StudyReader(question) if question else None)
        self.index = CitationIndex(collected)
        self.audit = CitationAudit()
        self.retracted = {evidence_id for evidence_id, item in collected.items() if item.retracted}

    def _resolve(self, raw: str) -> str | None:
        resolved = self.index.resolve(raw)
        if resolved is None:
            self.audit.dropped_ids.append(raw)
            return None
        if resolved != raw:
            self.audit.repaired[raw] = resolved
        if resolved in self.retracted:  # a retracted publication supports no finding
            if resolved not in self.audit.retracted_ids:
                self.audit.retracted_ids.append(resolved)
            return None
        return resolved

    def clean_text(self, text: str, *, keep_ids: bool = False) -> tuple[str, list[str]]:
        """Model text without URLs or inline ids; returns the collected ids they named. With ``keep_ids``
        (prose that cites, like the answer in brief) each resolved id stays in the text, written bare, for the
        renderer to number; unknown and retracted ones still go."""
        named: list[str] = []

        def on_url(url: str) -> str:
            if (resolved := self.index.resolve(url)) is not None:
                if resolved in self.retracted:
                    return ""
                named.append(resolved)
                return resolved if keep_ids else ""
            self.audit.stripped_urls.append(url)
            return LINK_REMOVED

        def on_inline(match: re.Match[str]) -> str:
            # "(pmid:1; pmid:2)" names two items.
            parts = [part for part in re.split(r"\s*[,;]\s*", match.group(1)) if part.strip()]
            resolved = [found for part in parts if (found := self._resolve(part)) is not None]
            named.extend(resolved)
            return f"({', '.join(resolved)})" if keep_ids and resolved else ""

        text = remove_urls(text, on_url)
        return collapse_whitespace(INLINE_ID.sub(on_inline, text)), named

    def findings(self, findings: Sequence[Finding]) -> list[Finding]:
        kept = []
        for finding in findings:
            statement, named = self.clean_text(finding.statement)
            # A finding is a result: clauses of advice ("a randomised trial is required") go.
            statement = result_only(statement) or ""
            cited = [resolved for raw in finding.evidence_ids if (resolved := self._resolve(raw)) is not None]
            cited = list(dict.fromkeys([*cited, *named]))
            # A passage from a paper's introduction or methods states background or a plan, not a result.
            cited = [i for i in cited if not (i in self.collected and _outside_results(self.collected[i]))]
            quote = finding.quote
            if quote and not quote_in(quote, [self.collected[i] for i in cited if i in self.collected]):
                self.audit.unverified_quotes.append(quote[:300])  # a quote the passage does not hold is not kept
                quote = None
            if cited and statement.strip(" .;,") and not self._other_outcome(statement, cited):
                kept.append(Finding(statement=statement, evidence_ids=cited, quote=quote))
            else:
                self.audit.dropped_findings.append(finding.statement[:300])
        return kept

    def _other_outcome(self, statement: str, cited: Sequence[str]) -> bool:
        """A finding about another outcome than the question's, citing only studies the result reader read for
        another outcome (a depression trial on a fractures question): no finding on the question, for or against
        (the study stays in the counted table, under "no clear result")."""
        if self.reader is None or not self.reader.asks_outcome:
            return False
        views = [EvidenceView.of(self.collected[i], STUDY_TEXT_CHARS) for i in cited if i in self.collected]
        return bool(views) and all(
            not self.reader.on_outcome(statement, view) and self.reader.read(view).other_outcome is not None
            for view in views
        )


# Sections of a full text that report no result of the paper's own (JATS and PDF section titles, lower case).
def _outside_results(item: Evidence) -> bool:
    if item.passage is None:
        return False
    return no_result_section(item.passage.section, item.passage.subsection)


def verify_citations(
    report: ResearchReport,
    collected: Mapping[str, Evidence],
    *,
    question: str | None = None,
    reader: StudyReader | None = None,
) -> tuple[ResearchReport, CitationAudit]:
    """The report with every citation resolved to collected evidence, and an audit of the changes; ``reader``:
    the run's reader of the question's studies (else the linear one)."""
    checker = _Checker(collected, question, reader)
    key_findings = checker.findings(report.key_findings)
    contrary = checker.findings(report.contrary_evidence)
    brief, _ = checker.clean_text(report.answer_brief, keep_ids=True)
    limitations = [text for item in report.limitations if (text := checker.clean_text(item, keep_ids=True)[0])]
    references = list(dict.fromkeys(i for finding in (*key_findings, *contrary) for i in finding.evidence_ids))
    checker.audit.unlisted_references = [ref for ref in report.references if ref not in references]
    verified = ResearchReport(
        question=question or report.question,
        answer_brief=brief,
        key_findings=key_findings,
        contrary_evidence=contrary,
        limitations=limitations,
        references=references,
    )
    return verified, checker.audit
