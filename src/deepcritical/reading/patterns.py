"""The written forms of statistical results, as regular expressions over a normalised text (see
:func:`normalised`): compiled on first use, so importing the reader costs nothing."""

from __future__ import annotations

import re
from functools import cache

# One character for one character, so every offset into the normalised text is an offset into the
# original: unicode minus and dashes become "-", thin and no-break spaces a space, full-width
# comparators their ASCII form. The middle dot (0·77) becomes a point only between digits (below).
_SAME_LENGTH = str.maketrans(
    {
        "\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
        "\ufe63": "-", "\uff0d": "-",
        "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ",
        "\u200b": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ", "\u2008": " ",
        "\uff1c": "<", "\uff1e": ">", "\uff1d": "=", "\u2a7d": "≤", "\u2a7e": "≥",
    }
)  # fmt: skip


@cache
def _middle_dot() -> re.Pattern[str]:
    return re.compile(r"(?<=\d)[\u00b7\u2219\u22c5](?=\d)")


def normalised(text: str) -> str:
    """``text`` with the same length, its look-alike characters made plain (see ``_SAME_LENGTH``)."""
    return _middle_dot().sub(".", text.translate(_SAME_LENGTH))


# A number as results are written: a sign, digits, a decimal point, an exponent ("2.5e-3"); a comma only
# between thousands ("1,586.01"), else it separates an interval's bounds ("0.8, 1.1").
NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?![\d.]\d)"
# A unit or a percent sign after a number ("7.0 mm", "-15%", "41.9 months", "4.2 percentage points"),
# never a word that carries the syntax ("to", "and", "CI", "vs", "p").
_SYNTAX_WORDS = r"(?:to|and|CI|vs|versus|or|in|p|P|for|with|at|of|on|the)\b"
_POINTS = r"\s?(?i:percentage|percent)\s+points?\b"
# A word unit may be long and hyphenated ("hospitalization/person-year"); a hyphen in it is followed by a letter,
# so "mg-10" leaves the "-10" of a range.
UNIT = rf"(?:{_POINTS}|\s?[%€$£]|\s?(?!{_SYNTAX_WORDS})[A-Za-zµμ](?:[A-Za-zµμ/²³0-9]|-(?=[A-Za-z])){{0,29}})?"
# Between an interval's bounds: "to", a comma, a dash glued to the first bound or spaced on both sides; a space
# before a negative number is the separator and the minus its sign ("-3.1 -1.2" is -3.1 to -1.2).
SEP = r"(?:\s*(?:to|,|;|and)\s*|(?<=\S)-\s*|\s+-\s+|\s+(?=-\d))"
_LEVEL = r"(?P<{name}>\d{{2}}(?:\.\d+)?)\s?%"
_CI_WORD = r"(?:CIs?\b|C\.I\.|(?i:confidence\s+intervals?|credib(?:le|ility)\s+intervals?)|CrI\b)"


def ci_label(name: str = "level") -> str:
    """ "95% CI", "95 % confidence interval (CI)", "95% confidence interval [CI]", "CI 95%", "CI": its level
    (if any) in group ``name``; "one-sided 97.5% CI", "97.5% one-sided CI": its sides in ``name_sides``."""
    level, after = _LEVEL.format(name=name), _LEVEL.format(name=name + "2")
    sides = r"(?:(?P<{g}>one|two|1|2)[- ]sided\s+)?"
    return (
        rf"{sides.format(g=name + '_sides')}(?:{level}\s*)?{sides.format(g=name + '_sides2')}{_CI_WORD}"
        rf"(?:\s*[(\[](?:\d{{2}}\s?%\s*)?CIs?[)\]])?(?:\s*(?:of\s*)?{after})?"
    )


