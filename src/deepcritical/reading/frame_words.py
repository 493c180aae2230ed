"""The words the question-frame parser (``reading.frame``) knows: English function words, effect verbs and
their forms, predicate words and the markers that open each part of a question. Generic English, no list of
any corpus's drugs or diseases."""

from __future__ import annotations

from deepcritical.sources.query import STOP_WORDS


def words(text: str) -> frozenset[str]:
    """A vocabulary written as words separated by white space."""
    return frozenset(text.split())


# Function words: never part of an entity's edges, and (except "of", "with" and "'s") the end of one.
FUNCTION = words(
    """
    a an the any some this these that those their its his her our your my such each every all both
    either neither no not nor and or plus but if then than as at by from into onto to up down out over under
    about above below between through during after before without within upon via per whether who whom
    whose which what when where why how there here it they them he she we you i me us one ones more most
    less least very much many also still really actually significantly truly ever just only even further
    again already be been being is are was were am do does did done doing can could should would will
    shall may might must has have had having get gets got of with in on for among amongst against versus
    vs compared true false evidence likely
    """
) | {word for word in STOP_WORDS if word.isalpha() or "'" in word}  # what a PubMed query drops ("know", "it's")
AUX = words(
    """
    do does did is are was were can could should would will may might must has have had shall
    """
)
BE = frozenset({"be", "been", "being", "is", "are", "was", "were", "am"})
WH = frozenset({"what", "which", "who", "whom"})
SUBJECT_PRONOUNS = frozenset({"it", "they", "this", "these", "them"})
# Heads that ask for an intervention rather than name one: "What treatments ...", "the best therapy for".
OPEN_HEADS = words(
    """
    treatment treatments therapy therapies drug drugs medication medications medicine medicines
    intervention interventions supplement supplements option options agent agents approach approaches
    strategy strategies factor factors management
    """
)
# Words that say how an outcome is counted, not what it is: "the risk of dementia" is dementia, and a study that
# names a risk of something else does not name it.
OUTCOME_MEASURES = words("risk risks rate rates incidence prevalence level levels odds")
# Heads that say how an intervention is looked at, not what it is: "the use of aspirin" is about aspirin.
ASPECT_HEADS = words(
    """
    use effect effects impact role influence efficacy effectiveness safety benefit benefits
    administration addition value usefulness contribution association associations relationship link
    """
)
# Aims, not things: "for the prevention or treatment of depression" is about depression, and "prevention"
# alone names neither a population nor an outcome. One prevents an outcome ("prevention of fractures": the
# outcome is fractures) and treats a condition people have ("treatment of sepsis": the population).
AIM_HEADS = words(
    """
    prevention preventing prophylaxis treatment treatments treating therapy therapies management managing
    control controlling relief
    """
)
PREVENTIVE_AIMS = frozenset({"prevention", "preventing", "prophylaxis"})
# Nouns that name what is measured, not who: "for mortality in sepsis", "better than placebo for heart failure
# hospitalisation" are about an outcome, though "for" opens a population ("for type 2 diabetes").
OUTCOME_HEADS = words(
    """
    mortality survival death deaths hospitalisation hospitalisations hospitalization hospitalizations admission
    admissions readmission readmissions recurrence recurrences relapse relapses remission incidence
    """
)
# Words that qualify an aim: "primary prevention", "first-line treatment", "prevention or treatment".
AIM_QUALIFIERS = words("primary secondary tertiary early first-line second-line long-term short-term or and")
# People in general: "patients with heart failure" is about heart failure.
PEOPLE = frozenset(
    ["patients", "people", "persons", "individuals", "subjects", "participants", "those", "cases", "adults"]
)
# Verbs that link an intervention to an outcome; their -s, -es, -d, -ed and -ing forms are built below.
VERB_ROOTS = words(
    """
    reduce lower decrease improve increase prevent treat cure slow delay affect influence alter change cause
    protect benefit help raise worsen shorten prolong extend predict modify attenuate enhance promote induce
    inhibit restore relieve alleviate mitigate contribute lead work confer impact control boost suppress stop
    reverse harm trigger lessen lengthen impair impede accelerate regulate mediate correlate limit block halt
    ameliorate normalize normalise counteract aggravate exacerbate diminish elevate damage lack show play offer
    provide decline result relate associate link predispose protect reduce require need remain stay exist occur
    """
)


def forms(root: str) -> set[str]:
    stem = root[:-1] if root.endswith("e") else root
    return {root, root + "s", root + "es", root + "d", stem + "ed", stem + "ing", root + "ing"}


VERBS = frozenset(form for root in VERB_ROOTS for form in forms(root)) | {"led", "shown", "worked"}
# Words after "is/are/be" that say what the question asks of its subject.
PREDICATES = words(
    """
    effective efficacious safe beneficial superior inferior better worse useful helpful harmful
    protective appropriate feasible predictive able sufficient necessary noninferior non-inferior
    equivalent comparable similar preferable associated linked related correlated repurposed used given
    prescribed recommended indicated needed required considered involved implicated responsible critical
    important essential
    """
)
COMPARATIVES = frozenset({"superior", "inferior", "better", "worse", "noninferior", "non-inferior", "equivalent"})
COMPARATIVES |= {"comparable", "similar", "preferable", "preferred"}
# Role markers: the word that opens a part of the question, by the part it opens.
TO_POPULATION = frozenset({"in", "among", "amongst", "within", "for", "during", "after"})
TO_COMPARATOR = frozenset({"versus", "vs", "than", "compared", "over"})
TO_OUTCOME = frozenset({"on"})
# Words that keep an entity going across them: "quality of life", "patients with heart failure".
JOINERS = frozenset({"of", "with"})
DETERMINERS = frozenset({"the", "a", "an", "their", "its", "his", "her", "our", "any"})
