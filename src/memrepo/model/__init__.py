"""Typed values for entries and skills; parse and serialise their files."""
