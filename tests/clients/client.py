"""A real MCP client (the Python SDK) driving `chromate mcp` over stdio.

Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
"""
import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

failed = 0


def check(name: str, ok: bool, why: object) -> None:
    global failed
    if ok:
        print(f"PASS python: {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL python: {name}: {why}", flush=True)


async def main() -> None:
    url = os.environ["FIXTURE_URL"]
    env = dict(os.environ, CHROMATE_MCP_ARTIFACTS_DIR=tempfile.mkdtemp(prefix="chromate-py-"))
    params = StdioServerParameters(command=os.environ["CHROMATE_BIN"], args=["mcp"], env=env)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check("server info", init.serverInfo.name == "chromate", init.serverInfo)

                tools = (await session.list_tools()).tools
                check("tools/list has the 28 tools", len(tools) == 28 and tools[0].name == "browser_navigate", len(tools))

                nav = await session.call_tool("browser_navigate", {"url": url})
                result = (nav.structuredContent or {}).get("result", {})
                check(
                    "browser_navigate result",
                    not nav.isError and result == {"url": url, "title": "Client fixture", "status": 200},
                    nav,
                )
                texts = [block.text for block in nav.content]
                check("browser_navigate observation", len(texts) == 2 and texts[1].startswith("page: Client fixture — "), texts)

                bad = await session.call_tool("browser_advanced_eval", {"js": "throw new Error('client boom')"})
                error = (bad.structuredContent or {}).get("error", {})
                check(
                    "a failing tool is an isError result",
                    bad.isError and error.get("code") == "EVAL_THREW" and "client boom" in error.get("detail", {}).get("exception", ""),
                    bad,
                )

                status = await session.call_tool("browser_status", {})
                check("browser_status after launch", (status.structuredContent or {}).get("result", {}).get("ready") is True, status)


asyncio.run(main())
sys.exit(0 if failed == 0 else 1)