def interval(low: str = "lo", high: str = "hi") -> str:
    """ "0.72-0.82", "-20.7 to +6.7", "0.75, 14.5", "-15% to +13%", optionally bracketed."""
    return rf"[(\[]?\s*(?P<{low}>{NUM}){UNIT}{SEP}(?P<{high}>{NUM}){UNIT}\s*[)\]]?"


# The unit a per-unit estimate is for: "OR 0.98 per SD", "HR 1.12 per 10 nmol/L", "per 1-SD increase",
# "per standard deviation increase" (at most three words, none that carries the syntax).
PER_UNIT = (
    r"\s+per\s+(?:\d+(?:\.\d+)?[\s-]?)?[A-Za-zµμ][\w/µμ²³.-]{0,15}"
    rf"(?:\s+(?!{_SYNTAX_WORDS})[A-Za-zµμ][\w/µμ²³.-]{{0,15}}){{0,2}}"
    r"(?:\s+in\s+[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)?"  # "per 10 mm Hg increase in pulse pressure"
)
# What may stand between a value and its interval: its unit, when the estimate is per unit ("0.98 per SD,
# 95% CI"), its standard error ("b = 0.31, SE = 0.12, 95% CI"), its comparator ("-28.1 cm2 compared with
# placebo (95% CI ...").
# its standard error written with a plus-minus ("0.61 ± 0.40 points/month (95% CI ...)": the value is 0.61), its
# side ("44.5% in favour of budesonide; 95% CI"), or the words "with a" ("0.6 points with a 95% CI of").
_BETWEEN_VALUE_AND_CI = (
    rf"(?:{PER_UNIT})?"
    rf"(?:\s*[,;]?\s*(?:SE|SEM|s\.e\.)\s*[=:]?\s*{NUM}"
    rf"|\s*(?:±|\+/-)\s*{NUM}{UNIT}"
    r"|\s+(?:compared\s+(?:with|to)|vs\.?|versus)\s+(?:the\s+)?[A-Za-z][\w-]*(?:\s+group)?"
    r"|\s+in\s+favou?r\s+of\s+(?:the\s+)?[A-Za-z][\w-]*(?:\s+group)?"
    r"|\s+with\s+an?(?=\s+\d{2}\s?%))?"
)


# The interval said to be the measure's: "HR = 6, 95% CI of HR = 1.2-34.2".
_OF_THE_MEASURE = r"of\s+(?:the\s+)?(?:[A-Z]{2,4}|[a-z]+\s+ratio)\s*[:=]"


@cache
def value_with_ci() -> re.Pattern[str]:
    """A value and its labelled interval: "0.58 (95% CI, 0.34 to 0.97)", "0·80, 95% CI 0·66 to 0·98",
    "-7.0 mm, 95% confidence interval (CI) [-20.7 to +6.7]", "2.1 (CI 95%: 1.2-3.4)"."""
    return re.compile(
        rf"(?<![\w.+\-])(?P<value>{NUM})(?!\s?%\s*{_CI_WORD}){UNIT}{_BETWEEN_VALUE_AND_CI}"
        rf"\s*[,;(\[]?\s*{ci_label()}\s*[\]),]?\s*(?:{_OF_THE_MEASURE}|[:=,]|is|was|of)?\s*{interval()}"
    )


# A pooled estimate's heterogeneity, in its interval's bracket: "0.95 (0.84 to 1.07; I²=61%)".
_HETEROGENEITY = rf"(?:\s*[;,]\s*I\s?[²2]\s*[=:]\s*{NUM}\s*%)?"


