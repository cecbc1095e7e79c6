"""policies/policy.yaml and the files beside it, loaded and validated as data."""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import ParseError
from ..model.safeyaml import load_yaml
from ..model.text import decode_utf8

POLICY_DIR = "policies"
POLICY_FILE = "policy.yaml"


@dataclass(frozen=True)
class ScopeSpec:
    name: str
    cap: int | None
    entry_cap: int | None
    render: bool
    title: str
    fanout: bool = False  # entries under memories/<scope>/<bucket>/ (large, recall-only scopes)


@dataclass
class Policy:
    """The policy that judges a change: always the copy on the branch the change targets."""

    data: dict[str, Any]
    files: dict[str, bytes]  # every file under policies/, keyed by its path below policies/
    source: str = "default"  # where it came from: "default" or "<ref>:policies/"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def verified_branch(self) -> str:
        return str(self.data["branches"]["verified"])

    @property
    def provisional_branch(self) -> str:
        return str(self.data["branches"]["provisional"])

    @property
    def subagent_prefix(self) -> str:
        return str(self.data["branches"].get("subagent_prefix", "subagents/"))

    @cached_property
    def scopes(self) -> dict[str, ScopeSpec]:
        out = {}
        for name, spec in self.data["scopes"].items():
            spec = spec or {}
            out[name] = ScopeSpec(name, spec.get("cap"), spec.get("entry_cap"), bool(spec.get("render", False)),
                                  str(spec.get("title", name.upper())), bool(spec.get("fanout", False)))
        return out

    @property
    def entry_max_chars(self) -> int:
        return int((self.data.get("entry") or {}).get("max_chars", 2000))

    def entry_cap(self, scope: str) -> int:
        spec = self.scopes.get(scope)
        if spec is not None and spec.entry_cap:
            return spec.entry_cap
        return self.entry_max_chars

    def entry_path(self, scope: str, entry_id: str) -> str:
        from ..model.entry import entry_path

        spec = self.scopes.get(scope)
        return entry_path(scope, entry_id, fanout=bool(spec and spec.fanout))

    def origin_rule(self, origin: str) -> dict[str, Any]:
        return dict((self.data.get("origins") or {}).get(origin) or {})

    @property
    def reviewers(self) -> list[str]:
        return list((self.data.get("review") or {}).get("reviewers") or [])

    @property
    def policy_owners(self) -> list[str]:
        return list((self.data.get("review") or {}).get("policy_owners") or [])

    def section(self, name: str) -> dict[str, Any]:
        return dict(self.data.get(name) or {})

    def schema(self, name: str) -> dict[str, Any]:
        """A JSON schema under policies/schemas/ (e.g. ``memory``), parsed once."""
        key = f"schema:{name}"
        if key not in self._cache:
            path = f"schemas/{name}.schema.json"
            raw = self.files.get(path)
            if raw is None:
                raise ParseError(f"schema {path} is missing", where=f"{POLICY_DIR}/{path}",
                                 hint="restore it from `memrepo init` defaults")
            try:
                self._cache[key] = json.loads(decode_utf8(raw, f"{POLICY_DIR}/{path}"))
            except json.JSONDecodeError as exc:
                raise ParseError(f"schema is not valid JSON: {exc.msg}", where=f"{POLICY_DIR}/{path}:{exc.lineno}",
                                 hint="fix the JSON") from None
        return self._cache[key]  # type: ignore[no-any-return]

    def validator(self, name: str) -> Any:
        key = f"validator:{name}"
        if key not in self._cache:
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import SchemaError

            schema = self.schema(name)
            try:
                if not isinstance(schema, dict):
                    raise SchemaError(f"a schema is a JSON object, not {type(schema).__name__}")
                Draft202012Validator.check_schema(schema)
            except SchemaError as exc:
                raise ParseError(f"schema is not a valid JSON schema: {exc.message}", where=f"{POLICY_DIR}/schemas/{name}.schema.json",
                                 hint="restore it from `memrepo init` defaults") from None
            self._cache[key] = Draft202012Validator(schema)
        return self._cache[key]

    def fast_valid(self, name: str) -> Callable[[Any], bool] | None:
        """A compiled check of schema ``name`` that is trusted only to say "valid" (see
        policy.fastschema); None if unavailable."""
        key = f"fast:{name}"
        if key not in self._cache:
            from .fastschema import fast_validator

            self._cache[key] = fast_validator(self.schema(name))
        return self._cache[key]  # type: ignore[no-any-return]

    def schema_errors(self, name: str, instance: Any) -> list[tuple[str, str]]:
        """(field path, message) for each schema error; the valid case skips importing jsonschema."""
        fast = self.fast_valid(name)
        if fast is not None and fast(instance):
            return []
        errors = sorted(self.validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [("/".join(str(p) for p in e.absolute_path), e.message) for e in errors]

    def scanner(self) -> Any:
        """The content scanner built from this policy's rule files (memrepo.detect)."""
        if "scanner" not in self._cache:
            from ..detect import Scanner

            self._cache["scanner"] = Scanner.from_policy_files(self.files)
        return self._cache["scanner"]


def load_policy(files: Mapping[str, bytes], source: str = "default") -> Policy:
    """Build a Policy from the files under policies/ (keys relative to policies/)."""
    where = f"{source}:{POLICY_DIR}/{POLICY_FILE}" if source != "default" else f"{POLICY_DIR}/{POLICY_FILE}"
    raw = files.get(POLICY_FILE)
    if raw is None:
        raise ParseError("policy file is missing", where=where, hint="restore policies/policy.yaml (see `memrepo init`)")
    data = _policy_data(raw, where)
    if not isinstance(data, dict):
        raise ParseError("policy is not a mapping", where=where, hint="write policy.yaml as 'key: value' sections")
    policy = Policy(data=data, files=dict(files), source=source)
    errors = policy.schema_errors("policy", data)
    if errors:
        loc, message = errors[0]
        raise ParseError(f"policy field {loc or '(top)'}: {message}", where=where,
                         hint="see policies/schemas/policy.schema.json for the allowed fields")
    return policy


def _policy_data(raw: bytes, where: str) -> Any:
    """policy.yaml parsed, through the on-disk cache keyed by its bytes (JSON data: a write
    needs no YAML parser once its policy has been read). A document JSON cannot hold exactly
    (non-string keys, say) is parsed each time."""
    import json

    from ..detect.cache import cached, content_key

    def build() -> dict[str, Any]:
        data = load_yaml(decode_utf8(raw, where), where)
        faithful = json.loads(json.dumps(data)) == data if isinstance(data, dict) else False
        return {"data": data if faithful else None}

    got = cached("policy", content_key("policy-yaml-1", [(POLICY_FILE, raw)]), build)["data"]
    return json.loads(json.dumps(got)) if got is not None else load_yaml(decode_utf8(raw, where), where)


def default_policy() -> Policy:
    from ..resources import default_policy_files

    return load_policy(default_policy_files())
