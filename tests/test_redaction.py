"""No secret in any output: a model server that echoes the request (``Authorization: Bearer KEY``) in its
error body, with the key placed so that every cut of the message falls inside it, leaves no fragment of
four characters or more of any configured secret in status.json, events.jsonl (the SSE stream),
run.json, report.md or stderr; and every log record, whatever logger it comes from, is redacted."""

from __future__ import annotations

import base64
import io
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from deepcritical.agents.messages import MAX_MESSAGE_CHARS, describe_model_error
from deepcritical.agents.models import AgentModels
from deepcritical.agents.output import NATIVE, PROMPTED, OutputChoice
from deepcritical.config import Settings, load_settings
from deepcritical.events import RunWarning
from deepcritical.logs import configure_logging, redact_logs
from deepcritical.redaction import MIN_SECRET_CHARS, PROVIDER_SETTINGS, Redactor, is_secret_variable
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.request import RunRequest
from deepcritical.run.setup import assemble
from deepcritical.service.manager import RunManager
from helpers.research_fakes import FakeEngine, FakeHandler, FakeStore

# Random-looking values: no fragment of four characters of them occurs in ordinary output.
SECRETS = {
    "GOOGLE_API_KEY": "AIzaQx7Vb2Kp9Wm4Zr8Tj3",
    "OPENAI_API_KEY": "sk-qzvx-OPq8Zx2Vw7Jk4Rm9",  # no English word inside ("probe" would match "probabilities")
    "ANTHROPIC_API_KEY": "ak-ZQ4vx9Lp2Wn7Bt5Kc",
    "NCBI_API_KEY": "f3Qz8Wx2Lk9Vb7Np4Rt",
    "YOU_API_KEY": "yk-Gh5Zq2Xw8Pm3Lv",
    "DEEPCRITICAL_API_TOKEN": "tkZq9Xv4Wm2Pj7Lb5Rh8",
    "REDIS_URL": "redis://user:Pw9Zq4Xv7Lm2@127.0.0.1:6379/0",
}
SEARXNG_PASSWORD = "Sx7Qz4Vw9Kp2"
# What httpx sends for ``https://admin:PASSWORD@host``: ``Authorization: Basic base64(admin:PASSWORD)``.
SEARXNG_BASIC = base64.b64encode(f"admin:{SEARXNG_PASSWORD}".encode()).decode()
# The values that must never show, whole or in part (the Redis URL's secret is the URL and its password).
VALUES = [value for name, value in SECRETS.items() if name != "REDIS_URL"] + [
    "Pw9Zq4Xv7Lm2",
    SEARXNG_PASSWORD,
    SEARXNG_BASIC,
]


def leaked(text: str) -> list[str]:
    """Every fragment of at least MIN_SECRET_CHARS characters of a secret that occurs in ``text``."""
    found = []
    for value in VALUES:
        for start in range(len(value) - MIN_SECRET_CHARS + 1):
            fragment = value[start : start + MIN_SECRET_CHARS]
            if fragment in text:
                found.append(fragment)
    return found


def secret_settings(home: Path | None = None, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        **SECRETS,
        "SEARXNG_BASE_URL": f"https://admin:{SEARXNG_PASSWORD}@searx.example.org",
        **extra,
    }
    if home is not None:
        values["DEEPCRITICAL_HOME"] = str(home)
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def echoing_body(secret: str, cut: int, offset: int, prefix: str = "") -> dict[str, Any]:
    """An OpenAI-style error body that echoes the request's headers, with ``secret`` placed so that a cut
    of the message at ``cut`` characters falls ``offset`` characters into it."""
    lead = f"{prefix}invalid request; headers: {{'authorization': 'Bearer "
    pad = max(cut - len(lead) - offset, 0)
    message = lead[: len(prefix)] + "x" * pad + lead[len(prefix) :] + secret + "', 'x-trace': 'abc'} " + "y" * 300
    return {"error": {"message": message, "type": "invalid_request_error"}}


CUTS = (160, MAX_MESSAGE_CHARS, 120, 80)


