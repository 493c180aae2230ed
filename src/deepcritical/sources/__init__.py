"""Search sources: one module per external API behind one ``SearchTool`` base (which owns the error
policy), the handler that runs them in parallel, ``registry`` (the one table of sources, which imports
nothing, so that the settings and ``--help`` read it for free) and ``factory`` that builds a run's sources.
Nothing is imported here: importing ``deepcritical.source_table`` must not load the HTTP stack."""
