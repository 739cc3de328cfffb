"""MCP servers and helpers for the MCP tests (a package so that mypy sees one module name each)."""
