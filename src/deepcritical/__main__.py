"""``python -m deepcritical`` runs the command line."""

from deepcritical.cli.app import main

main()
