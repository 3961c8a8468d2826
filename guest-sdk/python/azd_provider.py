"""Helpers for azd provisioning providers written in Python.

A provider is a module that defines ``class Provider`` with one method per function of
the WIT interface ``azd:provisioning/provider@0.1.0`` (``initialize``, ``state``,
``deploy``, ``preview``, ``destroy``, ``ensure_env``, ``parameters``,
``planned_outputs``). componentize-py generates the ``wit_world`` package with the WIT
types; a method that returns ``result<T, error>`` returns ``T`` or raises
``componentize_py_types.Err(error)`` — the helpers below build those errors.

Build a provider into a component (from the repository root)::

    componentize-py -d wit -w provisioning-provider componentize provider \\
        -p examples/python-localfiles -p guest-sdk/python -o build/provider.wasm

``scripts/build-examples.sh`` does that for the examples, with a pinned componentize-py.

Derive the provider class from :class:`AzdProvider` (or decorate it with
:func:`provider_class`) so that an unexpected Python exception becomes a structured error
for azd, with its message, instead of a trap that retires the instance. Note that
componentize-py makes a new provider object for every call: keep what ``initialize``
learns at module level, not on ``self``.

HTTP and access tokens need a world that imports them beside the provider world (see
``guest-sdk/python/README.md``): :func:`http_request` sends a request through
``wasi:http/outgoing-handler`` (only to the origins ``[policy.http] allow`` grants) and
:func:`access_token` asks ``azd:credentials`` for a token for a granted scope.

The world (``azd:provisioning@0.2.0``) adds azd's services: :func:`env_get` and friends
read and set the azd environment's values (``[policy.azd] environment = "read"`` or
``"read-write"`` in provider.toml), :func:`confirm`, :func:`ask` and :func:`choose` ask the
user on azd's terminal (``[policy.azd] prompt = true``).
"""

from __future__ import annotations

import functools
import json
import math
import traceback
from typing import Any, Callable, Iterable, Mapping, Sequence

from componentize_py_types import Err
from wit_world.imports import environment as _environment
from wit_world.imports import log as _log
from wit_world.imports import progress as _progress
from wit_world.imports import prompt as _prompt

try:
    # A world that also imports wasi:http names azd's types module by its package, since
    # wasi:http has a `types` interface too.
    from wit_world.imports import azd_provisioning_types as types
except ImportError:
    from wit_world.imports import types

# Outbound HTTP and access tokens, in a world that imports them. Imported here, not on first use:
# componentize-py keeps the modules imported while it builds the component.
try:
    from wit_world.imports import outgoing_handler as _outgoing_handler
    from wit_world.imports import wasi_http_types as _http
except ImportError:
    _outgoing_handler = _http = None
try:
    from wit_world.imports import credentials as _credentials
except ImportError:
    _credentials = None

__all__ = [
    "AzdProvider",
    "report",
    "env_name",
    "env_get",
    "env_values",
    "env_set",
    "interactive",
    "confirm",
    "ask",
    "choose",
    "log_debug",
    "log_info",
    "log_warn",
    "log_error",
    "local_error",
    "service_error",
    "invalid_config",
    "parse_config",
    "output",
    "outputs",
    "change",
    "parameter",
    "planned_outputs",
    "provider_class",
    "HttpError",
    "http_request",
    "access_token",
]

OUTPUT_TYPES = ("string", "number", "bool", "object", "array")
CHANGE_TYPES = ("Create", "Delete", "Deploy", "Ignore", "Modify", "NoChange", "Unsupported")


def report(message: str) -> None:
    """Shows ``message`` on azd's spinner (only during deploy, preview and destroy)."""
    _progress.report(str(message))


def log_debug(message: str) -> None:
    """Writes a debug line to the host's log (stderr with ``azd --debug``). Never log secrets."""
    _log.write(_log.Level.DEBUG, str(message))


def log_info(message: str) -> None:
    """Writes an info line to the host's log."""
    _log.write(_log.Level.INFO, str(message))


def log_warn(message: str) -> None:
    """Writes a warning line to the host's log."""
    _log.write(_log.Level.WARN, str(message))


def log_error(message: str) -> None:
    """Writes an error line to the host's log."""
    _log.write(_log.Level.ERROR, str(message))


