"""What several test modules build or read the same way: imported as ``helpers.*`` (``tests/`` is on the path)."""