@pytest.mark.parametrize("secret", VALUES)
def test_every_cut_of_every_secret_in_a_model_error_is_blanked(secret: str) -> None:
    redact = Redactor.for_settings(secret_settings())
    for cut in CUTS:
        for offset in range(-2, len(secret) + 30):
            error = ModelHTTPError(400, "local", echoing_body(secret, cut, offset))
            lines = [describe_model_error(error, redact)]
            choice = OutputChoice((NATIVE, PROMPTED))
            refused = ModelHTTPError(400, "local", echoing_body(secret, cut, offset, prefix="response_format: "))
            assert choice.fall_back(refused, redact=redact) is not None
            lines += choice.refusals
            for line in lines:
                assert not leaked(line), (cut, offset, line)


@pytest.mark.parametrize("secret", VALUES)
def test_a_fragment_left_by_a_cut_elsewhere_is_blanked_where_events_are_serialised(secret: str) -> None:
    redact = Redactor.for_settings(secret_settings())
    for keep in range(MIN_SECRET_CHARS, len(secret)):
        for cut_text in (f"Bearer {secret[:keep]}…", f"'Bearer {secret[:keep]}'", f"…{secret[-keep:]} rest"):
            event = redact.model(RunWarning(message=cut_text))
            assert not leaked(event.model_dump_json()), cut_text


def forms(secret: str) -> dict[str, str]:
    """Every way a secret reaches a message: whole, percent-encoded, split by each kind of break (a server
    wrapping its message, a wrap folded to a space) at every position, and masked as providers echo keys."""
    found = {"raw": secret, "percent": quote(secret, safe="")}
    for at in range(1, len(secret)):
        for name, gap in (("newline", "\n"), ("space", " "), ("indent", "\r\n    ")):
            found[f"{name}@{at}"] = secret[:at] + gap + secret[at:]
    for mask in ("…", "...", "*" * 24):
        found[f"masked{mask[:1]}"] = secret[:8] + mask + secret[-4:]
    return found


@pytest.mark.parametrize("secret", VALUES)
def test_every_form_of_every_secret_is_blanked(secret: str) -> None:
    """Through the model-error line (which folds whitespace and cuts) and the serialisation pass."""
    redact = Redactor.for_settings(secret_settings())
    for name, form in forms(secret).items():
        if name == "percent" and form == secret:
            continue
        wrapped = f"Incorrect API key provided: {form}. You can find your API key at https://platform.example"
        line = describe_model_error(ModelHTTPError(401, "local", {"error": {"message": wrapped}}), redact)
        event = redact.model(RunWarning(message=f"headers: {{'authorization': 'Basic {form}'}}\n{wrapped}"))
        for text in (line, event.model_dump_json(), redact(wrapped)):
            assert not leaked(text), (name, text)


def test_a_message_wrapped_at_64_characters_keeps_no_part_of_a_key() -> None:
    """The probe's server: an error message wrapped at 64 characters, the key across the break."""
    redact = Redactor.for_settings(secret_settings())
    for secret in VALUES:
        for lead in range(40, 64):
            message = "x" * lead + " key " + secret + " was refused by the upstream gateway"
            wrapped = "\n".join(message[i : i + 64] for i in range(0, len(message), 64))
            error = ModelHTTPError(401, "local", {"error": {"message": wrapped}})
            assert not leaked(describe_model_error(error, redact)), (secret, lead)
            assert not leaked(redact(" ".join(wrapped.split()))), (secret, lead)


_PASSWORD_CHARS = st.characters(min_codepoint=33, max_codepoint=0x17F, blacklist_categories=("Cc", "Zs"))


