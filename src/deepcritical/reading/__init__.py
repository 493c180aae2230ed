"""What a study's text states, read in code: its statistical results (effect sizes, confidence
intervals, p-values) and which way its result goes for a question's comparison (the trained result
reader). Below the stages: it reads plain text and knows nothing of a run."""
