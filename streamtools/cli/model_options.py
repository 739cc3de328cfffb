"""The model options of ``streamtools chat`` and ``streamtools ui``, in one place.

Theory of operation
-------------------
``add_model_options(parser)`` adds the options that say which model to talk
to and how (``--model``, ``--base-url``, ``--provider``, ``--api-key`` or
``--api-key-env``, ``--dialect`` or ``--native``, ``--hybrid``,
``--think-open``, ``--no-stop``, ``--system``, the sampling options
(``--temperature``, ``--top-p``, ``--top-k``, ``--seed``, ``--presence-penalty``,
``--frequency-penalty``),
``--extra-body``, ``--max-turns``, ``--answer-at-max-turns``, ``--timeout``,
``--connect-wait``, ``--tool-timeout``);
``build_model(args)`` makes
the provider they name and ``make_agent(model, args, tools)`` the agent. Both
commands parse and build through here, so a command line that works for one
works for the other, with the same names, defaults, help and errors. So do
their tools: ``--tools MODULE:ATTRIBUTE`` (``add_tools_option``), read by
``load_tools`` (None: the example tools).

Every option's ``argparse`` default is None (or False, or empty), its real
default applied when it is read (``setting``): ``streamtools ui`` serves the
offline replay unless ``--model`` is given, and refuses a live model's option
given without one (``LIVE_ONLY``), which it can tell only if an option not
given is None. The help says each real default.

The key: ``--api-key KEY``; or ``--api-key-env NAME``, the variable that holds
it (which must be set: a key meant but not found was a 401 per message); else
the first of ``key_vars(args)`` that is set: ``KEY_VARS`` for the provider,
the OpenAI-compatible ones by server (OpenRouter's key for openrouter.ai only,
OpenAI's for any other, as the openai SDK sends it), so that neither key goes
to the other's server, and OpenRouter's for its Anthropic-compatible endpoint
(``--provider anthropic --base-url https://openrouter.ai/api``), never
Anthropic's; else none (local servers need none).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from typing import Any
from urllib.parse import urlsplit

from streamtools.cli import at_least, finite_number, http_url, json_object, positive_number
from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted, UsageError
from streamtools.model import Model
from streamtools.providers import AnthropicMessages, HTTPProvider, OllamaChat, OpenAIChat

__all__ = [
    "DEFAULT_URLS", "DIALECTS", "KEY_VARS", "LIVE_ONLY", "SYSTEM", "add_model_options",
    "add_tool_timeout", "add_tools_option",
    "advice", "build_model", "check_model_options", "key_vars", "load_tools", "make_agent",
    "setting",
]

SYSTEM = (
    "You are a helpful, concise assistant. Use the calculator for any arithmetic "
    "and the clock for the current date or time; never guess either."
)
DIALECTS = ("am_xml", "json_action", "hermes", "inline_json", "json_object", "command")
DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://127.0.0.1:11434",
}
KEY_VARS = {
    "openai": ("STREAMTOOLS_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"),
    "anthropic": ("STREAMTOOLS_API_KEY", "ANTHROPIC_API_KEY"),
    "ollama": ("STREAMTOOLS_API_KEY",),
}
# the defaults of the options whose ``argparse`` default is None (see the docstring)
_DEFAULTS: dict[str, Any] = {
    "provider": "openai", "dialect": "am_xml", "max_turns": 8, "timeout": 120.0,
    "extra_body": {}, "tool_timeout": 30.0,
}
# the options of a live model only (``--dialect`` also names a recording's dialect)
LIVE_ONLY = (
    "base_url", "provider", "api_key", "api_key_env", "native", "hybrid", "think_open",
    "no_stop", "system", "temperature", "top_p", "top_k", "seed", "presence_penalty",
    "frequency_penalty", "max_tokens", "extra_body", "max_turns", "answer_at_max_turns",
    "timeout", "connect_wait",
)


def setting(args: argparse.Namespace, name: str) -> Any:
    """The value of option ``name``: as given, else its default."""
    value = getattr(args, name)
    return _DEFAULTS.get(name) if value is None else value


def add_model_options(
    parser: argparse._ActionsContainer,
    *,
    model_required: bool = True,
    dialect_help: str = "how tools are described and called in the text (default am_xml)",
    system_help: str = "system prompt",
    tool_timeout: bool = True,
) -> None:
    """Add the model options to ``parser`` (a parser or an argument group of one);
    ``tool_timeout=False``: all but ``--tool-timeout`` (``add_tool_timeout``)."""
    parser.add_argument(
        "--base-url", type=http_url, default=None, help="API base URL (default per provider)"
    )
    parser.add_argument(
        "--model", required=model_required, default=None,
        help="model name as the server knows it",
    )
    parser.add_argument(
        "--provider",
        choices=sorted(DEFAULT_URLS),
        default=None,
        help="wire format: OpenAI-compatible (default), anthropic, ollama",
    )
    key = parser.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key",
        default=None,
        help="API key (default: STREAMTOOLS_API_KEY, then the provider's usual variable)",
    )
    key.add_argument(
        "--api-key-env",
        default=None,
        metavar="NAME",
        help="the environment variable that holds the API key (instead of --api-key)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dialect", choices=DIALECTS, default=None, help=dialect_help)
    mode.add_argument("--native", action="store_true", help="use the provider's native tool calls")
    parser.add_argument(
        "--hybrid",
        action="store_true",
        help="pick tools natively from summaries, then continue in the dialect",
    )
    parser.add_argument(
        "--think-open",
        action="store_true",
        help="the model's chat template ends the prompt with <think> (DeepSeek-R1, QwQ): "
        "replies begin inside reasoning, up to </think>",
    )
    parser.add_argument("--system", default=None, help=system_help)
    parser.add_argument(
        "--no-stop",
        action="store_true",
        help="the model rejects `stop` (o-series, some gpt-5): cut at the call marker "
        "client-side",
    )
    parser.add_argument(
        "--temperature", type=finite_number, default=None,
        help="sampling temperature (default: the server's)",
    )
    parser.add_argument(
        "--top-p", type=finite_number, default=None,
        help="nucleus sampling: the share of probability to sample from (default: the server's)",
    )
    parser.add_argument(
        "--top-k", type=int, default=None, help="OpenAI itself refuses it; local servers take it"
    )
    parser.add_argument("--seed", type=int, default=None, help="not sent to Anthropic")
    # OpenAI-compatible servers and Ollama (in its options) take both by these names;
    # the Messages API has neither, so AnthropicMessages leaves them out
    parser.add_argument(
        "--presence-penalty", type=finite_number, default=None, metavar="X",
        help="penalise tokens already used at all (OpenAI: -2 to 2); not sent to Anthropic",
    )
    parser.add_argument(
        "--frequency-penalty", type=finite_number, default=None, metavar="X",
        help="penalise tokens by how often they were used (OpenAI: -2 to 2); "
        "not sent to Anthropic",
    )
    parser.add_argument(
        "--max-tokens", type=at_least(1), default=None, metavar="N",
        help="the most tokens one reply may have (default: the provider's)",
    )
    parser.add_argument(
        "--extra-body",
        type=json_object,
        default=None,
        metavar="JSON",
        help="fields added to every request, as a JSON object merged one level deep, "
        """e.g. '{"options": {"num_ctx": 16384}}' for Ollama""",
    )
    parser.add_argument(
        "--max-turns", type=at_least(1), default=None, help="model calls per answer (default 8)"
    )
    parser.add_argument(
        "--answer-at-max-turns",
        action="store_true",
        help="on the last turn --max-turns allows, ask for the answer instead of more calls",
    )
    parser.add_argument(
        "--timeout", type=positive_number, default=None, metavar="SECONDS",
        help="how long the server may take to accept a request and between two reads of its "
        "answer (default 120; not a bound on the whole answer)",
    )
    parser.add_argument(
        "--connect-wait", type=positive_number, default=None, metavar="SECONDS",
        help="wait up to this long for a server that refuses connections until it has "
        "loaded its model (vLLM, SGLang), before its first answer (default: none, a refused "
        "connection fails after the usual retries)",
    )
    if tool_timeout:
        add_tool_timeout(parser)


def add_tool_timeout(parser: argparse._ActionsContainer) -> None:
    """Add ``--tool-timeout`` to ``parser``: on its own where the tools run
    without the model too (``ui``'s offline replay)."""
    parser.add_argument(
        "--tool-timeout", type=positive_number, default=None, metavar="SECONDS",
        help="how long each tool call may run before it fails as timed out (default 30; "
        "a slow MCP tool may need more)",
    )


def check_model_options(args: argparse.Namespace) -> None:
    """A ``UsageError`` for options that cannot go together."""
    if args.native and args.hybrid:
        raise UsageError("--native and --hybrid exclude each other")


def api_key(args: argparse.Namespace) -> str | None:
    """The key the command line asks for (see the module docstring)."""
    if args.api_key:
        return str(args.api_key)
    if args.api_key_env is not None:
        key = os.environ.get(args.api_key_env)
        if not key:
            # named on purpose, so a key was meant: without one every message got a 401
            # (and a key pasted as the flag's value, not a variable's name, was dropped)
            raise UsageError(
                f"--api-key-env {_shown(args.api_key_env)}: no such environment variable "
                "is set (it names the variable that holds the key)"
            )
        return key
    return next((os.environ[v] for v in key_vars(args) if os.environ.get(v)), None)


def key_vars(args: argparse.Namespace) -> tuple[str, ...]:
    """The variables the key is read from, in order (see the module docstring)."""
    provider = setting(args, "provider")
    if provider == "ollama":
        return KEY_VARS[provider]
    host = urlsplit(args.base_url or DEFAULT_URLS[provider]).hostname or ""
    router = host == "openrouter.ai" or host.endswith(".openrouter.ai")
    if provider != "openai":
        # OpenRouter's Anthropic-compatible endpoint (https://openrouter.ai/api)
        # takes OpenRouter's key; Anthropic's is not OpenRouter's to see
        return ("STREAMTOOLS_API_KEY", "OPENROUTER_API_KEY") if router else KEY_VARS[provider]
    skip = "OPENAI_API_KEY" if router else "OPENROUTER_API_KEY"
    return tuple(v for v in KEY_VARS[provider] if v != skip)


def advice(exc: Exception, args: argparse.Namespace) -> str | None:
    """What to do about an exchange that failed with ``exc``, where its cause is
    plain from it and the options (the README's "When something goes wrong"); a
    failure that names no remedy of its own is said with no advice."""
    if isinstance(exc, BudgetExceeded):
        return "the model kept calling tools: --max-turns N allows it more model calls"
    if isinstance(exc, RepairExhausted):
        if args.native:
            return "the model could not write a valid call: try a dialect (--dialect am_xml, …)"
        current = setting(args, "dialect")
        tried = ("am_xml", "hermes", "json_action", "command")
        others = ", ".join(d for d in tried if d != current)
        return (
            f"the model could not write a valid call: try another --dialect ({others}…), "
            "or --native where the server has function calling"
        )
    if not isinstance(exc, ProviderError):
        return None
    provider = setting(args, "provider")
    url = args.base_url or DEFAULT_URLS[provider]
    message = str(exc)
    # no --base-url, so the provider's hosted API: a local model's server was meant?
    local = (
        f"; for a local server, give its --base-url ({url} is --provider {provider}'s default)"
        if args.base_url is None and provider != "ollama"
        else ""
    )
    if exc.status is None and message.startswith(("read timeout", "connect timeout")):
        waited = setting(args, "timeout")
        if message.startswith("connect"):
            return f"no connection within {waited:g} s: check the host of {url}, or --timeout N"
        return (
            f"the server sent nothing for {waited:g} s (--timeout): a model still loading, "
            "or reading a long prompt, may need longer: --timeout SECONDS"
        )
    if exc.status is None and message.startswith("cannot connect"):
        if local:
            return f"cannot reach {url}: check the network{local}"
        # a refusal may be a server still loading its model (vLLM, SGLang open their
        # port only then): waited for only when asked (``connect_wait``)
        loading = (
            " (one still loading its model refuses connections: --connect-wait SECONDS)"
            if "connection refused" in message and args.connect_wait is None
            else ""
        )
        return f"nothing answers at {url}: start the server{loading}, or correct --base-url"
    if exc.status in (401, 403):
        given = "refused the key it was given" if api_key(args) else "wants an API key"
        names = ", ".join(key_vars(args))
        return (
            f"the server {given}: --api-key KEY or --api-key-env NAME "
            f"(else the first of {names} that is set){local}"
        )
    if exc.status == 404:
        if re.search(r"\bmodel\b", message, re.I):
            pull = " (Ollama: ollama pull NAME)" if ":11434" in url else ""
            return f"--model {args.model}: the server may have no model of that name{pull}"
        v1 = url.rstrip("/").endswith("/v1")
        if provider == "openai" and not v1:
            return (
                f"no chat endpoint under {url}: an OpenAI-compatible --base-url ends in /v1 "
                "(for Ollama's own API, --provider ollama and no /v1)"
            )
        if provider != "openai" and v1:
            return f"no {provider} endpoint under {url}: --base-url is the server's root, no /v1"
        return f"no {provider} endpoint under {url}: check --base-url and --provider"
    if exc.status == 400 and re.search(r"\bstop\b", message) and not args.no_stop:
        return "if the model rejects the `stop` parameter: --no-stop"
    return None


def _shown(name: str) -> str:
    """``--api-key-env``'s value for an error message: a name as such names are
    written (``OPENROUTER_API_KEY``), but not what may be a secret pasted there
    by mistake (``sk-…``), which would land in a terminal's scrollback or a CI log."""
    if re.fullmatch(r"[A-Z_][A-Z0-9_]{0,63}", name):
        return name
    return f"<{len(name)} characters, not shown>"


def build_model(args: argparse.Namespace) -> HTTPProvider:
    """The provider the command line asks for."""
    provider = setting(args, "provider")
    common: dict[str, Any] = {
        "base_url": args.base_url or DEFAULT_URLS[provider],
        "api_key": api_key(args),
        "timeout": setting(args, "timeout"),
        "supports_stop": not args.no_stop,
        "extra_body": setting(args, "extra_body"),
        "connect_wait": args.connect_wait or 0.0,
    }
    if provider == "anthropic":
        return AnthropicMessages(args.model, **common)
    if provider == "ollama":
        return OllamaChat(args.model, **common)
    return OpenAIChat(args.model, **common)


def add_tools_option(parser: Any) -> None:
    """``--tools MODULE:ATTRIBUTE`` (``load_tools``), of ``streamtools chat`` and ``ui``."""
    parser.add_argument(
        "--tools",
        default=None,
        metavar="MODULE:ATTRIBUTE",
        help="the tools to offer: a ToolRegistry, a tool or a list of them in a module of the "
        "current directory or an installed one (default: the example tools, calculator and "
        "clock)",
    )


def load_tools(spec: str | None) -> Any:
    """The tools ``--tools module:attribute`` names (``streamtools chat`` and
    ``ui``; None: the example tools, ``calculator`` and ``clock``), as one
    ``ToolRegistry`` made now, so that what is not a tool is said at start, not
    by every request.

    The module is looked up from the current directory too, as uvicorn looks up
    its app (``--app-dir .``): the ``streamtools`` script, unlike ``python -m``,
    does not put it on ``sys.path``, and ``mytools.py`` next to you was not found.
    A module or attribute that is not there is a ``UsageError``, which names the
    registry (or list, or tool) the module has when the attribute is missing or
    wrong (``--tools mytools``: ``try --tools mytools:registry``); a module that
    fails while importing raises as itself (the traceback is the user's to read)."""
    from streamtools.tools import ToolRegistry

    if spec is None:
        from streamtools.cli.demo import DEMO_TOOLS

        return DEMO_TOOLS
    module_name, _, attribute = spec.partition(":")
    if not module_name:
        raise UsageError(f"--tools expects module:attribute, got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
            raise  # a module the user's module imports: its own error
        raise UsageError(f"--tools {spec}: no module named {exc.name!r}") from None
    if not attribute:  # the module alone (``--tools mytools``): say what it offers
        raise UsageError(
            f"--tools expects module:attribute, got {spec!r}{_offered(module, module_name)}"
        )
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise UsageError(
                f"--tools {spec}: {module_name!r} has no {attribute!r}"
                + _offered(module, module_name)
            ) from None
    items = [found] if callable(found) and not isinstance(found, list | tuple) else found
    try:
        return items if isinstance(items, ToolRegistry) else ToolRegistry(items)
    except TypeError as exc:
        raise UsageError(
            f"--tools {spec}: expected a ToolRegistry, a tool, or a list of tools "
            f"or functions, got {type(found).__name__}: {exc}"
        ) from None


def _offered(module: Any, name: str) -> str:
    """What ``--tools`` could name in ``module`` (a ToolRegistry, a tool, a list
    of tools), as the end of its error, so that a first try without the right
    attribute says the one to write; "" when the module has none."""
    from streamtools.tools import Tool, ToolRegistry

    def usable(value: Any) -> bool:
        if isinstance(value, list | tuple):
            return bool(value) and all(isinstance(v, Tool) for v in value)
        return isinstance(value, ToolRegistry | Tool)

    def rank(value: Any) -> int:  # the whole set first: a registry, then a list
        return 0 if isinstance(value, ToolRegistry) else 2 if isinstance(value, Tool) else 1

    found = [(rank(v), n) for n, v in vars(module).items() if not n.startswith("_") and usable(v)]
    if not found:
        return ""
    best = [n for r, n in sorted(found) if r == min(found)[0]]
    return "; try " + " or ".join(f"--tools {name}:{n}" for n in best[:3])


def make_agent(
    model: Model, args: argparse.Namespace, tools: Any, *, system: str | None = SYSTEM
) -> Any:
    """The agent the command line asks for, over ``model`` with ``tools``;
    ``system``: the prompt when ``--system`` is not given. In a dialect a reply
    ends at its first call (``stop_at_call``): else a model went on past it and
    wrote the result it expected, before the tool had run."""
    kwargs: dict[str, Any] = {
        "dialect": setting(args, "dialect"),
        "system": system if args.system is None else args.system,
        "max_turns": setting(args, "max_turns"),
        "tool_timeout": setting(args, "tool_timeout"),
        "temperature": args.temperature,
        "top_p": args.top_p,
        "top_k": args.top_k,
        "seed": args.seed,
        "presence_penalty": args.presence_penalty,
        "frequency_penalty": args.frequency_penalty,
        "max_tokens": args.max_tokens,
    }
    if args.think_open:
        kwargs["think_open"] = True
    if args.answer_at_max_turns:
        kwargs["answer_at_max_turns"] = True
    if args.hybrid:
        from streamtools.runtime.hybrid import HybridAgent

        return HybridAgent(model, tools, **kwargs)
    from streamtools.runtime import Agent

    return Agent(model, tools, native=args.native, stop_at_call=not args.native, **kwargs)
