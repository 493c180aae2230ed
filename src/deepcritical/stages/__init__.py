"""The research loop's units that need no language model: the search stage and the run's evidence, the
run's state and budgets, citation checking, rendering, how evidence is framed for a model, and the
code-built fallbacks (an assessment and an extractive report) that stand in when a model fails."""
