"""The language-model agents: the Brain (plans and searches), the Judge and the Report, the per-run
context they read (``ResearchDeps``), the one place that calls them (``calls.run_agent``), and the live
model set-up. Each agent is wrapped as a stage (``Planner``, ``Judge``, ``Reporter``) for the loop."""
