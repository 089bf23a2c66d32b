"""Tests of cli: the command line: commands, help, interrupts, stream sources (tests/README.md)."""
