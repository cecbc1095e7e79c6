"""Rule files: the format is validated on load; mistakes name file:line and what to fix."""
from __future__ import annotations

import pytest

from memrepo.detect import Scanner, default_scanner
from memrepo.errors import ParseError
from memrepo.resources import default_policy_files

GOOD = b"""version: 1
category: custom
vars:
  pet: "(?:cat|dog)"
rules:
  - id: custom.pet
    severity: warning
    message: mentions a pet
    patterns: ["\\\\bfeed the {pet}\\\\b"]
    unless: ["\\\\brobot\\\\b"]
"""


def _files(**extra: bytes) -> dict[str, bytes]:
    files = {k: v for k, v in default_policy_files().items() if not k.startswith("rules/")}
    files.update({f"rules/{k}.yaml": v for k, v in extra.items()})
    return files


def test_custom_rule_file_loads_and_matches() -> None:
    scanner = Scanner.from_policy_files(_files(custom=GOOD))
    [f] = scanner.scan_text("Remember to feed the cat at six.")
    assert (f.rule, f.severity, f.category) == ("custom.pet", "warning", "custom")
    assert scanner.scan_text("Feed the robot dog.") == []  # unless suppresses it


BEFORE = b"""version: 1
category: custom
rules:
  - id: custom.quiet
    severity: error
    message: keeps something quiet
    patterns: ["\\\\bdon't mention it\\\\b"]
    unless_before: ["\\\\bembargoed\\\\b"]
"""


def test_unless_before_reads_the_sentence_the_match_refers_back_to() -> None:
    scanner = Scanner.from_policy_files(_files(custom=BEFORE))
    assert scanner.scan_text("The launch date is embargoed. Don't mention it to clients.") == []
    assert scanner.scan_text("Don't mention it to clients; it is embargoed.") == []  # the match's own sentence too
    # two sentences back is out of reach, and so is the sentence after the match
    for text in ("The launch date is embargoed. It moved twice. Don't mention it to clients.",
                 "Don't mention it to clients. The launch date is embargoed.", "Don't mention it to clients."):
        assert [f.rule for f in scanner.scan_text(text)] == ["custom.quiet"], text


@pytest.mark.parametrize("body,message,line", [
    (b"version: 1\ncategory: x\nrules:\n  - id: x.a\n    severity: fatal\n    message: m\n    patterns: [a]\n", "severity", 5),
    (b"version: 1\ncategory: x\nrules:\n  - id: x.a\n    severity: error\n    message: m\n    patterns: ['(unclosed']\n", "regular expression", 0),
    (b"version: 1\ncategory: x\nrules:\n  - id: x.a\n    severity: error\n    message: m\n    patterns: ['{nope}']\n", "unknown variable", 0),
    (b"version: 1\ncategory: x\nrules:\n  - id: x.a\n    severity: error\n    message: m\n", "patterns", 4),
    (b"version: 1\ncategory: x\nbogus: 1\n", "bogus", 0),
    (b"version: 1\ncategory: x\nrules: [\n", "YAML", 0),
])
def test_bad_rule_file_is_a_parse_error(body: bytes, message: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        Scanner.from_policy_files(_files(bad=body))
    text = exc.value.render()
    assert "policies/rules/bad.yaml" in text and message in text and exc.value.hint
    if line:
        assert f"bad.yaml:{line}" in text


def test_duplicate_rule_id_is_an_error() -> None:
    with pytest.raises(ParseError, match="used twice"):
        Scanner.from_policy_files(_files(a=GOOD, b=GOOD))


def test_conflicting_variable_is_an_error() -> None:
    other = GOOD.replace(b"custom.pet", b"custom.other").replace(b"cat|dog", b"cow")
    with pytest.raises(ParseError, match="defined twice"):
        Scanner.from_policy_files(_files(a=GOOD, b=other))


def test_policy_scan_section_is_read() -> None:
    files = _files(custom=GOOD)
    files["policy.yaml"] = files["policy.yaml"].replace(b"max_entry_bytes: 65536", b"max_entry_bytes: 100")
    scanner = Scanner.from_policy_files(files)
    assert scanner.max_entry_bytes == 100
    assert scanner.skill_limits.blob_min_chars == 200
    assert scanner.skill_limits.max_file_bytes == 1048576  # skills.file_max_bytes


def test_bad_scan_section_is_a_parse_error() -> None:
    files = _files(custom=GOOD)
    files["policy.yaml"] = files["policy.yaml"].replace(b"max_entry_bytes: 65536", b"max_entry_bytes: lots")
    with pytest.raises(ParseError, match="max_entry_bytes"):
        Scanner.from_policy_files(files)


def test_default_scanner_is_cached_and_has_every_category() -> None:
    scanner = default_scanner()
    assert scanner is default_scanner()
    cats = {r.category for r in scanner.ruleset.rules}
    assert {"override", "role", "deception", "exfiltration", "persistence", "destructive", "remote-exec",
            "config-tampering", "secrets"} <= cats
    langs = {lang for r in scanner.ruleset.rules for lang in r.langs}
    assert {"en", "zh", "de", "fr", "es"} <= langs
    assert scanner.ruleset.features


def test_shipped_rule_files_validate_against_schema() -> None:
    import json

    import jsonschema
    import yaml

    files = default_policy_files()
    schema = json.loads(files["schemas/rules.schema.json"])
    names = [k for k in files if k.startswith("rules/")]
    assert len(names) >= 8
    for name in names:
        jsonschema.validate(yaml.safe_load(files[name]), schema)


def test_policy_yaml_validates_with_scan_keys() -> None:
    import json

    import jsonschema
    import yaml

    files = default_policy_files()
    jsonschema.validate(yaml.safe_load(files["policy.yaml"]), json.loads(files["schemas/policy.schema.json"]))
