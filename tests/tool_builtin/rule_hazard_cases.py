"""Issue 31's attacks as data: a work dir that delivers them, and commands that try them.

Each command may name `{M}` (the marker file, outside the work dir: creating it means the
attack ran), `{S}` (a secret under the fake `$HOME`), `{EVIL}` (a script in the work dir
that creates the marker) and `{LIST}` (a NUL-separated list naming the secret).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

SECRET = "SECRET-KEY-31"


@dataclass(frozen=True)
class Place:
    """A work dir laid out for the attacks, and what to look for afterwards."""

    work: Path
    home: Path
    marker: Path
    secret: Path

    def fill(self, command: str) -> str:
        return (
            command.replace("{M}", str(self.marker))
            .replace("{S}", str(self.secret))
            .replace("{EVIL}", "./evil.sh")
            .replace("{LIST}", "list0")
            .replace("{W}", str(self.work))
        )


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def make_place(base: Path, *, repo: bool) -> Place:
    """A work dir (a git repository if `repo`) with an embedded bare repo under `emb/`."""
    base = Path(os.path.realpath(base))
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = home / ".ssh" / "id_rsa"
    secret.write_text(SECRET + "\n")
    work = base / "work"
    work.mkdir()
    marker = base / "marker"
    (work / "a.txt").write_text("x\n")
    (work / "b.txt").write_text("y\n")
    evil = work / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    evil.chmod(0o755)
    (work / "list0").write_bytes(str(secret).encode() + b"\0")
    (work / "script.sed").write_text(f"1e touch {marker}\n")
    # A clone can deliver this: a bare repository whose config names a program.
    _git("init", "-q", "--bare", str(work / "emb"))
    for key, value in (
        ("core.bare", "false"),
        ("core.worktree", "."),
        ("core.fsmonitor", f"touch {marker}; false"),
    ):
        _git("-C", str(work / "emb"), "config", key, value)
    # ... and one with nothing in its config but hooks (run when pushed to, for one).
    _git("init", "-q", "--bare", str(work / "emb2"))
    for hook in ("pre-receive", "update"):
        path = work / "emb2" / "hooks" / hook
        path.write_text(f"#!/bin/sh\ntouch {marker}\n")
        path.chmod(0o755)
    if repo:  # one commit, then a change: `git diff` has something to show
        _git("init", "-q", str(work))
        _git("-C", str(work), "add", "a.txt")
        _git("-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
        (work / "a.txt").write_text("x\nchanged\n")
        _git("-C", str(work), "remote", "add", "hooked", "./emb2")
        _git("-C", str(work), "config", "push.default", "current")
        _git("-C", str(work), "config", "remote.pushDefault", "hooked")
    return Place(work=work, home=home, marker=marker, secret=secret)


def set_repo_config(place: Place, key: str, value: str) -> None:
    _git("-C", str(place.work), "config", key, value)


README_RULES = ["Bash(git diff:*)", "Bash(uv run pytest:*)"]
"""The allow rules of the README's example config."""

