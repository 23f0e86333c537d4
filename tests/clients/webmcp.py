"""A real MCP client (the Python SDK 2.x) on `chromate mcp --caps webmcp` (docs/mcp.md#webmcp).

The page's own tools reach the client's tool list: the server declares `tools.listChanged`,
its `notifications/tools/list_changed` arrive when the page registers a tool (after a
navigation, after a click), and the client's refreshed list then holds the new
`webmcp_<name>` tool, which the client calls like any other.

Env: CHROMATE_BIN (the binary), FIXTURE_BASE (tests/fixtures/pages served over HTTP, ending
in `/`). Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any
failure. Every wait is bounded (20 s); nothing sleeps. Prints `BROWSER_PID <pid>` (from
browser_status once the browser runs) so that the caller can prove it is gone.
"""
import asyncio
import json
import os
import sys

from common import Checks, ListChanges, error_of, stdio_params, stdio_session, texts

check = Checks("python webmcp")


async def main() -> None:
    base = os.environ["FIXTURE_BASE"]
    params = stdio_params(["mcp", "--caps", "webmcp"], "chromate-py-webmcp-")
    changes = ListChanges()
    names, until = changes.names, changes.until
    async with stdio_session(params, message_handler=changes.on_message) as session:
        init = await session.initialize()
        tools_cap = init.capabilities.tools
        check("initialize declares tools.listChanged", tools_cap is not None and tools_cap.list_changed is True, tools_cap)
        before = await names(session)
        check("before any page: the 28 and browser_webmcp", len(before) == 29 and "browser_webmcp" in before, before)

        await session.call_tool("browser_navigate", {"url": base + "webmcp.html"})
        status = await session.call_tool("browser_status", {})
        print(f"BROWSER_PID {json.loads(status.content[0].text).get('browserPid')}", flush=True)
        listed = await until(session, lambda n: "webmcp_add_to_cart" in n)
        check("the page's tools reach the client's list", "webmcp_add_to_cart" in listed and "webmcp_frame_tool" in listed, listed)

        await session.call_tool("browser_click", {"selector": "#more"})
        listed = await until(session, lambda n: "webmcp_checkout" in n)
        check("a tool registered after a click: list_changed, then the refreshed list has it", "webmcp_checkout" in listed, listed)

        added = await session.call_tool("webmcp_add_to_cart", {"item": "tea"})
        shown = texts(added)
        check("a page tool called through the SDK: its output, then the observation",
              not added.is_error and shown[:1] == ["added 1 tea"] and "cart: 1" in "".join(shown[1:]), shown)

        failed_call = await session.call_tool("webmcp_explode", {})
        error = error_of(failed_call)
        check("a tool that throws is a tool error with the page's message",
              failed_call.is_error and error.get("code") == "EVAL_THREW" and "out of stock" in error.get("message", ""), error)

        await session.call_tool("browser_page", {"action": "open", "url": base + "webmcp-other.html"})
        listed = await until(session, lambda n: "webmcp_other_tool" in n and "webmcp_add_to_cart" not in n)
        check("another tab becomes active: the list follows it",
              "webmcp_other_tool" in listed and "webmcp_add_to_cart" not in listed, listed)


asyncio.run(main())
sys.exit(check.status())
