"""The command line: ``deepcritical research``, ``search``, ``export``, ``library``, ``serve`` and ``mcp``."""
