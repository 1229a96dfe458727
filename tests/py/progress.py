"""An independent MCP client (Python `mcp` 2.3) reads a long range with a progress callback, then
the same range without one (so without a progressToken).

    progress.py <vitals-mcp> <start> <end>      (the server's environment comes from ours)

Prints one JSON object: the reports of the first read (progress, total, message), whether each
read was cut, and how many reports arrived during the second read.
"""
import json, os, sys

import anyio
from mcp import Client, StdioServerParameters

reports = []


async def on_progress(progress: float, total: float | None, message: str | None) -> None:
    reports.append({"progress": progress, "total": total, "message": message})


async def main(exe: str, start: str, end: str) -> None:
    server = StdioServerParameters(command=exe, args=[], env=dict(os.environ))
    args = {"collection": "oura.heartrate", "start": start, "end": end, "resolution": "1h"}
    async with Client(server, mode="legacy") as c:
        first = await c.call_tool("vitals_query", args, progress_callback=on_progress)
        await anyio.sleep(0.3)
        seen = len(reports)
        second = await c.call_tool("vitals_query", args)
        await anyio.sleep(0.3)
        print(json.dumps({
            "reports": reports[:seen],
            "first_cut": "truncated" in ((first.structured_content or {}).get("notices") or {}),
            "second_cut": "truncated" in ((second.structured_content or {}).get("notices") or {}),
            "reports_without_token": len(reports) - seen,
        }))


anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
