"""Two sessions of one `chromate mcp --http --caps webmcp` (docs/mcp.md#webmcp, "Streamable
HTTP"), each a real MCP client (the Python SDK 2.x over Streamable HTTP, which listens on the
session's GET stream): session A shows tests/fixtures/pages/webmcp.html, session B
webmcp-other.html. Checked: each session's tool list holds only its own page's tools; each
gets `notifications/tools/list_changed` for its own page's changes (a navigation, a tool a
click adds) and none for the other session's; a page tool is called through its session only.

Env: ENDPOINT (…/mcp), TOKEN (the bearer), FIXTURE_BASE (tests/fixtures/pages served over HTTP,
ending in `/`). Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on
any failure. Every wait is bounded (20 s); nothing sleeps.
"""
import asyncio
import os
import sys

from common import Checks, ListChanges, error_of, http_session, texts

check = Checks("python webmcp http")


def page_tools(names: list) -> list:
    return [name for name in names if name.startswith("webmcp_")]


async def main() -> None:
    endpoint, token, base = os.environ["ENDPOINT"], os.environ["TOKEN"], os.environ["FIXTURE_BASE"]
    a, b = ListChanges(), ListChanges()
    async with http_session(endpoint, token, message_handler=a.on_message) as session_a, \
            http_session(endpoint, token, message_handler=b.on_message) as session_b:
        init = await session_a.initialize()
        await session_b.initialize()
        check("the server declares tools.listChanged", bool(init.capabilities.tools and init.capabilities.tools.list_changed), init.capabilities)

        await session_a.call_tool("browser_navigate", {"url": base + "webmcp.html"})
        tools_a = page_tools(await a.until(session_a, lambda names: "webmcp_add_to_cart" in names))
        check("A's list changed and holds its page's tools", a.count >= 1 and "webmcp_add_to_cart" in tools_a, (a.count, tools_a))
        tools_b = page_tools(await b.names(session_b))
        check("B, whose page offers none, lists no page tools and was told of no change", tools_b == [] and b.count == 0, (b.count, tools_b))

        before_b = a.count
        await session_b.call_tool("browser_navigate", {"url": base + "webmcp-other.html"})
        tools_b = page_tools(await b.until(session_b, lambda names: "webmcp_other_tool" in names))
        check("B's list changed and holds only its own page's tool", b.count >= 1 and tools_b == ["webmcp_other_tool"], (b.count, tools_b))
        tools_a = page_tools(await a.names(session_a))
        check("A is not told of B's change; its list is still its own page's",
              a.count == before_b and "webmcp_add_to_cart" in tools_a and "webmcp_other_tool" not in tools_a, (a.count, before_b, tools_a))

        # A's page adds a tool: A is told, B is not.
        seen_a, seen_b = a.count, b.count
        await session_a.call_tool("browser_click", {"selector": "#more"})
        tools_a = page_tools(await a.until(session_a, lambda names: "webmcp_checkout" in names))
        check("a tool A's page added: A is told and lists it", a.count > seen_a and "webmcp_checkout" in tools_a, (a.count, tools_a))
        tools_b = page_tools(await b.names(session_b))
        check("B is not told of A's change, nor lists A's tool", b.count == seen_b and tools_b == ["webmcp_other_tool"], (b.count, seen_b, tools_b))

        # Calls: each session reaches its own page's tools only.
        other = await session_b.call_tool("webmcp_other_tool", {})
        check("B calls its page's tool", not other.is_error and texts(other)[:1] == ["other"], texts(other))
        foreign = await session_b.call_tool("webmcp_add_to_cart", {"item": "x"})
        check("B cannot call A's page tool", foreign.is_error and error_of(foreign).get("code") == "NO_MATCH", texts(foreign))
        added = await session_a.call_tool("webmcp_add_to_cart", {"item": "tea", "qty": 2})
        check("A calls its page's tool", not added.is_error and texts(added)[:1] == ["added 2 tea"], texts(added))


asyncio.run(main())
sys.exit(check.status())
