"""What the command refuses before Typer parses its arguments: an argument that is not UTF-8 (Python keeps its
undecodable bytes as lone surrogates, which no file or store takes), and a research question that would be
refused. Typer coerces every option with pydantic, about a tenth of a CPU second that a refusal need not pay
(bench/refusal_timing.py; tests/test_startup_imports.py checks what a refusal loads)."""

from __future__ import annotations

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException
from typer.main import get_command

from deepcritical.questions import checked_question
from deepcritical.text import not_utf8, one_line


def refused_arguments(app: typer.Typer, arguments: list[str]) -> str | None:
    """Why the arguments are refused before any command runs, in one line; None when they are not."""
    for position, argument in enumerate(arguments, start=1):
        if problem := not_utf8(argument):
            shown = one_line(argument.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace"))[:80]
            return f"argument {position} ({shown}) {problem}"
    return _refused_question(app, arguments)


def _refused_question(app: typer.Typer, arguments: list[str]) -> str | None:
    """Why ``research``'s question is refused, read from the arguments as typed by the command's own parser
    (no coercion). None when the command is another, asks for its help, has no question or names --resume: the
    command's own checks then run as usual."""
    if not arguments or arguments[0] != "research":
        return None
    group = get_command(app)
    if not isinstance(group, TyperGroup) or (research := group.commands.get("research")) is None:
        return None
    try:
        values, _, _ = research.make_parser(research.context_class(research, info_name="research")).parse_args(
            arguments[1:]
        )
    except TyperException:  # a usage error: Typer says what is wrong, with its own message
        return None
    question = values.get("question")
    if not isinstance(question, str) or values.get("help") or values.get("resume") is not None:
        return None  # asking for help, or --resume with a question: the command says what is wrong
    return checked_question(question)[1]
