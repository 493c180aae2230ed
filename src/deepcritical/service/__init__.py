"""What serves runs to the front ends: the run manager and its queue, the team deployment's job queue
and workers, the event fan-out, the run folder's journal, admission limits and library uploads. The
research itself (a question into a report) is ``run/``; this package decides when and where it runs."""
