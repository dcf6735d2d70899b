"""Drive vg-mcp with the official MCP Python SDK, for tests/mcp.rs and bench/.

usage: client.py PLAN.json

PLAN: {"command": [...], "cwd": "...", "mode": "handshake" | "auto",
       "steps": [STEP, ...]}
STEP: {"op": "list_tools"}
      {"op": "call", "tool": NAME, "args": {...}, "progress": true}
      {"op": "raw", "method": NAME, "params": {...}}   (any request, errors kept)
      {"op": "write", "path": PATH, "text": TEXT}      (edit the tree meanwhile)
      {"op": "sleep", "seconds": N}

Prints one JSON line per step: {"op", "seconds" (since the server was
spawned), "result" or "error", "progress": [...]}, after a first line
{"op": "connect", "protocol_version", "server_info", "instructions"}.
The assertions are the caller's; this only speaks the protocol.
"""

import asyncio
import json
import sys
import time
from pathlib import Path

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

T0 = time.monotonic()


def emit(record):
    record["seconds"] = round(time.monotonic() - T0, 3)
    print(json.dumps(record), flush=True)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run_steps(call, list_tools, raw, steps):
    for step in steps:
        op = step["op"]
        record = {"op": op}
        try:
            if op == "list_tools":
                record["result"] = dump(await list_tools())
            elif op == "call":
                progress = []

                async def on_progress(done, total, message):
                    progress.append({"progress": done, "total": total, "message": message})

                callback = on_progress if step.get("progress") else None
                result = await call(step["tool"], step.get("args"), callback)
                record["result"] = dump(result)
                record["progress"] = progress
            elif op == "raw":
                record["result"] = await raw(step["method"], step.get("params"))
            elif op == "write":
                path = Path(step["path"])
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(step["text"])
            elif op == "sleep":
                await asyncio.sleep(step["seconds"])
            else:
                raise ValueError(f"unknown op {op}")
        except MCPError as e:
            record["error"] = {"code": e.error.code, "message": e.error.message}
        emit(record)


async def handshake(params, steps):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            emit({
                "op": "connect",
                "protocol_version": str(init.protocol_version),
                "server_info": dump(init.server_info),
                "instructions": init.instructions,
            })

            async def call(tool, args, callback):
                return await session.call_tool(tool, args, progress_callback=callback)

            async def raw(method, params):
                request = types.ClientRequest.model_validate({"method": method, "params": params or {}})
                result = await session.send_request(request, types.Result)
                return dump(result)

            await run_steps(call, session.list_tools, raw, steps)


async def auto(params, steps):
    async with Client(params, mode="auto", raise_exceptions=True) as client:
        emit({
            "op": "connect",
            "protocol_version": str(client.protocol_version),
            "server_info": dump(client.server_info) if client.server_info else None,
            "instructions": client.instructions,
        })

        async def call(tool, args, callback):
            return await client.call_tool(tool, args, progress_callback=callback)

        async def raw(method, params):
            raise ValueError("raw requests are for the handshake mode")

        await run_steps(call, client.list_tools, raw, steps)


def main():
    plan = json.loads(Path(sys.argv[1]).read_text())
    command = plan["command"]
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=plan.get("cwd"), env=plan.get("env"))
    run = auto if plan.get("mode") == "auto" else handshake
    asyncio.run(run(params, plan["steps"]))


if __name__ == "__main__":
    main()
