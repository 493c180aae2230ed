"""The web page, the HTTP API and the run manager behind them (and behind the MCP server): three views
of the same runs, each driven by the orchestrator's typed progress events."""
