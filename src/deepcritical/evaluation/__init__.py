"""The evaluation harness (``deepcritical eval``): the research loop scored on questions whose answers are known
(PubMedQA, SciFact, MedEvidence) and the result reader on doctors' readings of trials (Evidence Inference). It
sits above the run it scores; nothing in the run imports it."""
