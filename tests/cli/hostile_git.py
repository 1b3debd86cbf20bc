"""A git work tree whose `.git/config` names a command everywhere git reads one, each
command touching its own marker file outside the tree, and a `git` on PATH that logs
where it is run; shared by the CLI and server tests of untrusted repositories."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .conftest import git

CUDA = "import torch\nx = torch.ones(2).cuda()\n"
HOOKS = ("fsmonitor-watchman", "post-index-change", "post-checkout", "pre-commit", "reference-transaction",
         "pre-auto-gc", "post-rewrite")


def hostile_repository(root: Path, markers: Path) -> None:
    """`root` gets kept.py and ignored/hidden.py (ignored by its .gitignore), committed,
    then a configuration that would run `touch MARKERS/<key>` from every key that names a
    command."""
    markers.mkdir(parents=True, exist_ok=True)
    (root / "ignored").mkdir(parents=True)
    (root / "kept.py").write_text(CUDA)
    (root / "ignored" / "hidden.py").write_text(CUDA)
    (root / ".gitignore").write_text("ignored/\n")
    (root / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    hooks = root / ".git" / "evil-hooks"
    hooks.mkdir()
    for name in HOOKS:
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch '{markers}/hook-{name}'\n")
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)

    def touch(key: str) -> str:
        return f"touch '{markers}/{key}'"

    with open(root / ".git" / "config", "a") as config:
        config.write(f"""[core]
\tfsmonitor = "{touch('core.fsmonitor')}; false"
\tpager = "{touch('core.pager')}; cat"
\thooksPath = {hooks}
\tsshCommand = "{touch('core.sshCommand')}; false"
\tgitProxy = "{touch('core.gitProxy')}; false"
\teditor = "{touch('core.editor')}; false"
\taskPass = "{touch('core.askPass')}; false"
\talternateRefsCommand = "{touch('core.alternateRefsCommand')}; false"
\tuntrackedCache = true
[pager]
\tls-files = "{touch('pager.ls-files')}; cat"
\tcheck-ignore = "{touch('pager.check-ignore')}; cat"
[diff]
\texternal = "{touch('diff.external')}; false"
[diff "evil"]
\ttextconv = "{touch('diff.evil.textconv')}; cat"
[filter "evil"]
\tclean = "{touch('filter.evil.clean')}; cat"
\tsmudge = "{touch('filter.evil.smudge')}; cat"
\tprocess = "{touch('filter.evil.process')}; false"
[merge "evil"]
\tdriver = "{touch('merge.evil.driver')}; false"
[credential]
\thelper = "!{touch('credential.helper')}; false"
[protocol]
\tallow = always
[remote "origin"]
\turl = "ext::sh -c {touch('remote.ext').replace(' ', '% ')}"
\tuploadpack = "{touch('remote.uploadpack')}; false"
\tpromisor = true
[gc]
\tauto = 1
""")


def logging_git(bin_dir: Path, log: Path) -> dict[str, str]:
    """A `git` first on PATH that appends its working folder and arguments to `log`, then
    runs the real git; the environment to run under."""
    real = shutil.which("git")
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\t%s\\n" "$PWD" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
