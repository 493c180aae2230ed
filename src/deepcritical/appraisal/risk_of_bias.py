"""A study's risk-of-bias features, as its own text states them (Cochrane's domains, read from an abstract):
how it was randomised, whether allocation was concealed, who was blinded, and how many were lost.

An abstract says little of this; what it does not say is ``None`` (not judged), never "high risk": GRADE rates
down for a risk shown, and a feature left unsaid is only a reason to read the full text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Risk = Literal["low", "high"]

_RANDOM_METHOD = re.compile(
    r"\b(?:computer[- ]generated|random[- ]number|block(?:ed)?[- ]randomi[sz]|stratified[- ]randomi[sz]"
    r"|randomi[sz]ation (?:list|schedule|sequence)|minimi[sz]ation|central(?:ly|ised|ized)? randomi[sz])",
    re.IGNORECASE,
)
_RANDOMISED = re.compile(r"\brandomi[sz]ed\b|\brandomly (?:assigned|allocated)\b", re.IGNORECASE)
_QUASI = re.compile(
    r"\bquasi[- ]randomi[sz]|\balternat(?:e|ing|ion)\b.{0,20}\b(?:allocat|assign)|\b(?:date of birth|odd or even|"
    r"hospital number|day of (?:the )?week)\b",
    re.IGNORECASE,
)
_CONCEALED = re.compile(
    r"\b(?:sealed|opaque)\b.{0,30}\benvelopes?\b|\bconceal(?:ed|ment)\b|\bcentral(?:ised|ized|ly)?\b.{0,30}"
    r"\b(?:allocation|randomi[sz]ation|telephone|web)\b|\binteractive (?:voice|web)\b",
    re.IGNORECASE,
)
_BLINDED = re.compile(
    r"\b(?:double|triple|single)[- ](?:blind|mask)\w*|\bplacebo[- ]controlled\b|\bblinded\b|\bmasked\b",
    re.IGNORECASE,
)
_OPEN = re.compile(r"\bopen[- ]label\b|\bunblinded\b|\bnot blinded\b|\bnon[- ]blinded\b", re.IGNORECASE)
_INTENTION_TO_TREAT = re.compile(r"\bintention[- ]to[- ]treat\b|\bITT\b", re.IGNORECASE)
# "32% were lost to follow-up", "dropout rate of 25%"; "of 200 randomised, 150 completed".
_LOST_SHARE = re.compile(
    r"(\d{1,2}(?:\.\d)?)\s*%\s*(?:of\s+\w+\s+)?(?:were\s+)?(?:lost to follow[- ]up|dropped out|withdr[ae]w)"
    r"|(?:drop[- ]?out|attrition|loss to follow[- ]up|withdrawal)\s+(?:rate\s+)?(?:was|of)\s+(\d{1,2}(?:\.\d)?)\s*%",
    re.IGNORECASE,
)
# A share lost above which the attrition domain is at high risk (Cochrane's rule of thumb: over a fifth).
HIGH_ATTRITION = 20.0


@dataclass(frozen=True)
class RiskOfBias:
    """Each domain: ``low`` when the text states what protects it, ``high`` when it states what does not,
    ``None`` when it states neither; ``quotes`` says which words judged each."""

    randomisation: Risk | None
    concealment: Risk | None
    blinding: Risk | None
    attrition: Risk | None
    quotes: dict[str, str]

    @property
    def high(self) -> list[str]:
        """The domains at high risk."""
        return [name for name in DOMAINS if getattr(self, name) == "high"]

    @property
    def unclear(self) -> list[str]:
        """The domains the text does not judge."""
        return [name for name in DOMAINS if getattr(self, name) is None]


DOMAINS = ("randomisation", "concealment", "blinding", "attrition")


def _found(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(0) if match else None


def risk_of_bias(text: str, *, randomised: bool) -> RiskOfBias:
    """The risk-of-bias features ``text`` (a study's title and abstract) states. A study that is not randomised
    is at high risk in randomisation whatever it says (a cohort's groups are not comparable by design)."""
    quotes: dict[str, str] = {}
    randomisation: Risk | None = None
    if (quasi := _found(_QUASI, text)) is not None or not randomised:
        randomisation = "high"
        quotes["randomisation"] = quasi or "not randomised"
    elif (method := _found(_RANDOM_METHOD, text)) is not None:
        randomisation, quotes["randomisation"] = "low", method
    concealment: Risk | None = None
    if (concealed := _found(_CONCEALED, text)) is not None:
        concealment, quotes["concealment"] = "low", concealed
    blinding: Risk | None = None
    if (open_label := _found(_OPEN, text)) is not None:
        blinding, quotes["blinding"] = "high", open_label
    elif (blinded := _found(_BLINDED, text)) is not None:
        blinding, quotes["blinding"] = "low", blinded
    attrition: Risk | None = None
    if (lost := _LOST_SHARE.search(text)) is not None:
        share = float(lost.group(1) or lost.group(2))
        attrition, quotes["attrition"] = ("high" if share > HIGH_ATTRITION else "low"), lost.group(0)
    elif (itt := _found(_INTENTION_TO_TREAT, text)) is not None:
        attrition, quotes["attrition"] = "low", itt
    return RiskOfBias(randomisation, concealment, blinding, attrition, quotes)


def is_randomised(text: str) -> bool:
    """The text says its participants were randomised (and not quasi-randomised)."""
    return bool(_RANDOMISED.search(text)) and not _QUASI.search(text)
