"""CLI commands that live outside cli.py; cli.py registers them (heavy imports happen inside each command)."""