@cache
def value_with_bare_interval() -> re.Pattern[str]:
    """A value and a bracketed interval without a label: "1.26 (1.00-1.59)", "2.1 [1.2, 3.4]", "(HR 0.72,
    0.67 to 0.78)" (the level said once, for the sentence's first estimate), "(effect size +0.68; 0.05, 1.29)". Read as
    an estimate only after a measure's name or a CI label; else it is a median and its range."""
    return re.compile(
        rf"(?<![\w.+\-])(?P<value>{NUM}){UNIT}(?:{PER_UNIT})?"
        rf"\s*(?:[(\[]\s*(?P<lo>{NUM}){UNIT}{SEP}(?P<hi>{NUM}){UNIT}{_HETEROGENEITY}\s*[)\]]"
        rf"|[,;]\s*(?P<lo2>{NUM}){UNIT}\s*(?:(?:-|to)\s*(?P<hi2>{NUM})(?![\d.]*\s*[%/])|,\s*(?P<hi3>{NUM})(?=\s*\))))"
    )


@cache
def ci_label_alone() -> re.Pattern[str]:
    return re.compile(ci_label())


# Each measure by its names: abbreviations as written (case matters: "OR" is not "or"), words in any case.
# A longer name comes first so that "risk difference" is not read as "difference".
_MEASURE_NAMES: tuple[tuple[str, str], ...] = (
    (
        "SMD",
        r"(?i:standardi[sz]ed\s+mean\s+differences?|cohen'?s\s+d\b|hedges'?\s*g\b|effect\s+sizes?)"
        r"|\b(?:SMD|ES)s?(?![A-Za-z])",
    ),
    ("IRR", r"(?i:incidence\s+rate\s+ratios?|rate\s+ratios?)|\b(?:a|adj)?IRRs?(?![A-Za-z])"),
    ("HR", r"(?i:(?:sub)?hazards?\s+ratios?)|\b(?:a|adj)?HRs?(?![A-Za-z])"),
    ("OR", r"(?i:odds\s+ratios?)|\b(?:a|adj)?ORs?(?![A-Za-z])"),
    (
        "RD",
        r"(?i:(?:risk|rate)\s+differences?|absolute\s+risk\s+(?:reduction|difference|increase)s?)"
        r"|\b(?:ARR|ARD|(?:a|adj)?RDs?)\b",
    ),
    ("RR", r"(?i:relative\s+risks?|risk\s+ratios?|relative\s+rates?)|\b(?:a|adj)?RRs?(?![A-Za-z])"),
    ("NNT", r"(?i:number\s+needed\s+to\s+(?:treat|harm))|\bNN[TH][BH]?s?\b"),
    ("percent_change", r"(?i:relative\s+risk\s+reduction|percent(?:age)?\s+change)|\bRRR\b"),
    (
        "MD",
        r"(?i:(?:weighted\s+)?mean\s+differences?|(?:between|inter)[- ]group\s+differences?|differences?|"
        r"mean\s+changes?)|\b(?:W)?MDs?(?![A-Za-z])|(?<![\w.])[Bbβ](?=\s?=)",
    ),
)


@cache
def measure_names() -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _MEASURE_NAMES))


@cache
def measure_then_value() -> re.Pattern[str]:
    """A measure's name and a value close after it, no interval: "OR = 2.3", "HR 0.6", "NNT of 12"."""
    return re.compile(
        rf"(?:{measure_names().pattern})\s*(?:\([^()]{{1,12}}\)|\[[^\[\]]{{1,12}}\])?\s*"
        rf"(?:[,:=]|was|were|is|of)?\s*(?:[,:=])?\s*(?P<value>{NUM})(?![\d.]*\s*(?:%|[/±]))"
    )


_CMP = r"(?P<cmp><=|>=|=<|=>|[<>=≤≥]|\bis\b|\bwas\b|\bof\b)"
_P_NUMBER = (
    r"(?P<num>10\s*\^?\s*(?P<exp3>-\s*\d+)"
    r"|(?:\d*\.\d+|\d+)(?:\s*[x×*]\s*10\s*\^?\s*(?P<exp>-?\s*\d+)|[eE](?P<exp2>-?\d+))?)"
)


