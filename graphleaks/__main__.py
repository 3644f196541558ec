"""``python -m graphleaks`` runs the command line."""

from graphleaks.cli import main

main()
