"""Sensitive paths: credentials, shell start-up files and other places that ask even for reads."""

from __future__ import annotations

import os
import re
from functools import lru_cache

__all__ = ["is_sensitive_path", "sensitive_token"]

# A directory with one of these names holds secrets wherever it is (lower-case).
_SENSITIVE_DIRS = frozenset(
    {".ssh", ".aws", ".gnupg", ".kube", ".azure", ".password-store", ".vault-token"}
)

# Consecutive path components (lower-case) → the token a rule must mention to name them.
_SENSITIVE_SEQUENCES: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".config", "gcloud"), "gcloud"),
    ((".config", "gh"), "gh"),
    ((".git", "config"), ".git"),
    ((".git", "hooks"), ".git"),
    # Where git also finds config and hooks: submodules' and worktrees' git dirs, the
    # per-worktree config, and `commondir`, which moves the config elsewhere.
    ((".git", "modules"), ".git"),
    ((".git", "worktrees"), ".git"),
    ((".git", "config.worktree"), ".git"),
    ((".git", "commondir"), ".git"),
    ((".docker", "config.json"), ".docker"),
    ((".local", "share", "keyrings"), "keyrings"),
)

# File names (lower-case, fnmatch-like) → token; the `.env` templates are not secrets.
_SENSITIVE_NAMES: tuple[tuple[str, str], ...] = (
    (r"\.env", ".env"),
    (r"\.env\..*", ".env"),
    (r"\.envrc", ".envrc"),
    (r".*\.pem", ".pem"),
    (r".*\.key", ".key"),
    (r".*\.p12", ".p12"),
    (r".*\.pfx", ".pfx"),
    (r".*\.kdbx", ".kdbx"),
    (r"id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\..*)?", "id_"),
    (r"\.netrc", ".netrc"),
    (r"\.npmrc", ".npmrc"),
    (r"\.pypirc", ".pypirc"),
    (r"\.pgpass", ".pgpass"),
    (r"\.my\.cnf", ".my.cnf"),
    (r"\.htpasswd", ".htpasswd"),
    (r"\.git-credentials", ".git-credentials"),
    (r"\.gitconfig", ".gitconfig"),
    (r"\.(bashrc|bash_profile|bash_login|bash_logout|profile)", "rc"),
    (r"\.(zshrc|zprofile|zshenv|zlogin|zlogout|kshrc|cshrc|tcshrc)", "rc"),
)
_NOT_SENSITIVE_NAMES = frozenset({".env.example", ".env.sample", ".env.template"})
_NAME_RE = re.compile("|".join(f"(?P<n{i}>{pat})" for i, (pat, _) in enumerate(_SENSITIVE_NAMES)))

# Absolute prefixes (lower-case) → token.
_SENSITIVE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("/etc/shadow", "shadow"),
    ("/etc/gshadow", "shadow"),
    ("/etc/sudoers", "sudoers"),
    ("/etc/ssh/", "ssh"),
    ("/proc/", "proc"),
)


def _token_of_name(name: str) -> str | None:
    if name in _NOT_SENSITIVE_NAMES:
        return None
    match = _NAME_RE.fullmatch(name)
    if match is None or match.lastgroup is None:
        return None
    token = _SENSITIVE_NAMES[int(match.lastgroup[1:])][1]
    # Shell start-up files are named by their own name (`.bashrc`), not by a shared token.
    return name if token == "rc" else token


def _component_regex() -> re.Pattern[str]:
    alternatives = [re.escape(d) for d in sorted(_SENSITIVE_DIRS)]
    alternatives += ["/".join(re.escape(p) for p in seq) for seq, _ in _SENSITIVE_SEQUENCES]
    return re.compile("(?:^|/)(" + "|".join(alternatives) + ")(?:/|$)")


_COMPONENT_RE = _component_regex()
_SEQUENCE_TOKENS = {"/".join(seq): token for seq, token in _SENSITIVE_SEQUENCES}


@lru_cache(maxsize=4096)
def _token_of(abs_path: str) -> str | None:
    # A pure function of the path string (no file system access), so it is memoised.
    # The most specific reason first: `/etc/ssh/x.key` is named by `.key`, not `/etc/ssh`.
    lowered = abs_path.lower()
    match = _COMPONENT_RE.search(lowered)
    if match is not None:
        found = match.group(1)
        return _SEQUENCE_TOKENS.get(found, found)
    token = _token_of_name(lowered.rsplit("/", 1)[-1])
    if token is not None:
        return token
    for prefix, token in _SENSITIVE_PREFIXES:
        if lowered.startswith(prefix) or lowered == prefix.rstrip("/"):
            return token
    return None


def sensitive_token(path: str, *, cwd: str | None = None) -> str | None:
    """Why a path is sensitive, as the token an allow rule must mention, or `None`.

    Both the path as written (after `~` and `..`) and its real path (symlinks resolved)
    are checked; the comparison ignores case so `~/.SSH` is caught on any file system.
    """
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd or os.getcwd(), expanded)
    token = _token_of(os.path.normpath(expanded))
    if token is not None:
        return token
    # The real path of the path as written: `link/../x` is beside the link's target, as
    # the kernel takes it, not `x` beside the link.
    return _token_of(os.path.realpath(expanded))


def is_sensitive_path(path: str) -> bool:
    """Whether a path holds secrets or start-up code, so using it always asks.

    Sensitive: `~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.kube`, `~/.config/gcloud`, `~/.config/gh`,
    `.env` and `.env.*` (not `.env.example`), key files (`*.pem`, `*.key`, `id_rsa*`),
    credential files (`.netrc`, `.npmrc`, `.pypirc`, `.git-credentials`, `.pgpass`),
    shell rc files, `.gitconfig`, `.git/config`, `.git/hooks` (and git's other config
    places: `.git/modules`, `.git/worktrees`, `config.worktree`, `commondir`), `/etc/shadow`,
    `/etc/sudoers`, `/etc/ssh` and `/proc`. Relative paths are taken from the
    process's current directory.

    Args:
        path: The path to check; `~` is expanded.

    Returns:
        True if reading or writing it must be confirmed.
    """
    return sensitive_token(path) is not None
