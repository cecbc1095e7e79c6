"""Entry points git and pre-commit call: each one a ``main() -> int`` over the same verbs."""
