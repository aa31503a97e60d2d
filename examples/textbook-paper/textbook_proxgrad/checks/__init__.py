"""The textbook proximal gradient rate, checks layer."""

MODULES = ("checks",)
