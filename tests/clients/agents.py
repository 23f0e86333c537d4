"""Many agents at once, each a real MCP client (the Python SDK 2.x over Streamable HTTP), on
one endpoint: `chromate mcp --http`, or nginx in front of several (docs/mcp.md, "Several
servers behind a load balancer"). Driven by mcp/tests/e2e/mcp/balancer.rs and the
`balanced` bench.

Each agent: initialize; navigate FIXTURE_ORIGIN/login?user=<name> (the fixture sets the cookie
user=<name>); navigate /whoami (the fixture prints the Cookie header it received); set
localStorage and read it with document.cookie; snapshot (the page /whoami printed). Then all agents wait together: the script prints one line
`READY <json>` (per agent: its session id, what it saw, its step times in ms) and reads one line
on stdin; then each agent makes one more call (reads its cookie and storage) and ends its session, and the
script prints `DONE <json>` (per agent: that call's outcome, or the error the client raised).

Env: ENDPOINT (…/mcp), TOKEN (the bearer), FIXTURE_ORIGIN (http://127.0.0.1:PORT), AGENTS (20),
ROUNDS (0: how many more times each agent repeats navigate, eval and snapshot; step times are lists).
Run with target/venv's python (`.ci/setup.sh all`).
"""
import asyncio
import json
import os
import sys
import time

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

ENDPOINT = os.environ["ENDPOINT"]
TOKEN = os.environ["TOKEN"]
ORIGIN = os.environ["FIXTURE_ORIGIN"]
AGENTS = int(os.environ.get("AGENTS", "20"))
# The bench's: how many more times each agent repeats navigate, eval and snapshot.
ROUNDS = int(os.environ.get("ROUNDS", "0"))


def text_of(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


class Agent:
    def __init__(self, index: int, go: asyncio.Event, ready: "asyncio.Queue[int]") -> None:
        self.name = f"agent{index:02d}"
        self.go = go
        self.ready = ready
        self.session_id = None
        self.times: dict[str, float] = {}
        self.seen: dict[str, object] = {}
        self.error = None
        self.after: dict[str, object] = {}

    async def timed(self, step: str, call):
        started = time.perf_counter()
        result = await call
        self.times.setdefault(step, []).append(round((time.perf_counter() - started) * 1000, 2))
        return result

    def keep_session_id(self, response: httpx2.Response) -> None:
        found = response.headers.get("mcp-session-id")
        if found and self.session_id is None:
            self.session_id = found

    async def run(self) -> None:
        async def hook(response: httpx2.Response) -> None:
            self.keep_session_id(response)

        client = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=httpx2.Timeout(120.0, read=300.0),
            event_hooks={"response": [hook]},
        )
        signalled = False
        try:
            async with client, streamable_http_client(ENDPOINT, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    try:
                        await self.work(session)
                    except Exception as err:  # the report says what failed
                        self.error = f"{type(err).__name__}: {err}"
                    await self.ready.put(1)
                    signalled = True
                    await self.go.wait()
                    if self.error is None:
                        await self.after_kill(session)
        except Exception as err:
            self.error = self.error or f"{type(err).__name__}: {err}"
            if not self.after:
                self.after = {"ok": False, "transport": f"{type(err).__name__}: {err}"}
        finally:
            if not signalled:
                await self.ready.put(1)

    async def work(self, session: ClientSession) -> None:
        await self.timed("initialize", session.initialize())
        login = await self.timed(
            "navigate", session.call_tool(
                "browser_navigate",
                # The first call waits for the pool's browser: twenty starting at once take long.
                {"url": f"{ORIGIN}/login?user={self.name}", "timeout_ms": 240000},
            ),
        )
        self.seen["login"] = text_of(login)
        whoami = await self.timed(
            "navigate_again", session.call_tool("browser_navigate", {"url": f"{ORIGIN}/whoami"})
        )
        self.seen["whoami"] = text_of(whoami)
        stored = await self.timed(
            "eval",
            session.call_tool(
                "browser_advanced_eval",
                {"js": f"localStorage.setItem('agent', '{self.name}'); document.cookie + ' | ' + localStorage.getItem('agent')"},
            ),
        )
        self.seen["storage"] = text_of(stored)
        snapshot = await self.timed("snapshot", session.call_tool("browser_snapshot", {}))
        self.seen["snapshot"] = text_of(snapshot)
        self.seen["errors"] = [r.is_error for r in (login, whoami, stored, snapshot)]
        for _ in range(ROUNDS):
            again = [
                await self.timed("navigate_again", session.call_tool("browser_navigate", {"url": f"{ORIGIN}/whoami"})),
                await self.timed("eval", session.call_tool("browser_advanced_eval", {"js": "document.cookie"})),
                await self.timed("snapshot", session.call_tool("browser_snapshot", {})),
            ]
            if any(r.is_error for r in again):
                self.seen["errors"].append(True)

    async def after_kill(self, session: ClientSession) -> None:
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(
                session.call_tool("browser_advanced_eval", {"js": "document.cookie + ' | ' + localStorage.getItem('agent')"}),
                timeout=120,
            )
            self.after = {"ok": not result.is_error, "text": text_of(result)}
        except MCPError as err:
            self.after = {"ok": False, "code": err.code, "message": err.message}
        except Exception as err:
            self.after = {"ok": False, "transport": f"{type(err).__name__}: {err}"}
        self.after["ms"] = round((time.perf_counter() - started) * 1000, 2)

    def report(self) -> dict:
        return {
            "name": self.name,
            "session_id": self.session_id,
            "times": self.times,
            "seen": self.seen,
            "error": self.error,
        }


async def main() -> None:
    go = asyncio.Event()
    ready: asyncio.Queue[int] = asyncio.Queue()
    agents = [Agent(index, go, ready) for index in range(AGENTS)]
    tasks = [asyncio.create_task(agent.run()) for agent in agents]
    for _ in agents:
        await ready.get()
    print("READY " + json.dumps([agent.report() for agent in agents]), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    go.set()
    await asyncio.gather(*tasks)
    print("DONE " + json.dumps([{"name": a.name, "after": a.after} for a in agents]), flush=True)


asyncio.run(main())