# (rule a user may hold, command) — every one must ask, run nothing, print no secret.
FURTHER: list[tuple[str, str]] = [
    # sed: `e`, the `e` flag, `w`/`W`, `s///w`, `r`/`R`, `-f`, `-i` outside
    *(
        ("Bash(sed:*)", c)
        for c in [
            "sed 's|x|touch {M}|e' a.txt",
            "sed -e 's,x,touch {M},e' a.txt",
            "sed --expression='1e touch {M}' a.txt",
            "sed --expr='1e touch {M}' a.txt",
            "sed -n '1e touch {M}' a.txt",
            "sed '$e touch {M}' a.txt",
            "sed '/x/e touch {M}' a.txt",
            "sed -E 's#(x)#touch {M}#e' a.txt",
            "sed -ne 's!x!touch {M}!ep' a.txt",
            "sed 's@x@touch {M}@e' a.txt",
            "sed 'y/a/b/;1e touch {M}' a.txt",
            "sed -n 'w {M}' a.txt",
            "sed 's/x/y/w {M}' a.txt",
            "sed 'W {M}' a.txt",
            "sed -s 'w {M}' a.txt",
            "sed -e p -e 'w {M}' a.txt",
            "sed -f script.sed a.txt",
            "sed --file=script.sed a.txt",
            "sed 'r {S}' a.txt",
            "sed 'R {S}' a.txt",
            "sed '1r {S}' a.txt",
            "sed -n p {S}",
            "sed 1e\\ touch\\ {M} a.txt",
            "sed -n -e '1{' -e 'e touch {M}' -e '}' a.txt",
        ]
    ),
    # sort: -o/--output (and abbreviations, clusters), --files0-from, -T, compress program
    *(
        ("Bash(sort:*)", c)
        for c in [
            "sort -o {M} a.txt",
            "sort --output={M} a.txt",
            "sort --outp={M} a.txt",
            "sort --output {M} a.txt",
            "sort -no {M} a.txt",
            "sort -o{M} a.txt",
            "sort -r -o {M} a.txt",
            "sort a.txt -o {M}",
            "sort -k1 -o {M} a.txt",
            "sort --files0-from={LIST}",
            "sort --files0={LIST}",
            "sort --files0-from {LIST}",
            "sort {S}",
            "sort --compress-program={EVIL} a.txt",
            "sort --compress={EVIL} a.txt",
            "sort --random-source={S} -R a.txt",
        ]
    ),
    # tar: the program-running options and abbreviations, remote archives, -C, -T
    *(
        ("Bash(tar:*)", c)
        for c in [
            "tar --rsh-command={EVIL} -cf localhost:x.tar a.txt",
            "tar --rsh-comm={EVIL} -cf localhost:x.tar a.txt",
            "tar --rsh-command {EVIL} -cf localhost:x.tar a.txt",
            "tar -I {EVIL} -cf x.tar a.txt",
            "tar cIf {EVIL} x.tar a.txt",
            "tar --use-compress-program={EVIL} -cf x.tar a.txt",
            "tar --use-comp={EVIL} -cf x.tar a.txt",
            "tar --checkpoint=1 --checkpoint-action=exec={EVIL} -cf x.tar a.txt",
            "tar --to-command={EVIL} -xf x.tar",
            "tar --info-script={EVIL} -cf x.tar a.txt",
            "tar --new-volume-script={EVIL} -cf x.tar a.txt",
            "tar -F {EVIL} -M -cf x.tar a.txt",
            "tar -cf {M} a.txt",
            "tar cf {M} a.txt",
            "tar -T {LIST} -cf x.tar",
            "tar --files-from={LIST} -cf x.tar",
            "tar -cf x.tar {S}",
            "tar --index-file={M} -cvf x.tar a.txt",
            "tar -P -xf x.tar",
            "tar --absolute-names -xf x.tar",
        ]
    ),
    # git diff-like --output, the embedded repo, -C, an outside or sensitive read
    *(
        (rule, c)
        for rule in ("Bash(git diff:*)", "Bash(git:*)")
        for c in [
            "git diff --output={M}",
            "git diff --outp={M}",
            "git diff --no-index --output={M} a.txt b.txt",
            "cd emb && git diff",
            "git -C emb diff",
            "git diff --no-index a.txt {S}",
            "git diff -O{S}",
        ]
    ),
    ("Bash(git log:*)", "git log -p --output={M}"),
    ("Bash(git push:*)", "git push ./emb2 HEAD:refs/heads/x"),
    ("Bash(git push:*)", "git push emb2 HEAD:refs/heads/x"),
    ("Bash(git:*)", "git push emb2 HEAD:refs/heads/x"),
    ("Bash(git push:*)", "git push file://{W}/emb2 HEAD:refs/heads/x"),
    ("Bash(git push:*)", "git push hooked HEAD:refs/heads/x"),
    ("Bash(git push:*)", "git push"),
    ("Bash(git log:*)", "cd emb2 && git log"),
    ("Bash(git show:*)", "git show --output={M}"),
    ("Bash(git status:*)", "cd emb && git status"),
    ("Bash(git format-patch:*)", "git format-patch -1 -o {M}"),
    # find, xargs, env, awk, rg, tree, uniq, checksum lists
    *(
        ("Bash(find:*)", c)
        for c in [
            "find . -name a.txt -exec touch {M} \\;",
            "find . -name a.txt -execdir touch {M} +",
            "find . -fprint {M}",
            "find . -fprintf {M} x",
            "find . -fls {M}",
            "find {S}",
            "find . -files0-from {LIST}",
        ]
    ),
    ("Bash(xargs:*)", "echo {M} | xargs touch"),
    ("Bash(env:*)", "env touch {M}"),
    ("Bash(env:*)", "env -S 'touch {M}'"),
    ("Bash(awk:*)", "awk 'BEGIN{system(\"touch {M}\")}'"),
    ("Bash(awk:*)", "awk 'BEGIN{print 1 > \"{M}\"}'"),
    ("Bash(rg:*)", "rg --pre {EVIL} x"),
    ("Bash(tree:*)", "tree -o {M}"),
    ("Bash(uniq:*)", "uniq a.txt {M}"),
    ("Bash(md5sum:*)", "md5sum -c {LIST}"),
    ("Bash(wc:*)", "wc --files0-from={LIST}"),
    ("Bash(cat:*)", "cat {S}"),
    ("Bash(head:*)", "head -c 100 {S}"),
]
