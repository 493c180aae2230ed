"""One request for a run, whatever front end asks: the question and every per-run option. The command line
(``research``, ``batch``), the HTTP API, MCP (stdio and HTTP), a queue worker and the evaluation all build a
``RunRequest``; ``plan`` turns it, once, into what a run is made of: its settings (validated as settings
read from the environment are, presets applied), its id and its folder.

A server takes a request only ``within`` its own limits (the question's length, its iteration limit, the
sources it enables); an option left out (None) takes the settings' value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.models import KNOWN_SOURCES, SourceName
from deepcritical.options import DEFAULT_MODEL, OutputMode, ReaderName
from deepcritical.questions import checked_question
from deepcritical.run.outcome import new_run_id
from deepcritical.text import MAX_QUESTION_CHARS, one_line, utf8_text

REQUEST_FILE = "request.json"
# A client's text: a string (``true`` is not "true") that can be written as UTF-8 (no lone surrogate, which would
# make the run's record unwritable and the run list unreadable).
Utf8Str = Annotated[StrictStr, AfterValidator(utf8_text)]


class RunRequestError(DeepCriticalError):
    """A request for a run that cannot be accepted; ``field`` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def runs_folder(settings: Settings) -> Path:
    """Where runs are kept unless told otherwise: one folder for the command line and the server, so a run
    started from either shows on the page."""
    return settings.home / "runs"


class RunRequest(BaseModel):
    """A research run to start. Options left out (null) take the settings' (the server's) value."""

    # Strict types: ``true`` is not 1 and ``"2"`` is not 2; a client that sends them has a bug to hear about.
    # The bounds of a value (a blank or overlong question once stripped, rounds beyond a server's limit, a
    # source it does not enable) are checked once, by ``within``, so "" and "   " get the same message.
    model_config = ConfigDict(extra="forbid", frozen=True)

    question: Utf8Str = Field(description=f"The research question (not blank, at most {MAX_QUESTION_CHARS} characters)")
    sources: list[Annotated[Utf8Str, Field(max_length=40)]] | None = Field(
        default=None, max_length=len(KNOWN_SOURCES), description="Sources to search (a subset of those enabled)"
    )
    collection: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$")] | None = (
        Field(default=None, description="The document collection the library source searches")
    )
    max_iterations: StrictInt | None = Field(
        default=None, description="Plan-search-judge rounds at most (1 to the server's limit)"
    )
    model: Annotated[Utf8Str, Field(min_length=1, max_length=200)] | None = Field(
        default=None, description=f"A pydantic-ai model name, e.g. {DEFAULT_MODEL}"
    )
    output_mode: OutputMode | None = Field(default=None, description="How the model gives structured answers")
    no_llm: StrictBool = Field(default=False, description="No language model: every stage by its code half")
    recall: StrictBool | None = Field(default=None, description="Recall evidence of earlier runs from the library")
    demo: StrictBool = Field(default=False, description="Synthetic stand-in sources and models (offline)")
    demo_sources: StrictBool = Field(default=False, description="Synthetic stand-in sources, the live model")
    reader: ReaderName | None = Field(
        default=None, description="How each study's result is read: linear (the default) or transformer (slower)"
    )

    def asking(self, question: str) -> RunRequest:
        """The same options for another question (a batch's template request, a watch's next run)."""
        return RunRequest.model_validate(self.model_dump() | {"question": question})

    def overrides(self) -> dict[str, Any]:
        """The settings this request sets, by field name (what it leaves out is not there)."""
        values: dict[str, Any] = {
            "sources": self.sources,
            "library_collection": self.collection,
            "max_iterations": self.max_iterations,
            "model": self.model,
            "output_mode": self.output_mode,
            "no_llm": self.no_llm or None,
            "recall": self.recall,
            "demo_mode": self.demo or None,
            "demo_sources": self.demo_sources or None,
            "reader": self.reader,
        }
        return {name: value for name, value in values.items() if value is not None}

    def settings(self, base: Settings) -> Settings:
        """``base`` with this request's options, validated as settings read from the environment, the preset
        it asks for applied (demo mode, demo sources). A bad value is a ConfigError naming its flag or
        variable."""
        settings = base.with_values(**self.overrides())
        # ``base`` comes with its presets applied (``load_settings``); a request that asks for one applies it.
        return settings.with_presets() if self.demo or self.demo_sources else settings

    def within(self, server: Settings) -> RunRequest:
        """This request as a server with ``server``'s settings runs it: the question as one stripped line,
        the iterations and sources spelled out. A RunRequestError names the field outside its limits."""
        question, problem = checked_question(self.question)
        if problem:
            raise RunRequestError("question", problem)
        limit = server.max_iterations
        iterations = limit if self.max_iterations is None else self.max_iterations
        if not 1 <= iterations <= limit:
            raise RunRequestError("max_iterations", f"must be between 1 and {limit} on this server")
        sources = checked_sources(self.sources, server)
        if self.model is not None and (server.demo_mode or self.demo):
            # The command line says so in a note; a client of the API or MCP would otherwise get a run that is not
            # the one it asked for, with nothing but "demo": true to tell it.
            other = "" if server.demo_mode else ", or ask for demo_sources (the stand-in sources with that model)"
            raise RunRequestError(
                "model",
                f"a demo run uses its deterministic stand-in models, so {one_line(self.model)!r} would not be used: "
                f"leave model out{other}",
            )
        spelled = {"question": question, "max_iterations": iterations, "sources": sources}
        return RunRequest.model_validate(self.model_dump() | spelled)

    def plan(self, base: Settings, *, run_id: str | None = None, folder: Path | None = None) -> RunPlan:
        """What the run is made of: its settings, its id (new unless given) and its folder (by default under
        the shared runs folder)."""
        settings = self.settings(base)
        run_id = run_id or new_run_id()
        # The request as it runs: a demo mode the server or the environment set (DEMO_MODE) is recorded with it,
        # so the run resumed from its folder stays a demo (it asked for a live model, and would have searched live).
        demo = settings.demo_mode
        recorded = self.model_copy(update={"demo": demo, "demo_sources": settings.demo_sources and not demo})
        return RunPlan(recorded, settings, run_id, folder if folder is not None else runs_folder(settings) / run_id)


def checked_sources(sources: list[str] | None, server: Settings) -> list[SourceName]:
    """The sources to search: every enabled one for None, else the named ones if ``server`` enables them."""
    enabled = list(server.sources)
    if sources is None:
        return enabled
    chosen: list[SourceName] = []
    for name in dict.fromkeys(sources):
        known = next((source for source in KNOWN_SOURCES if source == name), None)
        if known is None:
            raise RunRequestError("sources", f"unknown source {name!r}; known: {', '.join(KNOWN_SOURCES)}")
        if known not in enabled:
            raise RunRequestError("sources", f"{name!r} is not enabled on this server; enabled: {', '.join(enabled)}")
        chosen.append(known)
    if not chosen:
        raise RunRequestError("sources", "name at least one source")
    return chosen


@dataclass(frozen=True)
class RunPlan:
    """A request made concrete: the settings the run uses, its id and its folder."""

    request: RunRequest
    settings: Settings
    run_id: str
    folder: Path
