"""Manifests: loading with source positions, Jinja rendering, row expansion, documents."""
