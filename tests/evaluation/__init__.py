"""Tests of evaluation: measures, windows and results; statistics; the protocol (with labels that
arrive); plots; the baselines and MINAS-BR (tests/README.md)."""
