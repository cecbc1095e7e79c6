"""Secrets through detect-secrets' vendor plugins (imported lazily: the package is heavy).

Only the regex-based plugins run (AWS, GitHub, Stripe, Slack, private keys, JWT, basic auth ...);
the entropy and keyword plugins flag hashes and prose too often for memory text, and the
public-IP plugin is not about secrets. Placeholder values ("sk-xxxx", "<token>", "${TOKEN}")
are skipped.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

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
_PRECHECK = {"TelegramBotTokenDetector": re.compile(r"\d{8,10}:"),
             "ArtifactoryDetector": re.compile(r"(?:AKC|AP[\dA-F])[a-zA-Z0-9]{8,}")}
# Every token these plugins find holds a run of 20+ token characters; one cheap search skips them all.
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_+/=.:-]{20,}")
_NO_LONG_TOKEN_NEEDED = {"BasicAuthDetector", "PrivateKeyDetector", "ArtifactoryDetector"}


@lru_cache(maxsize=1)
def _plugins() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """(secret type, plugin class name, one combined regex) per plugin."""
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
            out.append((secret_type, cls.__name__, re.compile("|".join(f"(?:{rx.pattern})" for rx in denylist))))
    return tuple(out)


def find_secrets(text: str) -> Iterator[tuple[str, str, re.Match[str]]]:
    """Yield (secret type, plugin name, match) for each plugin that finds a value in ``text``.

    detect-secrets is imported only when some plugin's cheap prefilter passes: most memory text
    holds no 20-character token and none of the few literals the other plugins need."""
    lowered = text.lower()
    long_token = _LONG_TOKEN.search(text) is not None
    wanted = {name for name in _NEEDLES if _prefilter(name, text, lowered, long_token)}
    if not wanted and not long_token:
        return
    for secret_type, name, rx in _plugins():
        if name in _NEEDLES and name not in wanted or name not in _NEEDLES and not long_token:
            continue
        m = rx.search(text)
        if m:
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
