"""Which result readers this install has (``Settings.reader``: ``linear`` or ``transformer``), and a check
that the chosen one loads. The run loads its reader once (``ResultReader.load``) and passes it down: every
study of the run is read with it (``appraisal.study_reading.StudyReader``)."""

from __future__ import annotations

from deepcritical.errors import ConfigError
from deepcritical.options import ReaderName
from deepcritical.reading.results import ResultReader


def load_reader(reader: ReaderName, named: str = "DEEPCRITICAL_READER") -> ResultReader:
    """The result reader ``reader`` (its weights are loaded once a process), so that a run that cannot read with
    it fails before it starts, in one line naming the setting (``named``: its flag or variable), not at its first
    study."""
    try:
        return ResultReader.load(reader)
    except OSError as error:  # the transformer's weights or base model are not installed, or unreadable
        raise ConfigError(f"{named} {reader}: {error}") from error


def installed_readers() -> list[ReaderName]:
    """The readers this install can read with, without loading them: the transformer needs its shipped
    weights and the base model's package (the page offers only these)."""
    from deepcritical.reading.transformer_classifier import base_model_dir, bundled_weights

    readers: list[ReaderName] = ["linear"]
    if bundled_weights() is not None and base_model_dir() is not None:
        readers.append("transformer")
    return readers
