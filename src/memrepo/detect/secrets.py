"""Secrets through detect-secrets' vendor plugins (their patterns come from the detect cache: the
package is imported only to build them, as importing it costs ~130 ms).

Only the regex-based plugins run (AWS, GitHub, Stripe, Slack, private keys, JWT, basic auth ...);
the entropy and keyword plugins flag hashes and prose too often for memory text, and the
public-IP plugin is not about secrets. Placeholder values ("sk-xxxx", "<token>", "${TOKEN}")
are skipped.
"""
from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from .normalise import token_runs
from .rxcache import compile_cached

_SKIP = {"IPPublicDetector", "Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector"}

# Cheap prefilters: a plugin's regex runs only when one of these substrings occurs (lower-cased
# text unless marked case-sensitive). Plugins not listed run when the text holds a long token.
_NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "AWSKeyDetector": (("akia", "asia", "a3t", "abia", "acca", "aws"), False),
    "ArtifactoryDetector": (("AKC", "AP"), True),
    "AzureStorageKeyDetector": (("accountkey",), False),
    "BasicAuthDetector": (("://",), False),
    "CloudantDetector": (("key", "pw", "pass", "token"), False),
    "DiscordBotTokenDetector": ((".",), False),
    "GitHubTokenDetector": (("gh",), False),
    "GitLabTokenDetector": (("gl", "gr1348941"), False),
    "IbmCosHmacDetector": (("key",), False),
    "IbmCloudIamDetector": (("key", "pw", "pass", "token"), False),
    "JwtTokenDetector": (("eyJ",), True),
    "MailchimpDetector": (("-us",), False),
    "NpmDetector": (("_authtoken",), False),
    "OpenAIDetector": (("T3BlbkFJ",), True),
    "PrivateKeyDetector": (("PRIVATE", "PuTTY"), True),
    "PypiTokenDetector": (("pypi-",), False),
    "SendGridDetector": (("SG.",), True),
    "SlackDetector": (("xox", "hooks.slack"), False),
    "SoftlayerDetector": (("key", "pw", "pass", "token"), False),
    "SquareOAuthDetector": (("sq0csp",), False),
    "StripeDetector": (("k_live_",), False),
    "TelegramBotTokenDetector": ((":",), False),
    "TwilioKeyDetector": (("AC", "SK"), True),
}
# Plugins whose needles are too common get an exact-enough precheck (cheaper than importing them).
_PRECHECK = {"TelegramBotTokenDetector": compile_cached(r"\d{8,10}:"),
             "ArtifactoryDetector": compile_cached(r"(?:AKC|AP[\dA-F])[a-zA-Z0-9]{8,}")}
# Every token these plugins find holds a run of 20+ token characters (letters, digits, "_+/=.:-":
# normalise.token_runs, which the decoders share); without one they are all skipped.
LONG_TOKEN = 20
_NO_LONG_TOKEN_NEEDED = {"BasicAuthDetector", "PrivateKeyDetector", "ArtifactoryDetector"}
# A key header alone names a format ("look for -----BEGIN PRIVATE KEY-----"); a key has material after it
# (PEM headers such as "Proc-Type: 4,ENCRYPTED" may come first).
_NEEDS_BODY = {"PrivateKeyDetector"}
_KEY_BODY = compile_cached(r"[^\n]{0,40}\s*(?:[\w-]+: [^\n]*\s*)*[A-Za-z0-9+/=]{24,}")


@lru_cache(maxsize=1)
def _plugins() -> tuple[tuple[str, str, str], ...]:
    """(secret type, plugin class name, combined regex source) per plugin, from the detect cache
    (keyed by the contents of detect-secrets' plugin files) when it holds them: importing
    detect-secrets pulls in requests and urllib3, ~130 ms of every process that needs a plugin."""
    from .cache import cached

    key = _plugins_key()
    got = cached("secret-plugins", key, _build_plugin_sources) if key else None
    if not (isinstance(got, list) and all(isinstance(x, (list, tuple)) and len(x) == 3 and all(isinstance(v, str) for v in x) for x in got)):
        return tuple(_build_plugin_sources())  # no cache, or a damaged entry: from the plugins themselves
    return tuple((t, n, src) for t, n, src in got)


def _plugins_key() -> str | None:
    """A hash of the installed detect-secrets' plugin code (found without importing it); None when
    it cannot be read."""
    import importlib.util

    from .cache import content_key

    try:
        spec = importlib.util.find_spec("detect_secrets")
        root = next(iter(spec.submodule_search_locations or ())) if spec else None
        if root is None:
            return None
        names = ["__version__.py", "core/plugins/util.py",
                 *(f"plugins/{n}" for n in sorted(os.listdir(os.path.join(root, "plugins"))) if n.endswith(".py"))]
        parts = []
        for name in names:
            with open(os.path.join(root, name), "rb") as fh:
                parts.append((name, fh.read()))
    except (OSError, ImportError, ValueError):
        return None
    return content_key(f"secret-plugins-{PLUGINS_VERSION}", parts)


PLUGINS_VERSION = 1  # bump when _build_plugin_sources changes what it makes of the plugins


