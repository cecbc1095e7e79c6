"""Verbs: each composes model, gitstore and policy. One module per verb (or verb family)."""
