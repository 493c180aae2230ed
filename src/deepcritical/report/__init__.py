"""The report, built in code from the appraisal and the drafted text: the document, its writers (Markdown,
HTML), its figures and the reference-manager exports."""
