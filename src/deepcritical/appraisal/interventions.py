"""Whether a study tests an intervention, and which: what an open question ("Which drugs reduce mortality in
sepsis?") lists as its candidates (``appraisal.candidates``), and the studies whose results can answer it at all
(``appraisal.study_reading``): a biomarker's difference between people with long COVID and without ("serotonin was
43% lower") is no treatment's result."""

from __future__ import annotations

import re

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.reading.comparison import stems
from deepcritical.reading.drug_classes import names_a_drug
from deepcritical.reading.frame import frame_question
from deepcritical.vocabulary import REVIEW_DESIGNS, TRIAL_DESIGNS

# A leading tag in brackets ("[DEMO]", "[Letter]") is no part of a title's subject.
_TAG = re.compile(r"^\s*\[[^\]]{1,40}\]\s*")
_AND = re.compile(r"\s+(?:and|in|on|for)\s+", re.IGNORECASE)
# A trial tests an intervention, whatever its title calls it.
_INTERVENTIONAL = frozenset({*TRIAL_DESIGNS, "clinical_trial"})
# A title that frames its subject as given for something or against something else ("Rosuvastatin for sepsis",
# "Continuation versus interruption of statins", "Atorvastatin to prevent ..."), or as having an effect ("Effect
# of vitamin D on depression"), names an intervention; "Mitochondrial dysfunction in ..." and "X is associated
# with Y" name a finding.
# (Right after the name: "Biomarkers for predicting sepsis mortality" names a test, not a treatment.)
_TESTED = re.compile(
    r"^\s*(?:for(?!\s+(?:predict|diagnos|detect|screen|identif|assess|measur|risk))|versus|vs\.?|compared (?:with|to)"
    r"|to (?:prevent|treat|reduce|improve))\s",
    re.IGNORECASE,
)
_EFFECT_OF = re.compile(r"^(?:the\s+)?(?:effects?|efficacy|effectiveness|impact)\s+of\s", re.IGNORECASE)
# A review that pools randomised trials reviews interventions.
_OF_TRIALS = re.compile(
    r"\b(?:of|pool\w*|includ\w*|identified)\s+(?:[\w,]+\s+){0,2}?(?:randomi[sz]ed|placebo-controlled|controlled)"
    r"\s+(?:\w+\s+)?trials\b",
    re.IGNORECASE,
)
_TITLE_WORD = re.compile(r"[A-Za-z][\w-]*")
# The arm a trial randomised people to: "randomised to empagliflozin 10 mg daily or placebo" is empagliflozin
# (its dose and schedule, from the first number, are how it was given).
_ARM = re.compile(
    r"\brandomi[sz]ed\s+(?:\w+\s+){0,3}?to\s+(?:receive\s+)?(?:either\s+)?(?:an?\s+|the\s+)?([A-Za-z][\w\s-]{1,60}?)"
    r"(?:\s+\d[^,;]*?)?\s+(?:or|versus|vs\.?|compared with)\s",
    re.IGNORECASE,
)
# The heads of an intervention's name that is no drug: a therapy, a programme, a supplement.
_TREATMENT_HEADS = frozenset(
    stems(
        "therapy therapies treatment supplementation supplement supplements exercise training programme program "
        "rehabilitation intervention vaccine vaccination surgery counselling psychotherapy diet inhibitor inhibitors "
        "agonist agonists antagonist antagonists blocker blockers pacing stimulation acupuncture transplantation"
    )
)


def intervention_of(view: EvidenceView) -> str | None:
    """The intervention a study's title names ("Rosuvastatin for sepsis-associated ARDS: ..." is
    rosuvastatin), read by the question's own framing. A name is an intervention's when it is a drug's
    (``names_a_drug``: an INN stem or a drug class) or a treatment's ("graded exercise therapy"), or the title
    frames it as one ("X for Y", "X versus Y", "Effect of X on Y"); a trial (or a review of trials) whose title
    opens on something else is named by the drug its title names or the arm it randomised people to. None when
    the title's subject is no intervention: a mechanism, a biomarker finding or a harm ("Reduced circulating
    serotonin ... is associated with fatigue", "Symptom exacerbation after graded exercise therapy")."""
    title = _TAG.sub("", view.title).strip()
    frame = frame_question(title if title.endswith("?") else f"{title}?")
    named = frame.intervention or title
    # "Pre-admission statin use and 30-day mortality": the intervention is what comes before its outcome.
    name = _AND.split(named, maxsplit=1)[0].strip(" .:;,") or named
    if _is_intervention(name, title):
        return name
    if view.design in _INTERVENTIONAL or (view.design in REVIEW_DESIGNS and _OF_TRIALS.search(f"{title} {view.text}")):
        # A trial (or a review of trials) tests an intervention, though its title may open on what it measured
        # ("Natriuresis, plasma volume ... with empagliflozin"): the drug its title names, else the arm its
        # text says it randomised people to, else the title's subject.
        drug = next((word for word in _TITLE_WORD.findall(title) if names_a_drug(word)), None)
        arm = _ARM.search(view.text)
        return drug or (arm.group(1).strip() if arm else name)
    return None


def _is_intervention(name: str, title: str) -> bool:
    """Whether a title's subject is an intervention by its own name (a drug's, a treatment's) or by how the
    title frames it ("X for Y", "Effect of X")."""
    return bool(
        names_a_drug(name)
        # Its head, the last word ("graded exercise *therapy*"; "exercise *capacity*" is a measure).
        or set(stems(name.replace("-", " "))[-1:]) & _TREATMENT_HEADS
        or (title.lower().startswith(name.lower()) and _TESTED.match(title[len(name) :]))
        or _EFFECT_OF.match(title)
    )


def names_a_treatment(title: str) -> bool:
    """Whether a title names a drug or a treatment anywhere in it ("Symptom exacerbation after graded exercise
    *therapy*"), though its subject may be something else (a harm of it)."""
    title = _TAG.sub("", title)
    return names_a_drug(title) or bool(set(stems(title.replace("-", " "))) & _TREATMENT_HEADS)