def _links(links: Iterable[tuple[str, str]]) -> list[types.ErrorLink]:
    return [types.ErrorLink(url=url, title=title) for url, title in links]


def local_error(
    message: str,
    code: str,
    category: str = "local",
    suggestion: str = "",
    links: Iterable[tuple[str, str]] = (),
) -> Err[types.Error]:
    """An error with a local cause, ready to ``raise``.

    ``code`` is lower snake_case; ``category`` one of validation, auth, dependency,
    compatibility, user, internal, local. ``links`` are ``(url, title)`` pairs.
    """
    return Err(
        types.Error(
            message=message,
            origin=types.ErrorOrigin.LOCAL,
            suggestion=suggestion,
            links=_links(links),
            detail=types.ErrorDetail_Local(types.LocalError(code=code, category=category)),
        )
    )


def service_error(
    message: str,
    error_code: str,
    status_code: int,
    service_name: str,
    suggestion: str = "",
    links: Iterable[tuple[str, str]] = (),
) -> Err[types.Error]:
    """An error a remote service reported, ready to ``raise``."""
    return Err(
        types.Error(
            message=message,
            origin=types.ErrorOrigin.SERVICE,
            suggestion=suggestion,
            links=_links(links),
            detail=types.ErrorDetail_Service(
                types.ServiceError(error_code=error_code, status_code=status_code, service_name=service_name)
            ),
        )
    )


def invalid_config(message: str, suggestion: str) -> Err[types.Error]:
    """The standard error for a wrong ``infra.config``: code ``invalid_config``, category ``validation``."""
    return local_error(message, code="invalid_config", category="validation", suggestion=suggestion)


def parse_config(options: types.ProvisioningOptions, required: Sequence[str] = ()) -> dict[str, Any]:
    """Parses ``options.config`` (JSON object text) and checks that each ``required`` key is present.

    Raises ``invalid_config`` when the text is not a JSON object or a key is missing.
    """
    text = options.config or "{}"
    try:
        config = json.loads(text)
    except ValueError as e:
        raise invalid_config(
            f"the provider config is not valid JSON: {e}", "Check the `infra.config` section of azure.yaml."
        ) from None
    if not isinstance(config, dict):
        raise invalid_config("the provider config must be an object", "Write `infra.config` in azure.yaml as a mapping.")
    for key in required:
        if key not in config:
            raise invalid_config(
                f"the provider config needs the key `{key}`", f"Add `{key}:` under `infra.config` in azure.yaml."
            )
    return config


def output(value: Any) -> types.OutputParameter:
    """One output with the type azd expects, inferred from the Python value.

    str → ``string``, bool → ``bool``, int/float → ``number``, list/tuple → ``array``,
    dict → ``object`` (array and object values are compact JSON text).
    """
    if isinstance(value, str):
        return types.OutputParameter(type="string", value=value)
    if isinstance(value, bool):
        return types.OutputParameter(type="bool", value="true" if value else "false")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("an output number must be finite")
        return types.OutputParameter(type="number", value=json.dumps(value))
    if isinstance(value, (list, tuple)):
        return types.OutputParameter(type="array", value=json.dumps(list(value), sort_keys=True, separators=(",", ":")))
    if isinstance(value, dict):
        return types.OutputParameter(type="object", value=json.dumps(value, sort_keys=True, separators=(",", ":")))
    raise TypeError(f"an output cannot be a {type(value).__name__}")


def outputs(values: Mapping[str, Any]) -> list[tuple[str, types.OutputParameter]]:
    """``{name: value}`` as the sorted ``(name, OutputParameter)`` list WIT expects."""
    return [(name, output(values[name])) for name in sorted(values)]


def change(change_type: str, name: str, resource_type: str, resource_id: str = "") -> types.PreviewChange:
    """One entry of a preview; ``change_type`` is one of ``CHANGE_TYPES``."""
    if change_type not in CHANGE_TYPES:
        raise ValueError(f"unknown change type {change_type!r}")
    return types.PreviewChange(
        change_type=change_type, resource_id=resource_id or name, resource_type=resource_type, name=name
    )


