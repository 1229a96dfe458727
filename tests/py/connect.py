"""An independent MCP client (Python `mcp` 2.3) against vitals-mcp: connect Oura through URL
elicitation, then read real data. Its elicitation callback follows the link like a browser.

    connect.py <vitals-mcp> <mode: legacy | auto>      (the server's environment comes from ours)

Prints one JSON object: the protocol version, the connect result, what was elicited, the complete
notifications, and the query's `synthetic` flag and record count.
"""
import json, os, sys, urllib.request

import anyio
import mcp_types as t
from mcp import Client, StdioServerParameters

elicited, completed, pages = [], [], []


def browse(url: str) -> None:
    # urllib follows the twin's 303 to the server's loopback callback, as a browser would.
    with urllib.request.urlopen(url, timeout=30) as r:
        pages.append((r.status, r.read().decode()))


async def on_elicit(ctx, p: t.ElicitRequestParams) -> t.ElicitResult:
    assert p.mode == "url", "vitals never asks through a form"
    elicited.append({"url": p.url, "id": p.elicitation_id, "message": p.message})
    await anyio.to_thread.run_sync(browse, p.url)
    return t.ElicitResult(action="accept")


async def on_message(m) -> None:
    if isinstance(m, t.ElicitCompleteNotification):
        completed.append(m.params.elicitation_id)


async def main(exe: str, mode: str) -> None:
    server = StdioServerParameters(command=exe, args=[], env=dict(os.environ))
    async with Client(server, mode=mode, elicitation_callback=on_elicit, message_handler=on_message) as c:
        r = await c.call_tool("vitals_connect", {"provider": "oura"})
        q = await c.call_tool("vitals_query", {"collection": "oura.daily_sleep", "start": "2026-06-10", "end": "2026-06-12"})
        await anyio.sleep(0.2)  # a notification travels on its own
        print(json.dumps({
            "protocol": str(c.protocol_version),
            "connect_error": r.is_error,
            "connect": r.structured_content,
            "elicited": elicited,
            "completed": completed,
            "pages": [s for s, _ in pages],
            "page_says_connected": all("Connected" in p for _, p in pages),
            "synthetic": (q.structured_content or {}).get("synthetic"),
            "count": (q.structured_content or {}).get("count"),
        }))


anyio.run(main, sys.argv[1], sys.argv[2])
