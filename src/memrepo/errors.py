"""Errors a user can fix: what happened, where, and what to do next."""
from __future__ import annotations


class MemrepoError(Exception):
    """A failure the user (or agent) can fix. Rendered without a traceback.

    ``what`` says what went wrong, ``where`` names the file, ref, rule or entry,
    ``hint`` says what to do next. ``exit_code`` is 1, or 2 for usage errors.
    """

    exit_code = 1
    code = "error"

    def __init__(self, what: str, *, where: str = "", hint: str = "", data: dict[str, object] | None = None) -> None:
        self.what = what
        self.where = where
        self.hint = hint
        self.data = data or {}
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"error": self.code, "message": self.what, "where": self.where, "hint": self.hint}
        out.update(self.data)
        return out


class UsageError(MemrepoError):
    exit_code = 2
    code = "usage"


class NotARepository(MemrepoError):
    code = "not_a_repository"


class ParseError(MemrepoError):
    """A file that does not parse (frontmatter, YAML, policy, § file...)."""

    code = "parse"


class NotFound(MemrepoError):
    code = "not_found"


class Ambiguous(MemrepoError):
    code = "ambiguous"


class Blocked(MemrepoError):
    """A write refused by policy; ``data['findings']`` lists the blocking findings."""

    code = "blocked"


class CapExceeded(MemrepoError):
    code = "cap_exceeded"


class Conflict(MemrepoError):
    """A ref moved under us, a lock is held, or two changes disagree."""

    code = "conflict"


class BudgetExceeded(MemrepoError):
    code = "budget_exceeded"
