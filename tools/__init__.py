"""Tools for agents in a sandbox: read_file, edit_file, create_file, search, lint, terminal.

    with ToolSession(sandbox) as session:
        result = call_tool(session, "read_file", '{"path": "setup.py"}')
"""
from tools.base import ToolError, ToolResult
from tools.dispatch import SCALAR_TYPES, TOOLS, call_tool, openai_schemas
from tools.session import ToolServerError, ToolSession

__all__ = ["SCALAR_TYPES", "TOOLS", "ToolError", "ToolResult", "ToolServerError", "ToolSession", "call_tool",
           "openai_schemas"]
