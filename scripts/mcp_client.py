#!/usr/bin/env python3
"""Drives `slackindex mcp` through the official Python MCP client (`pip install mcp`), over stdio.

usage: mcp_client.py STEPS_JSON -- COMMAND [ARGS...]

Starts COMMAND ARGS as an MCP server, runs each step of STEPS_JSON (a JSON list) in one session, and prints one
JSON list with a result per step. Steps:
  {"list": "tools" | "resources" | "templates" | "prompts"}  -> {"items": [{name, description, schema|uri}...]}
  {"tool": NAME, "arguments": {...}}                          -> {"error": bool, "text": str}
  {"pages": NAME, "arguments": {...}}                         -> {"texts": [str...]}  (follows `cursor "X"`)
  {"read": URI}                                               -> {"error": bool, "text": str}
  {"prompt": NAME, "arguments": {...}}                        -> {"error": bool, "text": str}
Used by MCPClientTests (Tests/SlackIndexIntegrationTests/MCPClientTests.swift).
"""
import asyncio
import json
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # the package's 2.x name, then 1.x's
    from mcp.shared.exceptions import MCPError as ProtocolError
except ImportError:
    from mcp.shared.exceptions import McpError as ProtocolError

CURSOR = re.compile(r'cursor "([^"]+)"')


def get(value, name):
    """A field by its protocol name (the package's 1.x attributes) or in snake case (2.x)."""
    if hasattr(value, name):
        return getattr(value, name)
    return getattr(value, re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name))


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def tool(session, name, arguments):
    result = await session.call_tool(name, arguments)
    return {"error": bool(get(result, "isError")), "text": text_of(result)}


async def step(session, s):
    if "list" in s:
        kind = s["list"]
        if kind == "tools":
            items = (await session.list_tools()).tools
            return {"items": [{"name": t.name, "description": t.description, "schema": get(t, "inputSchema")} for t in items]}
        if kind == "resources":
            items = (await session.list_resources()).resources
            return {"items": [{"name": r.name, "uri": str(r.uri)} for r in items]}
        if kind == "templates":
            items = get(await session.list_resource_templates(), "resourceTemplates")
            return {"items": [{"name": t.name, "uri": get(t, "uriTemplate")} for t in items]}
        items = (await session.list_prompts()).prompts
        return {"items": [{"name": p.name, "description": p.description} for p in items]}
    if "tool" in s:
        return await tool(session, s["tool"], s.get("arguments", {}))
    if "pages" in s:
        texts, arguments = [], dict(s.get("arguments", {}))
        while len(texts) < 500:
            answer = await tool(session, s["pages"], arguments)
            texts.append(answer["text"])
            found = CURSOR.search(answer["text"])
            if answer["error"] or not found:
                break
            arguments["cursor"] = found.group(1)
        return {"texts": texts}
    try:
        if "read" in s:
            result = await session.read_resource(s["read"])
            return {"error": False, "text": "\n".join(getattr(c, "text", "") for c in result.contents)}
        result = await session.get_prompt(s["prompt"], s.get("arguments", {}))
        return {"error": False, "text": "\n".join(m.content.text for m in result.messages)}
    except ProtocolError as error:
        return {"error": True, "text": error.error.message}


async def main():
    steps = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            results = [await step(session, s) for s in steps]
    print(json.dumps(results))


asyncio.run(main())
