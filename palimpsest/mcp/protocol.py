"""The part of the Model Context Protocol a tools-only server speaks, over stdio.

    >>> tools = Tools()
    >>> @tools.tool()
    ... def echo(text: str) -> Result:
    ...     "Say it back"
    ...     return Result(text, {"text": text})
    >>> run_stdio(tools, name="palimpsest", version="0.1.0", instructions="...")

JSON-RPC 2.0, one message a line on stdin/stdout (the MCP stdio transport):
`initialize`, `ping`, `tools/list` and `tools/call` (and empty prompt and resource
lists, which some hosts ask for unoffered); notifications are read and ignored (a
call runs to its end), any other request gets "method not found".
Arguments are validated by a pydantic model built from the tool's signature, as
the official SDK does, and its JSON schema is the tool's input schema (inline,
`metadata.inline`). Written out so that `palimpsest mcp` answers `tools/list`
before the official SDK would have finished importing (~1.5-6 s: its protocol
types are several thousand pydantic models); the test suite drives this server
with that SDK's client.
"""

from __future__ import annotations

import inspect
import json
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

# newest first; a client asking for another gets the newest (it may then hang up)
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_NOT_FOUND, _INVALID, _PARSE = -32601, -32602, -32700
_EMPTY = {
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


@dataclass(frozen=True)
class Result:
    """A tool's answer: text for the model to read, structured content, an error flag."""

    text: str
    data: dict[str, Any] | None = None
    is_error: bool = False

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "content": [{"type": "text", "text": self.text}],
            "isError": self.is_error,
        }
        if self.data is not None:
            out["structuredContent"] = self.data
        return out


@dataclass
class _Tool:
    fn: Callable[..., Result]
    arguments: type[BaseModel]
    description: str


@dataclass
class Tools:
    """The tools a server offers: `tool()` registers a function, `describe` adds what
    `tools/list` shows beyond name, description and input schema."""

    describe: Callable[[dict[str, Any]], dict[str, Any]] = lambda t: t
    _tools: dict[str, _Tool] = field(default_factory=dict)
    _listed: list[dict[str, Any]] | None = None

    def tool(self) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
        def register(fn: Callable[..., Result]) -> Callable[..., Result]:
            self._tools[fn.__name__] = _Tool(fn, _arguments(fn), inspect.getdoc(fn) or "")
            return fn

        return register

    def listed(self) -> list[dict[str, Any]]:
        """Every tool as `tools/list` shows it (built once: the tools are fixed)."""
        if self._listed is None:
            self._listed = [
                self.describe(
                    {
                        "name": name,
                        "description": t.description,
                        "inputSchema": t.arguments.model_json_schema(by_alias=True),
                    }
                )
                for name, t in self._tools.items()
            ]
        return self._listed

    def call(self, name: str, arguments: dict[str, Any] | None) -> Result:
        """Run a tool; bad arguments and unknown tools are tool errors, as in the SDK."""
        t = self._tools.get(name)
        if t is None:
            return Result(f"Unknown tool: {name}", is_error=True)
        try:
            parsed = t.arguments.model_validate(arguments or {})
        except ValidationError as e:
            return Result(f"Error executing tool {name}: {e}", is_error=True)
        try:
            return t.fn(**{k: getattr(parsed, k) for k in type(parsed).model_fields})
        except Exception as e:  # the server keeps running, as with the SDK
            return Result(f"Error executing tool {name}: {e}", is_error=True)


def _arguments(fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of the function's parameters (their annotations and defaults)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for name, p in inspect.signature(fn).parameters.items():
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[name] = (hints.get(name, Any), default)
    config = ConfigDict(arbitrary_types_allowed=True)
    return create_model(f"{fn.__name__}Arguments", __config__=config, **fields)


def answer(
    tools: Tools, message: Any, *, name: str, version: str, instructions: str
) -> dict[str, Any] | None:
    """The response to one JSON-RPC message (None for a notification or a response)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _failure(None, -32600, "Invalid Request")
    if "method" not in message:
        return None  # a response to a request of ours: this server sends none
    rid, method, params = message.get("id"), message["method"], message.get("params") or {}
    if rid is None:
        return None  # notifications/initialized, cancelled, ...: nothing to answer
    if not isinstance(params, dict):
        return _failure(rid, _INVALID, "params: expected an object")
    if method == "initialize":
        asked = params.get("protocolVersion")
        result: dict[str, Any] = {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": name, "version": version},
            "instructions": instructions,
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": tools.listed()}
    elif method in _EMPTY:  # not offered; some hosts ask anyway: an empty list, not an error
        result = {_EMPTY[method]: []}
    elif method == "tools/call":
        tool, arguments = params.get("name"), params.get("arguments")
        if not isinstance(tool, str) or not isinstance(arguments, dict | None):
            return _failure(rid, _INVALID, "tools/call: a tool name and an arguments object")
        result = tools.call(tool, arguments).wire()
    else:
        return _failure(rid, _NOT_FOUND, f"Method not found: {method}")
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _failure(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def run_stdio(
    tools: Tools,
    *,
    name: str,
    version: str,
    instructions: str,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Answer messages from stdin on stdout, one at a time, until stdin closes."""
    src = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout.buffer
    for line in src:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply: dict[str, Any] | None = _failure(None, _PARSE, "Parse error")
        else:  # one message a line (JSON-RPC batches left MCP in 2025-06-18)
            reply = answer(tools, message, name=name, version=version, instructions=instructions)
        if reply is not None:
            _write(out, reply)


def _write(out: IO[bytes], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    out.flush()
