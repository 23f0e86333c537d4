"""Two agents on one MCP connection, each on its own tab (docs/mcp.md#tabs-for-parallel-agents).

A real MCP client (the Python SDK) on `chromate mcp`: the parent opens two tabs of
tests/fixtures/pages/tabs-agent.html (agents A and B) and makes its first tab active again;
then agents A and B run at once over the one session, every call with `tab`. Checked: each
agent's observations never mention the other agent's page; the active tab stays the parent's;
the calls overlap (an ordering fact, no clock: A's script waits for a message that only B's
click sends, and B clicks only once it saw A's script waiting, so A's call can only end if B's
calls ran while it was running); a ref of A's tab used with B's tab and an unknown tab are
refused with clear errors.

Env: CHROMATE_BIN (the binary), FIXTURE_BASE (tests/fixtures/pages served over HTTP, ending in
`/`). Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
Every wait is bounded by the calls' own timeouts; nothing sleeps. Prints `BROWSER_PID <pid>`.
"""
import asyncio
import json
import os
import re
import sys

from mcp import ClientSession

from common import Checks, error_of, stdio_params, stdio_session, texts

check = Checks("python tabs")
STEPS = 8


async def agent(session: ClientSession, name: str, other: str, tab: str, seen: list) -> None:
    """STEPS notes added on `tab`; every observation is kept in `seen`."""
    snap = await session.call_tool("browser_snapshot", {"tab": tab})
    seen.extend(texts(snap))
    for step in range(1, STEPS + 1):
        filled = await session.call_tool("browser_fill", {"selector": "#note", "value": f"{name}-note-{step}", "tab": tab})
        seen.extend(texts(filled))
        clicked = await session.call_tool("browser_click", {"selector": "#add", "tab": tab})
        seen.extend(texts(clicked))
        if clicked.is_error or f"{name} item {step}: {name}-note-{step}" not in "\n".join(texts(clicked)):
            check(f"agent {name} step {step}: its observation shows its own item", False, texts(clicked))
            return


async def main() -> None:
    base = os.environ["FIXTURE_BASE"]
    params = stdio_params(["mcp"], "chromate-py-tabs-")
    async with stdio_session(params) as session:
        await session.initialize()
        await session.call_tool("browser_navigate", {"url": base + "nav.html"})
        status = await session.call_tool("browser_status", {})
        print(f"BROWSER_PID {json.loads(status.content[0].text).get('browserPid')}", flush=True)
        a = json.loads((await session.call_tool("browser_page", {"action": "open", "url": base + "tabs-agent.html?agent=A"})).content[0].text)["id"]
        b = json.loads((await session.call_tool("browser_page", {"action": "open", "url": base + "tabs-agent.html?agent=B"})).content[0].text)["id"]
        await session.call_tool("browser_page", {"action": "select", "target": "p1"})
        check("two tabs for the agents", (a, b) == ("p2", "p3"), (a, b))

        seen_a: list = []
        seen_b: list = []
        await asyncio.gather(
            agent(session, "A", "B", a, seen_a),
            agent(session, "B", "A", b, seen_b),
        )
        all_a = "\n".join(seen_a)
        all_b = "\n".join(seen_b)
        check("agent A saw its own items", f"A item {STEPS}: A-note-{STEPS}" in all_a, all_a[-400:])
        check("agent B saw its own items", f"B item {STEPS}: B-note-{STEPS}" in all_b, all_b[-400:])
        check("agent A never saw B's page", "B item" not in all_a and "B-note" not in all_a and "Agent B" not in all_a, all_a)
        check("agent B never saw A's page", "A item" not in all_b and "A-note" not in all_b and "Agent A" not in all_b, all_b)

        # The overlap, as an ordering fact: A's script ends only on B's "go", which B
        # sends only once its page heard A's script waiting.
        waiting_js = (
            "new Promise(resolve => { const c = new BroadcastChannel('chromate-tabs');"
            " c.onmessage = e => { if (e.data === 'go') { c.close(); resolve('released'); } };"
            " c.postMessage('waiting'); })"
        )

        async def run_b():
            heard = await session.call_tool("browser_wait", {"selector": "text=a waiter is ready", "timeout_ms": 30000, "tab": b})
            go = await session.call_tool("browser_click", {"selector": "#go", "tab": b})
            return heard, go

        released, (heard, go) = await asyncio.gather(
            session.call_tool("browser_advanced_eval", {"js": waiting_js, "timeout_ms": 30000, "tab": a}),
            run_b(),
        )
        check("calls on two tabs overlap: A's script was released by B's click while it ran",
              not released.is_error and json.loads(released.content[0].text).get("result") == "released"
              and not heard.is_error and not go.is_error,
              (texts(released), texts(heard), texts(go)))

        listed = json.loads((await session.call_tool("browser_page", {"action": "list"})).content[0].text)
        check("the active tab is still the parent's", listed.get("active") == "p1", listed)

        # A ref of A's tab, used on B's tab.
        snap = "\n".join(texts(await session.call_tool("browser_snapshot", {"tab": a})))
        found = re.search(r"(e\d+): button \"Add\"", snap)
        if found is None:
            check("a ref of tab A", False, snap)
        else:
            wrong = await session.call_tool("browser_click", {"selector": found.group(1), "tab": b})
            err = error_of(wrong)
            check("a ref of tab A used with tab B is refused, naming A's tab",
                  wrong.is_error and err.get("code") == "INVALID_ARGUMENT"
                  and (err.get("detail") or {}).get("tab") == a and f"belongs to tab {a}" in err.get("message", ""),
                  err)
            right = await session.call_tool("browser_click", {"selector": found.group(1), "tab": a})
            check("the same ref with its own tab works", not right.is_error, texts(right))

        unknown = await session.call_tool("browser_snapshot", {"tab": "p99"})
        err = error_of(unknown)
        check("an unknown tab is refused, listing the open tabs",
              unknown.is_error and err.get("code") == "INVALID_ARGUMENT"
              and (err.get("detail") or {}).get("allowed") == ["p1", "p2", "p3"] and "p99" in err.get("message", ""),
              err)


asyncio.run(main())
sys.exit(check.status())