def parameter(
    name: str,
    value: str = "",
    secret: bool = False,
    env_var_mapping: Sequence[str] = (),
    local_prompt: bool = False,
) -> types.Parameter:
    """A parameter description for ``parameters()``."""
    return types.Parameter(
        name=name,
        secret=secret,
        value=value,
        env_var_mapping=list(env_var_mapping),
        local_prompt=local_prompt,
        using_env_var_mapping=bool(env_var_mapping),
    )


def planned_outputs(names: Iterable[str]) -> list[types.PlannedOutput]:
    """A ``planned_outputs()`` answer from output names."""
    return [types.PlannedOutput(name=name) for name in names]


_METHODS = ("initialize", "state", "deploy", "preview", "destroy", "ensure_env", "parameters", "planned_outputs")


def _guard(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Err:
            raise
        except OSError as e:
            log_error(f"{method.__name__}: {traceback.format_exc()}")
            raise local_error(
                f"{method.__name__} failed: {e.strerror or e} ({e.filename or 'no file'})",
                code="io_error",
                category="local",
                suggestion="Check that the provider's manifest grants access to this path.",
            ) from None
        except Exception as e:  # noqa: BLE001 - anything else is a bug in the provider
            log_error(f"{method.__name__}: {traceback.format_exc()}")
            raise local_error(
                f"{method.__name__} failed: {type(e).__name__}: {e}", code="provider_bug", category="internal"
            ) from None

    return call


class AzdProvider:
    """Base class of a provider: every provider method its subclass defines is guarded as
    :func:`provider_class` guards them. Write ``class Provider(azd.AzdProvider, exports.Provider)``.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        provider_class(cls)


def env_name() -> str:
    """The name of the azd environment the command runs in."""
    return _environment.name()


def env_get(key: str) -> str | None:
    """One value of the azd environment; ``None`` when it is not set."""
    return _environment.get_value(key)


def env_values() -> list[tuple[str, str]]:
    """Every value of the azd environment, sorted by key."""
    return list(_environment.get_values())


def env_set(key: str, value: str) -> None:
    """Sets a value; azd saves it to the environment's ``.env`` (needs ``"read-write"``)."""
    _environment.set_value(key, value)


def interactive() -> bool:
    """Whether the user can be asked (false under ``azd --no-prompt`` or without the grant)."""
    return _prompt.interactive()


def confirm(message: str, default: bool | None = None, help: str = "") -> bool:
    """A yes/no question on azd's terminal; ``default`` is the answer under ``--no-prompt``
    (where a question without one fails)."""
    return _prompt.confirm(_prompt.ConfirmOptions(message=message, default_value=default, help_message=help))


def ask(message: str, default: str | None = None, secret: bool = False, help: str = "") -> str:
    """A question answered with text (a ``secret`` answer is not echoed nor logged)."""
    return _prompt.text(
        _prompt.TextOptions(
            message=message,
            default_value=default,
            help_message=help,
            placeholder="",
            secret=secret,
            required=False,
        )
    )


def choose(message: str, choices: Sequence[tuple[str, str]], default: int | None = None, help: str = "") -> int:
    """Choose one of ``choices`` (``(value, label)`` pairs); returns the chosen index."""
    return _prompt.select(
        _prompt.SelectOptions(
            message=message,
            choices=[_prompt.Choice(value=value, label=label) for value, label in choices],
            default_index=default,
            help_message=help,
        )
    )


def provider_class(cls: type) -> type:
    """Class decorator: turns unexpected exceptions of the provider methods into structured errors.

    ``OSError`` becomes ``io_error`` (category local); any other exception ``provider_bug``
    (category internal). Errors raised on purpose (``Err``) pass through unchanged.
    """
    for name in _METHODS:
        method = cls.__dict__.get(name)
        if callable(method):
            setattr(cls, name, _guard(method))
    return cls


class HttpError(Exception):
    """A request that got no response: ``code`` is the ``wasi:http`` error code in kebab case
    (``http-request-denied``, ``connection-refused``, ``connection-read-timeout``,
    ``tls-certificate-error``, ...), ``message`` what happened."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


def _kebab(error: object) -> str:
    # ErrorCode_HttpRequestDenied -> http-request-denied
    name = type(error).__name__.split("_", 1)[-1]
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out.append("-")
        out.append(ch.lower())
    return "".join(out)


def http_request(
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
) -> tuple[int, list[tuple[str, str]], bytes]:
    """Sends one request and reads the whole response: ``(status, headers, body)``.

    Any status is a response (check it for the service's own errors); a request that got no
    response raises :class:`HttpError`. A request with a body, or whose method is not GET or
    HEAD, carries a ``content-length``. Needs ``wasi:http/outgoing-handler`` in the world.
    """
    if _outgoing_handler is None or _http is None:
        raise HttpError("unavailable", f"{method} {url}: the world does not import wasi:http/outgoing-handler")
    http, outgoing_handler = _http, _outgoing_handler
    shown = url.split("?", 1)[0]  # errors never show the query, which may carry a signature
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        raise HttpError("invalid-url", f"{method} {shown}: not an http(s) URL")
    cut = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
    authority, path = rest[:cut], rest[cut:] or "/"
    if not authority or "@" in authority:
        raise HttpError("invalid-url", f"{method} {shown}: the URL needs a host, and no user name")
    fields = [(k.lower(), v.encode()) for k, v in headers]
    if body or method not in ("GET", "HEAD"):
        if not any(k == "content-length" for k, _ in fields):
            fields.append(("content-length", str(len(body)).encode()))
    methods = {"GET": http.Method_Get(), "HEAD": http.Method_Head(), "POST": http.Method_Post(),
               "PUT": http.Method_Put(), "DELETE": http.Method_Delete(), "PATCH": http.Method_Patch()}
    try:
        request = http.OutgoingRequest(http.Fields.from_list(fields))
        request.set_method(methods.get(method, http.Method_Other(method)))
        request.set_scheme(http.Scheme_Https() if scheme.lower() == "https" else http.Scheme_Http())
        request.set_authority(authority)
        request.set_path_with_query(path)
        outgoing = request.body()
    except Err as e:
        raise HttpError("http-request-invalid", f"{method} {shown}: {e.value}") from None
    try:
        future = outgoing_handler.handle(request, None)
    except Err as e:
        raise HttpError(_kebab(e.value), f"{method} {shown}: {e.value}") from None
    try:
        if body:
            # A child stream is dropped before its body is finished.
            with outgoing.write() as stream:
                for start in range(0, len(body), 4096):
                    stream.blocking_write_and_flush(body[start:start + 4096])
    except Err as e:
        raise HttpError("http-request-body", f"{method} {shown}: writing the body: {e.value}") from None
    try:
        http.OutgoingBody.finish(outgoing, None)
    except Err as e:
        raise HttpError(_kebab(e.value), f"{method} {shown}: {e.value}") from None
    while (result := future.get()) is None:
        future.subscribe().block()
    response = result.value
    if isinstance(response, Err):
        raise HttpError(_kebab(response.value), f"{method} {shown}: {response.value}")
    response = response.value
    status = response.status()
    got = [(k, v.decode(errors="replace")) for k, v in response.headers().entries()]
    chunks = []
    with response, response.consume() as incoming, incoming.stream() as stream:
        while True:
            try:
                chunks.append(stream.blocking_read(65536))
            except Err as e:
                if type(e.value).__name__.endswith("Closed"):
                    break
                failure = getattr(e.value, "value", None)
                detail = failure.to_debug_string() if failure is not None else "the stream failed"
                raise HttpError("http-response-incomplete", f"{method} {shown}: reading the body: {detail}") from None
    return status, got, b"".join(chunks)


def access_token(scope: str) -> tuple[str, int]:
    """A bearer token for ``scope`` and when it expires (Unix seconds), from azd through the host.
    Only the scopes ``[policy.azd] credential_scopes`` grants; otherwise raises an ``auth`` error
    (code ``scope_not_granted``). Needs ``azd:credentials/credentials`` in the world."""
    if _credentials is None:
        raise local_error("the world does not import azd:credentials/credentials", code="unavailable", category="auth")
    try:
        token = _credentials.get_token(scope)
    except Err as e:
        raise local_error(e.value.message, code=e.value.code.replace("-", "_"), category="auth") from None
    return token.token, token.expires_on
