"""A real MCP client (the Python SDK 2.x) driving `chromate mcp` over stdio, in both eras.

The first session opens with `initialize` (legacy era); the second calls `server/discover`
and sends every request with the 2026-07-28 protocol metadata (modern era). Tool results
are the same in both: a success has no structured content, content[0] is the compact JSON
of the result and content[1] the observation; an error keeps structured_content.error.

Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
Run with the virtual environment's python (`target/venv`, made by `.ci/setup.sh`).
"""
import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, types

from common import Checks, result_of, stdio_params, stdio_session

check = Checks("python")


async def check_tools(era: str, session: ClientSession, url: str) -> None:
    tools = (await session.list_tools()).tools
    check(f"{era}: tools/list has the 28 tools", len(tools) == 28 and tools[0].name == "browser_navigate", len(tools))

    nav = await session.call_tool("browser_navigate", {"url": url})
    check(
        f"{era}: browser_navigate result is the JSON in content[0].text",
        not nav.is_error and result_of(nav) == {"url": url, "title": "Client fixture", "status": 200},
        nav,
    )
    texts = [block.text for block in nav.content]
    check(
        f"{era}: browser_navigate observation reaches the model as content[1]",
        len(texts) == 2 and texts[1].startswith("page: Client fixture — "),
        texts,
    )
    check(f"{era}: a success result has no structured content", nav.structured_content is None, nav.structured_content)

    bad = await session.call_tool("browser_advanced_eval", {"js": "throw new Error('client boom')"})
    error = (bad.structured_content or {}).get("error", {})
    check(
        f"{era}: a failing tool is an isError result with structuredContent.error",
        bad.is_error and error.get("code") == "EVAL_THREW" and "client boom" in error.get("detail", {}).get("exception", ""),
        bad,
    )

    status = await session.call_tool("browser_status", {})
    check(f"{era}: browser_status after launch", (result_of(status) or {}).get("ready") is True, status)


async def check_roots(session: ClientSession, root: str) -> None:
    """Uploads read under the client's roots (asked for with roots/list), and nowhere else."""
    page = "data:text/html,<title>Upload</title><input type=file id=f aria-label=File>"
    await session.call_tool("browser_navigate", {"url": page})
    inside = os.path.join(root, "inside.txt")
    with open(inside, "w") as file:
        file.write("inside")
    elsewhere = tempfile.mkdtemp(prefix="chromate-py-elsewhere-")
    outside = os.path.join(elsewhere, "outside.txt")
    with open(outside, "w") as file:
        file.write("outside")
    ok = await session.call_tool("browser_upload", {"selector": "css=#f", "files": [inside]})
    check("legacy: an upload under a declared root is allowed", not ok.is_error, ok)
    refused = await session.call_tool("browser_upload", {"selector": "css=#f", "files": [outside]})
    error = (refused.structured_content or {}).get("error", {})
    check(
        "legacy: an upload outside the roots and the working directory is INVALID_ARGUMENT",
        refused.is_error and error.get("code") == "INVALID_ARGUMENT" and "roots" in error.get("message", ""),
        refused,
    )


async def main() -> None:
    url = os.environ["FIXTURE_URL"]
    params = stdio_params(["mcp"], "chromate-py-")
    async with stdio_session(params) as session:
        init = await session.initialize()
        check("legacy: server info", init.server_info.name == "chromate", init.server_info)
        check("legacy: capabilities advertise resources", init.capabilities.resources is not None, init.capabilities)
        await check_tools("legacy", session, url)

    async with stdio_session(params) as session:
        discover = await session.discover()
        check(
            "modern: server/discover offers 2026-07-28",
            "2026-07-28" in discover.supported_versions and session.protocol_version == "2026-07-28",
            discover,
        )
        await check_tools("modern", session, url)

    root = tempfile.mkdtemp(prefix="chromate-py-root-")

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{root}", name="uploads")])

    async with stdio_session(params, list_roots_callback=list_roots) as session:
        await session.initialize()
        await check_roots(session, root)

asyncio.run(main())
sys.exit(check.status())
