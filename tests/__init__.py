"""The test suite; tests/README.md maps its folders to the package's areas."""
