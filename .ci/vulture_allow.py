# ruff: noqa: F821, B018
# Names vulture reports that are used, by a signature the code must keep: read by `vulture src .ci/vulture_allow.py`.
# The demo DDGS stand-in and the DdgsLike protocol take ddgs.DDGS's own parameters (demo/ddgs.py, sources/web.py).
exc_type, exc_val, exc_tb, region, safesearch, timelimit, kwargs
