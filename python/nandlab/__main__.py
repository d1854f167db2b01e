"""Lets ``python -m nandlab`` work like the ``nandlab`` command."""

from nandlab.cli import main

main()
