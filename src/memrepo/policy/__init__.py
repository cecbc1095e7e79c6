"""Policies as data: load policies/ from a tree and run checks that return findings. Pure: no git writes."""