@settings(max_examples=150, deadline=None)
@given(
    user=st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8),
    password=st.text(_PASSWORD_CHARS, min_size=8, max_size=24),
    form=st.sampled_from(["raw", "percent", "basic", "basic-unpadded", "masked"]),
    split=st.integers(min_value=0, max_value=40),
    gap=st.sampled_from(["", "\n", " ", "\n  "]),
)
def test_a_url_password_in_any_form_leaves_no_fragment_of_eight_characters(
    user: str, password: str, form: str, split: int, gap: str
) -> None:
    """Any password in a configured URL (the SearXNG or OpenAI base URL), in the form the wire or an echo
    gives it, split anywhere by a break: no fragment of 8 characters of it or of its Basic token remains."""
    url = f"https://{user}:{quote(password, safe='')}@upstream.example.org/v1"
    redact = Redactor.for_settings(Settings(_env_file=None, SEARXNG_BASE_URL=url, OPENAI_BASE_URL=url))  # type: ignore[call-arg]
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    shown = {
        "raw": password,
        "percent": quote(password, safe=""),
        "basic": token,
        "basic-unpadded": token.rstrip("="),
        "masked": token[:8] + "…" + token[-4:],
    }[form]
    at = min(split, len(shown) - 1)
    before, after = "upstream said: authorization: Basic ", " (request id 7)"
    text = f"{before}{shown[:at]}{gap}{shown[at:]}{after}"
    redacted = redact(text)
    for value in (password, quote(password, safe=""), token):
        fragments = {value[i : i + 8] for i in range(len(value) - 7)}
        # A fragment the message's own words hold ("uthoriza" of "authorization") is not the secret's.
        assert not [f for f in fragments if f in redacted and f not in f"{before}{after}"], (text, redacted)


def test_ordinary_text_is_left_alone() -> None:
    redact = Redactor([SecretStr("sk-probe-OPq8Zx2Vw7Jk4Rm9")])
    text = "A probe of sk-style keys… and more"
    assert redact(text) == text


def echoing(status: int, body: dict[str, Any]) -> FunctionModel:
    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(status, "local", body)

    return FunctionModel(fail)


def leaky_models(body: dict[str, Any]) -> AgentModels:
    return AgentModels(brain=echoing(400, body), judge=echoing(400, body), report=echoing(400, body), name="local")


@pytest.mark.parametrize("secret", VALUES)
@pytest.mark.parametrize("offset", [2, 9])
async def test_an_echoed_key_cut_anywhere_reaches_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], secret: str, offset: int
) -> None:
    """Through the real run manager (status.json, events.jsonl, which the SSE stream replays), the run's
    files (run.json, report.md) and the log on stderr."""
    settings = secret_settings(tmp_path, DEMO_MODE="true", DEEPCRITICAL_MAX_ITERATIONS="1")
    body = echoing_body(secret, 160, offset)

    def source(run_settings: Settings, client: httpx2.AsyncClient) -> Orchestrator:
        return Orchestrator(
            assemble(
                run_settings,
                client,
                models=leaky_models(body),
                store=FakeStore(),
                handler=FakeHandler(answer=lambda _query: []),  # no evidence: the run fails, naming the model
                research_engine=FakeEngine(),
            )
        )

    configure_logging(verbose=True)
    redact_logs(Redactor.for_settings(settings))
    try:
        async with RunManager(settings, client_factory=lambda _s: httpx2.AsyncClient(), run_source=source) as runs:
            info = runs.create(RunRequest(question="Can metformin be repurposed for Alzheimer's disease?"))
            ended = await runs.wait(info.run_id)
    finally:
        redact_logs(Redactor(()))
        structlog.reset_defaults()
    folder = tmp_path / "runs" / info.run_id
    outputs = {name: (folder / name).read_text() for name in ("status.json", "events.jsonl", "run.json", "report.md")}
    outputs["stderr"] = capsys.readouterr().err
    assert ended.error
    assert "Bearer *" in outputs["run.json"]  # the echo was there to leak, and was blanked
    assert "stage_failed" in outputs["stderr"]  # the log on stderr carried it too
    for name, text in outputs.items():
        assert not leaked(text), (name, leaked(text))