def _build_plugin_sources() -> list[tuple[str, str, str]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    out = []
    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    for secret_type, cls in sorted(mapping.items()):
        if cls.__name__ in _SKIP or not hasattr(cls, "denylist"):
            continue
        try:
            denylist = list(cls().denylist)
        except Exception:  # noqa: BLE001,S112 - a plugin that cannot be built is skipped, not fatal
            continue
        if denylist:
            out.append((secret_type, cls.__name__, "|".join(map(_scoped, denylist))))
    return out


def _scoped(rx: re.Pattern[str]) -> str:
    """``rx`` as a group of an alternation, its own flags kept: several plugins' regexes are
    case-insensitive (AWS, Cloudant, IBM, Slack, SoftLayer), one is verbose."""
    letters = "".join(c for flag, c in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))
                      if rx.flags & flag)
    return f"(?{letters}:{rx.pattern})"


def find_secrets(text: str) -> Iterator[tuple[str, str, re.Match[str]]]:
    """Yield (secret type, plugin name, match) for each plugin that finds a value in ``text``.

    The plugins' patterns are read only when some plugin's cheap prefilter passes: most memory text
    holds no 20-character token and none of the few literals the other plugins need."""
    lowered = text.lower()
    long_token = any(b - a >= LONG_TOKEN for a, b in token_runs(text))
    candidates = _NEEDLES if long_token else _NO_LONG_TOKEN_NEEDED  # the others need a long token
    wanted = {name for name in candidates if _prefilter(name, text, lowered, long_token)}
    if not wanted and not long_token:
        return
    for secret_type, name, source in _plugins():
        if name in _NEEDLES and name not in wanted or name not in _NEEDLES and not long_token:
            continue
        m = compile_cached(source).search(text)  # on first use: a text wants a few of the 23 plugins
        if m and (name not in _NEEDS_BODY or _KEY_BODY.match(text, m.end())):
            yield secret_type, name, m


def _prefilter(name: str, text: str, lowered: str, long_token: bool) -> bool:
    if not long_token and name not in _NO_LONG_TOKEN_NEEDED:
        return False
    needles, case_sensitive = _NEEDLES[name]
    hay = text if case_sensitive else lowered
    if needles and not any(n in hay for n in needles):
        return False
    pre = _PRECHECK.get(name)
    return pre is None or pre.search(text) is not None


MIN_SECRET_GROUP = 8  # a shorter group is a prefix or a key name (detect-secrets' GitHub plugin captures "ghp"), not the value


def secret_value(m: re.Match[str]) -> str:
    """The captured secret (last non-empty group of a plausible length) or the whole match."""
    groups = [g for g in m.groups() if g]
    return groups[-1] if groups and len(groups[-1]) >= MIN_SECRET_GROUP else m.group(0)


def mask(value: str) -> str:
    return value[:4] + "…" + f"({len(value)} chars)" if len(value) > 6 else "…"


# Payment card numbers published for testing (card networks' and processors' documentation).
_TEST_CARDS = frozenset({
    "4111111111111111", "4242424242424242", "4012888888881881", "4000056655665556", "4222222222222",
    "5555555555554444", "5105105105105100", "5200828282828210", "2223003122003222",
    "378282246310005", "371449635398431", "378734493671000", "6011111111111117", "6011000990139424",
    "3530111333300000", "3566002020360505", "30569309025904", "38520000023237", "6200000000000005"})


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def card_number_ok(value: str) -> bool:
    """Shaped like a payment card number: 13-19 digits, not a published test number, not one or
    two digits repeated (0000 0000 0000 0000)."""
    digits = _digits(value)
    return 13 <= len(digits) <= 19 and digits not in _TEST_CARDS and len(set(digits)) >= 3


def luhn_ok(value: str) -> bool:
    """A payment card number (see :func:`card_number_ok`) whose last digit is its Luhn check digit."""
    if not card_number_ok(value):
        return False
    digits = _digits(value)
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_resident_id_ok(value: str) -> bool:
    """A PRC resident identity number: 17 digits and an ISO 7064 MOD 11-2 check character."""
    raw = "".join(c for c in value.upper() if c.isdigit() or c == "X")
    if len(raw) != 18 or not raw[:17].isdigit():
        return False
    check = "10X98765432"[sum(int(c) * w for c, w in zip(raw[:17], _CN_ID_WEIGHTS, strict=True)) % 11]
    return raw[17] == check


_PLACEHOLDER_PASSWORDS = frozenset({"password", "passwd", "secret", "changeme", "example", "pass123", "password123"})


def basic_auth_ok(value: str) -> bool:
    """An HTTP Basic credential: base64 of ``user:password`` with a password of 6+ characters that
    is not a placeholder word (``dXNlcjpwYXNzd29yZA==`` is ``user:password``, documentation's example)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    return (bool(sep) and bool(user) and len(password) >= 6 and decoded.isprintable()
            and password.lower() not in _PLACEHOLDER_PASSWORDS)


VALIDATORS = {"luhn": luhn_ok, "card-number": card_number_ok, "cn-resident-id": cn_resident_id_ok, "basic-auth": basic_auth_ok}
