"""Integration tests against a real llama.cpp server (see conftest.py and docs/llamacpp.md)."""