def test_every_log_record_is_redacted_whatever_its_logger() -> None:
    """httpx2 logs each request's whole URL (``api_key=`` included) at INFO, other loggers at DEBUG."""
    settings = secret_settings()
    stream = io.StringIO()
    configure_logging(verbose=True)
    redact_logs(Redactor.for_settings(settings))
    root = logging.getLogger()
    saved = [(handler, getattr(handler, "stream", None)) for handler in root.handlers]
    try:
        for handler in root.handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(stream)
                handler.setLevel(logging.DEBUG)
        library = logging.getLogger("httpx2")
        library.setLevel(logging.DEBUG)
        key = SECRETS["NCBI_API_KEY"]
        library.info(
            'HTTP Request: %s %s "%s"', "GET", f"https://eutils.example/esearch.fcgi?db=pubmed&api_key={key}", "200"
        )
        logging.getLogger("some.library").debug("connecting to https://admin:%s@searx.example.org", SEARXNG_PASSWORD)
        try:
            raise RuntimeError(f"boom with {SECRETS['OPENAI_API_KEY']}")
        except RuntimeError:
            logging.getLogger("another").exception("failed")
    finally:
        redact_logs(Redactor(()))
        for handler, original in saved:
            if isinstance(handler, logging.StreamHandler) and original is not None:
                handler.setStream(original)
        structlog.reset_defaults()
    written = stream.getvalue()
    assert "HTTP Request: GET https://eutils.example/esearch.fcgi?db=pubmed&api_key=***" in written
    assert "boom with ***" in written
    assert not leaked(written)


def test_structlog_events_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(verbose=True)
    redact_logs(Redactor.for_settings(secret_settings()))
    try:
        structlog.get_logger("test").warning("stage_failed", error=f"Bearer {SECRETS['GOOGLE_API_KEY']}")
    finally:
        redact_logs(Redactor(()))
        structlog.reset_defaults()
    err = capsys.readouterr().err
    assert "Bearer ***" in err
    assert not leaked(err)


def test_load_settings_secrets_are_all_known_to_the_redactor() -> None:
    """A secret added to the settings later is redacted too: every SecretStr and URL password is found."""
    redact = Redactor.for_settings(load_settings(demo_mode=False, openai_api_key="sk-Zq8Xv4Wm2Pj7Lb5"))
    assert redact("key sk-Zq8Xv4Wm2Pj7Lb5 here") == "key *** here"


def provider_variables() -> set[str]:
    """Every environment variable pydantic-ai's providers read by name (``os.getenv("X")``,
    ``os.environ.get("X")``, ``os.environ["X"]``), read from each provider module's source."""
    import ast
    import pkgutil

    import pydantic_ai.providers as providers

    names: set[str] = set()
    for module in pkgutil.iter_modules(providers.__path__):
        source = Path(providers.__path__[0], f"{module.name}.py")
        if not source.is_file():
            continue
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            called = isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.getenv", "os.environ.get", "getenv")
            indexed = isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ"
            if called and node.args and isinstance(node.args[0], ast.Constant):  # type: ignore[union-attr]
                names.add(str(node.args[0].value))  # type: ignore[union-attr]
            if indexed and isinstance(node.slice, ast.Constant):  # type: ignore[union-attr]
                names.add(str(node.slice.value))  # type: ignore[union-attr]
    return names


def is_url_variable(name: str) -> bool:
    return any(part in name for part in ("URL", "ENDPOINT", "API_BASE"))


PROVIDER_VARIABLES = sorted(provider_variables())


def test_every_variable_a_provider_reads_is_known_to_the_redactor() -> None:
    """A variable pydantic-ai starts reading in a later version fails here until it is classified: a secret by
    its name, a URL (its credentials taken), or a setting listed in ``PROVIDER_SETTINGS``."""
    assert {"HEROKU_INFERENCE_KEY", "OLLAMA_BASE_URL", "GROQ_API_KEY", "HF_TOKEN"} <= set(PROVIDER_VARIABLES)
    unclassified = [
        name
        for name in PROVIDER_VARIABLES
        if not (is_secret_variable(name) or is_url_variable(name) or name in PROVIDER_SETTINGS)
    ]
    assert not unclassified
    assert not PROVIDER_SETTINGS - set(PROVIDER_VARIABLES) - {"COLUMNS", "XDG_CACHE_HOME", "LOCALAPPDATA"}


def provider_secret(index: int) -> str:
    return f"Kq{index:02d}Zx7Vw4Lp9Tn2"


