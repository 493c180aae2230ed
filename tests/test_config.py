"""Settings: defaults, environment parsing, and start-up errors that name the variable."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from deepcritical import source_table
from deepcritical.config import load_settings
from deepcritical.errors import ConfigError
from deepcritical.redaction import Redactor
from deepcritical.source_table import DEMO_SEARXNG_URL

VARIABLES = (
    "DEMO_MODE",
    "DEEPCRITICAL_SOURCES",
    "SEARXNG_BASE_URL",
    "SEARXNG_TIMEOUT",
    "SEARXNG_DEFAULT_CATEGORIES",
    "SEARXNG_DEFAULT_TIME_RANGE",
    "YOU_API_KEY",
    "NCBI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "NCBI_EMAIL",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(str(tmp_path))  # no .env from the developer's checkout


def test_defaults_follow_the_searxng_spec() -> None:
    settings = load_settings()
    assert settings.sources == ["pubmed", "web", "searxng", "you", "clinicaltrials", "europepmc"]
    assert settings.searxng_base_url is None
    assert settings.searxng_timeout == 10.0
    assert settings.searxng_default_categories == ["general"]
    assert settings.searxng_default_language is None
    assert settings.searxng_default_time_range is None
    assert settings.demo_mode is False


def test_comma_separated_lists_and_secrets_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCRITICAL_SOURCES", "pubmed, web,pubmed")
    monkeypatch.setenv("SEARXNG_DEFAULT_CATEGORIES", "science,general")
    monkeypatch.setenv("YOU_API_KEY", "you-secret")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-secret")
    settings = load_settings()
    assert settings.sources == ["pubmed", "web"]
    assert settings.searxng_default_categories == ["science", "general"]
    assert settings.you_api_key is not None
    assert settings.you_api_key.get_secret_value() == "you-secret"
    assert settings.google_api_key is not None
    assert "you-secret" not in repr(settings)
    assert "gemini-secret" not in str(settings.public_dict())
    assert settings.public_dict()["you_api_key"] == "set"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DEEPCRITICAL_SOURCES", "pubmed,scholar"),
        ("SEARXNG_BASE_URL", "searx dot example"),
        ("SEARXNG_TIMEOUT", "-3"),
        ("SEARXNG_DEFAULT_TIME_RANGE", "decade"),
        ("DEMO_MODE", "perhaps"),
    ],
)
def test_invalid_values_fail_naming_the_variable(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


def test_a_key_never_appears_in_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCBI_API_KEY", "ncbi-secret")
    monkeypatch.setenv("SEARXNG_TIMEOUT", "zero")
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert "ncbi-secret" not in str(error.value)


def test_blank_values_mean_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARXNG_BASE_URL", "")
    monkeypatch.setenv("YOU_API_KEY", "  ")
    settings = load_settings()
    assert settings.searxng_base_url is None
    assert settings.you_api_key is None


def test_demo_preset_points_every_source_at_the_stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_MODE", "true")
    monkeypatch.setenv("NCBI_API_KEY", "real-key")
    settings = load_settings()
    assert settings.demo_mode is True
    assert str(settings.searxng_base_url).rstrip("/") == DEMO_SEARXNG_URL
    assert settings.you_api_key is not None
    assert settings.ncbi_api_key is None, "a real key is never sent to a stand-in"


def test_overrides_take_precedence_and_are_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCRITICAL_SOURCES", "web")
    assert load_settings(sources="pubmed").sources == ["pubmed"]
    with pytest.raises(ConfigError, match="DEEPCRITICAL_MAX_ITERATIONS"):
        load_settings(max_iterations=0)


def test_the_run_record_view_carries_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARXNG_BASE_URL", "https://alice:sekritpw@searx.example.org:8443/base")
    monkeypatch.setenv("NCBI_EMAIL", "alice@example.org")
    monkeypatch.setenv("NCBI_API_KEY", "ncbi-secret")
    public = load_settings().public_dict()
    assert public["searxng_base_url"] == "https://searx.example.org:8443/base"
    assert public["ncbi_email"] == "set"
    assert public["ncbi_api_key"] == "set"
    assert "sekritpw" not in str(public)
    assert "alice" not in str(public)


PASSWORD = "Pq7Zx9Lm2Vw4"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SEARXNG_BASE_URL", f"ftp://admin:{PASSWORD}@searx.example.org/"),
        ("DEEPCRITICAL_OPENAI_BASE_URL", f"http://admin:{PASSWORD}@llm.example.org:99999/v1"),
        ("NCBI_EUTILS_URL", f"gopher://admin:{PASSWORD}@eutils.example.org/"),
        ("EUROPEPMC_BASE_URL", f"ftp://admin:{PASSWORD}/x@mirror.example.org/"),  # an unencoded "/" in it
        ("REDIS_URL", f"http://admin:{PASSWORD}@127.0.0.1:6379/0"),
        ("DEEPCRITICAL_QUEUE_URL", f"memcached://admin:{PASSWORD}@127.0.0.1:6379/0"),
    ],
)
def test_a_config_error_never_echoes_a_password_in_a_url(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as raised:
        load_settings()
    message = str(raised.value)
    assert variable in message
    assert "\n" not in message
    assert PASSWORD[:4] not in message
    assert PASSWORD[-4:] not in message
    # Nor in a traceback of it: the validation error, which shows every input whole, is not chained.
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__


@pytest.mark.parametrize("variable", ["DEEPCRITICAL_QUEUE_URL", "REDIS_URL"])
def test_a_non_numeric_redis_port_is_a_one_line_config_error(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, f"redis://:{PASSWORD}@127.0.0.1:63x79/0")
    with pytest.raises(ConfigError, match=rf"^invalid configuration: {variable}: .*port must be a number") as raised:
        load_settings()
    assert PASSWORD[:4] not in str(raised.value)


def test_a_public_api_added_to_the_source_table_reads_its_own_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    # A new JSON source is a row of the table: its base URL and timeout come from ``{NAME}_BASE_URL`` and
    # ``{NAME}_TIMEOUT`` with no field of its own in the settings.
    row = dataclasses.replace(
        source_table.BY_NAME["openalex"], name="crossref", base_url="https://api.crossref.org", timeout=7.0
    )
    monkeypatch.setattr(source_table, "API_SOURCES", (*source_table.API_SOURCES, row))
    assert str(load_settings().search.apis["crossref"].base_url) == "https://api.crossref.org/"
    assert load_settings().search.timeout("crossref") == 7.0
    monkeypatch.setenv("CROSSREF_BASE_URL", "https://crossref.mirror.example/api")
    monkeypatch.setenv("CROSSREF_TIMEOUT", "4.5")
    settings = load_settings()
    assert str(settings.search.apis["crossref"].base_url) == "https://crossref.mirror.example/api"
    assert settings.search.timeout("crossref") == 4.5
    # The demo presets send it back to its public address, where its stand-in answers.
    assert str(settings.demo_sources_preset().endpoints["crossref"].base_url) == "https://api.crossref.org/"
    monkeypatch.setenv("CROSSREF_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="CROSSREF_TIMEOUT: Input should be a valid number"):
        load_settings()


def test_a_blank_endpoint_variable_is_the_public_service_and_the_env_file_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EUROPEPMC_BASE_URL", "")
    (tmp_path / ".env").write_text("CLINICALTRIALS_TIMEOUT=3\nEUROPEPMC_TIMEOUT=9\n")
    monkeypatch.setenv("EUROPEPMC_TIMEOUT", "8")  # the environment wins over the file
    settings = load_settings()
    assert str(settings.endpoints["europepmc"].base_url) == "https://www.ebi.ac.uk/europepmc/webservices/rest"
    assert settings.search.timeout("clinicaltrials") == 3.0
    assert settings.search.timeout("europepmc") == 8.0


def test_a_password_in_an_endpoint_is_neither_recorded_nor_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENALEX_BASE_URL", f"https://admin:{PASSWORD}@oa.mirror.example/")
    settings = load_settings()
    public = settings.public_dict()
    assert public["endpoints"]["openalex"]["base_url"] == "https://oa.mirror.example/"
    assert PASSWORD not in str(public)
    assert PASSWORD not in Redactor.for_settings(settings)(f"GET https://admin:{PASSWORD}@oa.mirror.example/works")
