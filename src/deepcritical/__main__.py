"""``python -m deepcritical`` runs the command line."""

from deepcritical.cli import main

main()
