"""What the Python SDK clients share: their PASS/FAIL report, reading a tool result, and the
connection to `chromate mcp` (over stdio, or over Streamable HTTP with a bearer token).

A script imports it as `common` (its own directory is first on `sys.path` when run as
`python tests/clients/NAME.py`). Run with the virtual environment's python (`target/venv`, made
by `.ci/setup.sh`).
"""
import asyncio
import contextlib
import json
import os
import tempfile

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


class Checks:
    """Prints one `PASS <prefix>: <check>` or `FAIL <prefix>: <check>: <why>` line per check."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.failed = 0

    def __call__(self, name: str, ok: bool, why: object) -> None:
        if ok:
            print(f"PASS {self.prefix}: {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {self.prefix}: {name}: {why}", flush=True)

    def status(self) -> int:
        """The script's exit status: 1 on any failure."""
        return 0 if self.failed == 0 else 1


def texts(result) -> list:
    """The text blocks of a tool result."""
    return [block.text for block in result.content if getattr(block, "text", None) is not None]


def result_of(call) -> object:
    """content[0].text parsed as JSON, or None."""
    try:
        return json.loads(call.content[0].text)
    except (AttributeError, IndexError, ValueError):
        return None


def error_of(result) -> dict:
    """A tool error's structuredContent.error ({} for a success)."""
    return (result.structured_content or {}).get("error", {})


def stdio_params(args: list, prefix: str) -> StdioServerParameters:
    """`$CHROMATE_BIN ARGS…` with a fresh artifacts directory."""
    env = dict(os.environ, CHROMATE_MCP_ARTIFACTS_DIR=tempfile.mkdtemp(prefix=prefix))
    return StdioServerParameters(command=os.environ["CHROMATE_BIN"], args=args, env=env)


@contextlib.asynccontextmanager
async def stdio_session(params: StdioServerParameters, **session_options):
    """A ClientSession on a server started with `params` (its stderr dropped), not yet
    initialized; the server ends when the block does."""
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write, **session_options) as session:
                yield session


@contextlib.asynccontextmanager
async def http_session(endpoint: str, token: str, **session_options):
    """A ClientSession over Streamable HTTP on `endpoint` (…/mcp) with `Authorization: Bearer
    TOKEN`, not yet initialized; its MCP session is ended (DELETE) when the block ends."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(60.0, read=120.0),
    )
    async with client, streamable_http_client(endpoint, http_client=client) as (read, write):
        async with ClientSession(read, write, **session_options) as session:
            yield session


class ListChanges:
    """The `notifications/tools/list_changed` one session received (pass `on_message` as the
    ClientSession's message_handler), and its tool list read again at each until a condition
    holds."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = asyncio.Event()

    async def on_message(self, message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self.changed.set()

    @staticmethod
    async def names(session) -> list:
        """The names tools/list offers."""
        return [tool.name for tool in (await session.list_tools()).tools]

    async def until(self, session, done, within: float = 20) -> list:
        """The tool names, listed again at each list_changed until `done(names)` holds or
        `within` seconds passed (then the last list)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            self.changed.clear()
            listed = await self.names(session)
            if done(listed):
                return listed
            left = deadline - loop.time()
            if left <= 0:
                return listed
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass
