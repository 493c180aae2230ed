"""A research run put together: set-up (demo or live), the loop, the report stage, the outcome and its files."""