@cache
def p_value() -> re.Pattern[str]:
    """ "p = .03", "P<0.05", "p-value 0.02", "P for trend = 0.01", "P = 2.3 × 10-5", "p = NS", a corrected "pC =
    0.388"."""
    return re.compile(
        r"(?<![A-Za-z0-9])[Pp](?:_?(?:[Cc]|corr|adj))?(?P<word>\s*-?\s*values?)?"
        r"(?:\s*(?:for|of)\s+(?:linear\s+)?(?:trend|interaction|difference|heterogeneity|non-?inferiority))?"
        r"\s*(?:\(\s*\w+\s*\))?"  # "P (two-sided) ="
        rf"\s*(?:{_CMP}\s*(?:{_P_NUMBER}|(?P<ns>NS|N\.S\.?|n\.s\.?))|(?(word){_P_NUMBER.replace('?P<', '?P<b_')}|(?!)))"
    )


@cache
def not_significant_mark() -> re.Pattern[str]:
    """ "N.S.", "n.s." anywhere; "NS" only as a parenthesised or listed mark ("(NS)", "; NS)"), since
    "NS" is also normal saline."""
    return re.compile(r"(?<![\w.+\-])(?:N\.S\.?|n\.s\.?)(?!\w)|(?<=[(;,])\s*NS\s*(?=[);,])")


# A count's group named between it and its percentage: "18/30 placebo-treated patients (60.0%)".
_WORDS_THEN_PERCENT = r"(?:\s+[A-Za-z][\w-]*){{1,3}}\s*[(\[]\s*{pct}\s*[)\]]"


@cache
def count_value() -> re.Pattern[str]:
    """One group's count: "59/250 (22%)", "4/24; 17%", "59 out of 250 episodes (22%)", "265 [25%] of
    1054", "8 cases (16%)", "18 (36%)", "79% (11/14)", "32%, 7 of 22"."""
    n = r"\d+(?:,\d{3})*"
    pct = rf"{NUM}\s?%"
    return re.compile(
        rf"(?<![\w.+\-])(?:{n}\s*/\s*{n}(?:\s*[(\[]\s*{pct}\s*[)\]]|\s*[;,]\s*{pct}|{_WORDS_THEN_PERCENT.format(pct=pct)})?"
        rf"|{n}\s+(?:out\s+)?of\s+(?:the\s+)?{n}(?:\s+[A-Za-z][\w-]*){{0,3}}\s*[(\[]\s*{pct}\s*[)\]]"
        rf"|{n}\s*[(\[]\s*{pct}\s*[)\]]\s*of\s+{n}"
        rf"|{n}(?:\s+[a-z][\w-]*){{0,2}}\s*[(\[]\s*{pct}\s*[)\]]"
        rf"|{pct}\s*[(\[]\s*(?:{n}\s*/\s*{n}|{n}\s+(?:out\s+)?of\s+{n})\s*[)\]]"
        rf"|{pct}\s*[,;]\s*(?:{n}\s*/\s*{n}|{n}\s+(?:out\s+)?of\s+{n}))"
    )


@cache
def range_value() -> re.Pattern[str]:
    """One group's value with its interval or range: "3.8% (0.4%-12.9%)", "15 (7.5 to 24.75)", "68 months
    (range 1.4-170.0)"."""
    named = r"(?:(?i:range|IQR|interquartile\s+range)\s*[:,]?\s*)?"
    return re.compile(rf"(?<![\w.+\-]){NUM}{UNIT}\s*[(\[]\s*{named}{NUM}{UNIT}{SEP}{NUM}{UNIT}\s*[)\]]")


@cache
def mean_sd_value() -> re.Pattern[str]:
    """ "6.4 ± 0.9", "12 +/- 3 mmHg", "9.28 (SD 3.41)"; "4.41 [1.63] days" is not one (brackets are read as a
    range)."""
    # "9.28 (SD 3.41)", "7.3 (SD = 1.2) days": the SD named in brackets after the mean.
    return re.compile(
        rf"(?<![\w.+\-])(?P<mean>{NUM})(?:\s*(?:±|\+/-|\+-)\s*(?P<sd>{NUM}){UNIT}"
        rf"|{UNIT}\s*\(\s*SD\s*[=:,]?\s*(?P<sd2>{NUM})\s*\){UNIT})"
    )


