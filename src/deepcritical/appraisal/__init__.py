"""Appraising the evidence a run collected, in code: each study read once, the counted set, the answer, the
verdict and the capped assessment. Pure: no I/O, no model calls; the run and the report read what it returns."""
