"""The report's first section for an open question ("Which drugs ..."): each candidate intervention the
appraisal found (``appraisal.candidates``) with its counted studies by direction."""

from __future__ import annotations

from collections.abc import Mapping

from deepcritical.outputs import Verdict
from deepcritical.report.document import Block, Inline, Table, cites, heading, paragraph, runs


def open_block(verdict: Verdict, numbers: Mapping[str, int]) -> list[Block]:
    """The report's first section for an open question: each candidate with its studies by direction."""
    lines: list[Block] = [heading("Candidate interventions"), paragraph(verdict.rationale)]
    table = Table(header=["Intervention", "Favourable", "Null", "Unfavourable", "Strongest design"], rows=[])
    for candidate in verdict.candidates:
        cells = []
        for ids in (candidate.favourable, candidate.null, candidate.unfavourable):
            marks = [numbers[i] for i in dict.fromkeys(ids) if i in numbers]
            cells.append(runs(f"{len(ids)} ", cites(marks)) if ids else runs("0"))
        level = f", OCEBM level {candidate.strongest_level}" if candidate.strongest_level else ""
        strongest = runs(f"{candidate.strongest_design or 'unknown'}{level}")
        name = runs(candidate.intervention)
        for index, member in enumerate(candidate.members):
            # A class's members, each with its own studies: "Statins (rosuvastatin [5]; atorvastatin [6])".
            marks = [numbers[i] for i in member.ids if i in numbers]
            name += runs(" (" if index == 0 else "; ", member.name, runs(" ", cites(marks)) if marks else "")
        if candidate.members:
            name += runs(")")
        table.rows.append([name, *cells, strongest])
    if verdict.candidates:
        lines.append(table)
    indirect = [
        runs(cites([numbers[i]]), f" ({why})")
        for candidate in verdict.candidates
        for i, why in candidate.indirect.items()
        if i in numbers
    ]
    if indirect:
        said: list[Inline] = runs("Studies of other people than the question's, which answer it only indirectly: ")
        for index, part in enumerate(indirect):
            said += runs("; " if index else "", part)
        lines.append(paragraph(said, "."))
    lines += [
        paragraph(
            "Each study is listed under the intervention its title names (a title that names a mechanism, a "
            "biomarker finding or a harm names none), a drug under its class (by its INN stem, "
            "as rosuvastatin under statins, or where a study lists it so) with its own studies in brackets, and read "
            "for the question's outcome in code (significantly better, no significant difference, or worse); this is "
            "a list to read, not a ranking."
        )
    ]
    return lines