@cache
def percent_value() -> re.Pattern[str]:
    # Not a threshold ("≥ 90% of baseline") nor a concentration ("2% CHX", "0.2% chlorhexidine gel").
    # Nor a threshold written after it ("90% or greater", "50% or more").
    return re.compile(
        rf"(?<![\w.+\-<>≤≥])(?<![<>≤≥]\s)(?P<v>{NUM})\s?%"
        r"(?!\s*(?:[A-Z]|w/|v/|(?i:solution|gel|cream)|or\s+(?:greater|more|higher|above|less|lower|below|fewer)\b))"
    )


# A group's value in a versus pair: a mean and its SD, or a count of its total ("20 of 58 versus 10 of 65").
_SD_VALUE = (
    rf"{NUM}(?:\s*(?:±|\+/-)\s*{NUM}|\s+(?:out\s+)?of\s+\d+(?:,\d{{3}})*\b)?{UNIT}(?:,?\s*\(?SD\s*=?\s*{NUM}\)?)?"
)


_VERSUS = r"\s*(?:,\s*)?(?:vs\.?|versus|v\.|compared\s+(?:with|to))\s*"
# A group's name between "vs" and its value: "adenocarcinoma 65% vs squamous cell carcinoma 51%".
_GROUP_NAME = r"(?:(?!(?:p|P|and|or|in|with|was|were|is|are|of|at|to)\b)[A-Za-z][\w-]*\s+){0,3}"


@cache
def versus_pair() -> re.Pattern[str]:
    """ "2.3 versus 4.2 months", "79 % vs 59 %", "12.1 vs. 10.3", "65% vs squamous cell carcinoma 51%", "20 of 58
    versus 10 of 65"; not from a count's total ("33 of 73 vs. 35.1%": the total is no group's value) nor from a
    count after its percentage ("45.2%, 33 of 73 vs. 35.1%, 27 of 77" is two counts)."""
    return re.compile(
        rf"(?<![\w.±+\-/])(?<!±\s)(?<!SD\s)(?<!\bof\s)(?<!%,\s)(?P<a>{_SD_VALUE}){_VERSUS}(?P<name>{_GROUP_NAME})(?P<b>{_SD_VALUE})"
        r"(?!\s*[/=])"
    )


# The group a value is named for, written after it: "41% in the M group".
_NAMED_AFTER = r"\s+(?:in|for|with|among)\s+[^.;,()\d]{1,40}?"


@cache
def versus_next() -> re.Pattern[str]:
    """One more group after a pair: "12.9 vs. 14.7 vs. 15.8 vs. 16.9", "100% versus 62.5% and 75%", "33 vs. 41% in
    the M group and 45% in the M + L group" (the group named after the value before it)."""
    return re.compile(rf"(?P<named>{_NAMED_AFTER})?(?:{_VERSUS}|\s*,\s*(?:and\s+)?|\s+and\s+)(?P<c>{_SD_VALUE})")


@cache
def paired_values() -> re.Pattern[str]:
    """Two groups' values named in words: "35 mm in the Lozenge group and 51 mm in the Control group", "18 deaths
    were reported in the A group and 17 in the B group", "752 and 707 events, respectively"."""
    # "0.047 per child-month at risk in the A group and 0.044 per child-month at risk in the B group": a rate.
    value = rf"{NUM}{UNIT}(?:\s+per\s+(?:\d[\d,]*\s+)?[\w-]+(?:\s+at\s+risk)?)?"
    return re.compile(
        rf"(?<![\w.±+\-])(?P<a>{value})(?:\s*\([^()]{{1,40}}\))?(?:\s+(?:were|was|had)?\s*[a-z]+){{0,2}}?"
        rf"\s+(?:in|for|with|among|using)\s+[^.;()\d]{{1,60}}?,?\s+"
        rf"(?:and|versus|vs\.?|compared\s+(?:with|to)|whereas|while)\s+(?P<b>{value})\s+(?:in|for|with|among|using)\b"
        rf"|(?<![\w.±+\-])(?P<a2>{NUM})\s+and\s+(?P<b2>{value})(?:\s+[a-z]+){{0,2}},?\s+respectively"
    )


