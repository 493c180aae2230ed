"""DeepCritical as an MCP server (official ``mcp`` SDK): over stdio (``deepcritical mcp``) and mounted at
``/mcp`` in the web app (streamable HTTP). Its runs are the web app's runs: same manager, same folder."""
