"""A fast "is it valid?" check for the write path, with jsonschema for the explanation.

Importing jsonschema costs ~90 ms, more than a whole write. fastjsonschema compiles a schema
to plain Python once; the generated module is cached on disk by the schema's hash, so a CLI
process only imports a small cached module (and `re`). When the fast check says "invalid",
or cannot be built, callers fall back to jsonschema (Draft 2020-12), which gives the messages
and remains the judge: the fast path is only trusted to say "valid", and a test checks the two
agree on generated inputs.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any, Callable

_STUB = (
    "class JsonSchemaValueException(ValueError):\n"
    "    def __init__(self, message, value=None, name=None, definition=None, rule=None):\n"
    "        super().__init__(message)\n"
    "JsonSchemaValuesException = JsonSchemaValueException\n"
)
_IMPORT_LINE = "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException"
_loaded: dict[str, Callable[[Any], bool] | None] = {}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memrepo" / "schemas"


def fast_validator(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """``is_valid(instance) -> bool`` compiled from ``schema``, or None when it can't be built."""
    key = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:24]
    if key not in _loaded:
        _loaded[key] = _load(key, schema)
    return _loaded[key]


def _load(key: str, schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    path = cache_dir() / f"schema_{key}.py"
    try:
        if not path.is_file():
            _generate(schema, path)
        spec = importlib.util.spec_from_file_location(f"_memrepo_schema_{key}", path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        funcs = [getattr(module, n) for n in dir(module) if n.startswith("validate")]
        validate = funcs[0] if len(funcs) == 1 else getattr(module, _main_name(schema), None)
    except Exception:  # noqa: BLE001 - any failure means: use jsonschema
        return None
    if validate is None:
        return None

    def is_valid(instance: Any) -> bool:
        try:
            validate(instance)
            return True
        except Exception:  # noqa: BLE001 - the stub exception, or a type error on odd input
            return False

    return is_valid


def _main_name(schema: dict[str, Any]) -> str:
    import re

    return "validate_" + re.sub(r"[^a-zA-Z0-9_]", "_", str(schema.get("$id", "")))


def _generate(schema: dict[str, Any], path: Path) -> None:
    import fastjsonschema

    body = dict(schema)
    body.pop("$schema", None)  # fastjsonschema knows drafts 4-7; the keywords used here mean the same
    code = fastjsonschema.compile_to_code(body)
    if _IMPORT_LINE not in code:
        raise ValueError("unexpected generated code")
    code = code.replace(_IMPORT_LINE, _STUB)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(code, encoding="utf-8")
    os.replace(tmp, path)
