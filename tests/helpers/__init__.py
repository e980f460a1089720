"""Helpers shared by several test modules (fake servers, reference implementations)."""