@cache
def percent_change() -> re.Pattern[str]:
    """ "26% fewer fractures", "a reduction of 26%", "reduced by 12.5%", "reduced tissue factor mRNA by 48%"."""
    words = (
        r"(?:more|fewer|less|lower|higher|greater|reduction|decrease|increase|improvement|rise|decline|drop"
        r"|reduced|increased|decreased)"
    )
    verbs = r"(?:reduc|decreas|increas|improv|declin|lower|rais|drop|fell|rose|cut|halv|shorten)\w*"
    # "by more than 40%", "by an estimated 21%": a hedge between "by" and the number.
    hedge = (
        r"(?:(?:more|less|fewer)\s+than|almost|nearly|approximately|about|around|roughly|over|up\s+to|at\s+least"
        r"|an?\s+(?:estimated|average|mean))\s+"
    )
    # Words or a bracket between the verb and "by": "reduced the occurrence of the primary outcome (death or
    # stroke) by 21%".
    between = r"(?:(?:[\w-]+|\([^()]{1,80}\))\s+){1,9}?"
    return re.compile(
        rf"(?:(?<![\w.+\-])(?P<v>{NUM})\s?%\s+(?:relative\s+)?(?i:(?P<word>{words}))\b"
        rf"|\b(?i:(?P<verb>{verbs}))\s+(?:of|by|{between}by)\s+(?i:{hedge})?(?P<v2>{NUM})\s?%(?!\s*(?:to|-)\s*\d))"
        rf"(?:\s*[,;(\[]?\s*{ci_label()}\s*[\]),]?\s*[:=,]?\s*{interval()})?"
    )


@cache
def within_group_words() -> re.Pattern[str]:
    return re.compile(
        r"\bbaseline\b|\bfrom\s+(?:pre|the\s+start|admission|week\s*0|day\s*0)|\bbefore\s+and\s+after\b"
        r"|\bpre-?\s*(?:to|and)\s*post|\bwithin[- ](?:group|arm)|\bpre-?(?:op|treatment|intervention)\w*\s+to\b",
        re.IGNORECASE,
    )


@cache
def between_group_words() -> re.Pattern[str]:
    return re.compile(
        r"\bbetween\b|\bvs\.?\b|\bversus\b|\bcompared\s+(?:with|to)\s+(?!baseline|pre)"
        r"|\bthan\b|\bgroups\b",
        re.IGNORECASE,
    )


@cache
def look_alikes() -> re.Pattern[str]:
    """Where a text defines an abbreviation as something else: heart rate (HR), respiratory rate (RR),
    continuous infusion (CI), normal saline (NS)."""
    return re.compile(
        r"(?i:heart\s+rate)\s*\(HR\)|(?i:respiratory\s+rate)\s*\(RR\)|(?i:continuous\s+infusion)\s*\(CI\)"
        r"|(?i:normal\s+saline)\s*\(NS\)|\bHR\b[^.;]{0,30}(?i:beats|bpm|/\s*min)|\bRR\b[^.;]{0,30}(?i:breaths|/\s*min)"
    )


@cache
def sentence_ends() -> re.Pattern[str]:
    """A sentence ends at ". " before a capital, or at a line break; "p = .03" and "vs." are not ends."""
    return re.compile(r"(?<![vV]s)(?<!\b[a-z])\.\s+(?=[A-Z(\[])|\n+")