def test_every_secret_and_base_url_password_a_provider_reads_is_blanked_in_every_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secrets: dict[str, list[str]] = {}
    for index, name in enumerate(PROVIDER_VARIABLES):
        value = provider_secret(index) + "/+"  # a character a query string encodes
        if is_secret_variable(name):
            monkeypatch.setenv(name, value)
            secrets[name] = [value, quote(value, safe="")]
        elif is_url_variable(name):
            monkeypatch.setenv(name, f"https://svc:{quote(value, safe='')}@models.example.org/v1")
            basic = base64.b64encode(f"svc:{value}".encode()).decode()
            secrets[name] = [value, quote(value, safe=""), basic, basic.rstrip("=")]
    assert "HEROKU_INFERENCE_KEY" in secrets
    assert "OLLAMA_BASE_URL" in secrets
    redact = Redactor.for_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    for name, forms in secrets.items():
        for form in forms:
            for text in (f"echo: {form} (x)", f"echo: {form[:7]}\n{form[7:]} (x)", f"echo: {form[:9]}…"):
                redacted = redact(text)
                fragments = {form[i : i + MIN_SECRET_CHARS] for i in range(len(form) - MIN_SECRET_CHARS + 1)}
                assert not [f for f in fragments if f in redacted], (name, text, redacted)
    assert redact("region us-east-1, version 2024-10-21") == "region us-east-1, version 2024-10-21"


@pytest.mark.parametrize("variable", ["HEROKU_INFERENCE_KEY", "OLLAMA_BASE_URL"])
async def test_a_provider_secret_outside_the_settings_reaches_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """The probe's two: ``heroku:`` reads HEROKU_INFERENCE_KEY, and Ollama's base URL carries a password that
    travels as Basic auth; a model server echoing either reaches none of the five outputs."""
    secret = "Hk7Qz2Vx9Wm4Lp8Rt"
    if variable == "OLLAMA_BASE_URL":
        monkeypatch.setenv(variable, f"http://ollama:{secret}@10.0.0.5:11434/v1")
        echoed = base64.b64encode(f"ollama:{secret}".encode()).decode()
    else:
        monkeypatch.setenv(variable, secret)
        echoed = secret
    settings = Settings(
        _env_file=None, DEEPCRITICAL_HOME=str(tmp_path), DEMO_MODE="true", DEEPCRITICAL_MAX_ITERATIONS="1"
    )  # type: ignore[call-arg]
    body = echoing_body(echoed, 160, 5)

    def source(run_settings: Settings, client: httpx2.AsyncClient) -> Orchestrator:
        return Orchestrator(
            assemble(
                run_settings,
                client,
                models=leaky_models(body),
                store=FakeStore(),
                handler=FakeHandler(answer=lambda _query: []),
                research_engine=FakeEngine(),
            )
        )

    configure_logging(verbose=True)
    redact_logs(Redactor.for_settings(settings))
    try:
        async with RunManager(settings, client_factory=lambda _s: httpx2.AsyncClient(), run_source=source) as runs:
            info = runs.create(RunRequest(question="Can metformin be repurposed for Alzheimer's disease?"))
            ended = await runs.wait(info.run_id)
    finally:
        redact_logs(Redactor(()))
        structlog.reset_defaults()
    folder = tmp_path / "runs" / info.run_id
    outputs = {name: (folder / name).read_text() for name in ("status.json", "events.jsonl", "run.json", "report.md")}
    outputs["stderr"] = capsys.readouterr().err
    assert ended.error
    assert "Bearer *" in outputs["run.json"]
    for value in {secret, echoed}:
        fragments = {value[i : i + MIN_SECRET_CHARS] for i in range(len(value) - MIN_SECRET_CHARS + 1)}
        for name, text in outputs.items():
            assert not [f for f in fragments if f in text], (name, value)


def test_a_short_value_of_a_variable_named_like_a_secret_is_not_taken_for_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORT_KEY", "name")
    monkeypatch.setenv("CACHE_KEY", "v1-linux")
    redact = Redactor.for_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert redact("the name of the key") == "the name of the key"
    assert redact("cache v1-linux") == "cache ***"  # eight characters: it may be a key
