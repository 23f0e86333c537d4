"""A real MCP client (the Python SDK 2.x) driving `chromate mcp --caps flows` over stdio.

Lists the tools without and with the capability, then calls capture_url, capture_element,
list_flows, run_flow (a flow whose third step fails, and a flow name the file lacks) and
describe_flow. Prints one JSON object with what each call returned: `is_error`, the JSON of
content[0] and the structured content. The Rust test mcp/tests/e2e/flows.rs runs it and checks
the answers.

Env: CHROMATE_BIN (the binary), FIXTURE_ORIGIN (the fixture server), FLOWS_FILE (the flow
file), OUT_DIR (where captures go). Run with the virtual environment's python (`target/venv`,
made by `.ci/setup.sh`).
"""
import asyncio
import json
import os

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def answer(call) -> dict:
    try:
        parsed = json.loads(call.content[0].text)
    except (AttributeError, IndexError, ValueError):
        parsed = None
    return {
        "is_error": bool(call.is_error),
        "json": parsed,
        "text": getattr(call.content[0], "text", None) if call.content else None,
        "structured": call.structured_content,
    }


async def main() -> None:
    binary = os.environ["CHROMATE_BIN"]
    origin = os.environ["FIXTURE_ORIGIN"]
    config = os.environ["FLOWS_FILE"]
    out = os.environ["OUT_DIR"]
    report: dict = {}
    for caps in (False, True):
        args = ["mcp"] + (["--caps", "flows"] if caps else [])
        params = StdioServerParameters(command=binary, args=args, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                if not caps:
                    report["default_tools"] = tools
                    continue
                report["tools"] = tools
                call = session.call_tool
                report["capture_url"] = answer(await call("capture_url", {
                    "url": origin + "/clock.html", "name": "home", "output_dir": out,
                    "mask": ["#clock"], "viewport_width": 800, "viewport_height": 600,
                }))
                report["capture_element"] = answer(await call("capture_element", {
                    "url": origin + "/clock.html", "name": "card", "selector": "#card",
                    "output_dir": out,
                }))
                report["capture_element_without_selector"] = answer(await call("capture_element", {
                    "url": origin + "/clock.html", "name": "card",
                }))
                report["list_flows"] = answer(await call("list_flows", {"config_path": config}))
                report["run_flow"] = answer(await call("run_flow", {
                    "flow_name": "checkout", "config_path": config, "output_dir": out,
                }))
                report["run_missing_flow"] = answer(await call("run_flow", {
                    "flow_name": "nope", "config_path": config, "output_dir": out,
                }))
                report["describe_flow"] = answer(await call("describe_flow", {
                    "flow_name": "checkout", "config_path": config, "output_dir": out,
                }))
    print(json.dumps(report))


asyncio.run(main())
