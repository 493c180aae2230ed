"""DeepCritical: an open research agent that answers biomedical questions with cited evidence."""

__version__ = "0.1.0"
