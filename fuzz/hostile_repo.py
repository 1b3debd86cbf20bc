"""A campaign of hostile repositories against `lsp-check` and the language server.

    python fuzz/hostile_repo.py [--repos 40] [--minutes 10] [--seed 0] [--no-server]

Each repository is built from a random mix of ingredients an attacker (or an unlucky user)
can commit: the cache folder, its `.gitignore` or its files as symlinks out of the tree,
corrupt cache files, a cache file that is a FIFO or a link to `/dev/zero`, symlinks planted
at the names of the next temporary files, sources that are symlinks (in and out of the
tree), FIFOs and device nodes named `*.py`, read-only, hard-linked and mixed-line-ending
sources, undecodable and oversized files, code nested too deeply for any parser, a
`.git/config` whose keys name commands, and a `docs-url` that is a `command:` URI.

Every repository sits in a world folder beside an `outside/` folder of victims. It is then
opened in a real language server (unless --no-server: workspace diagnostics, pulls, code
lenses and the port action on every document, huge ones included), then checked, checked
again (from the cache), fixed, fixed unsafely, given noqa comments and ported, each by a
real `lsp-check` process. After each step the campaign checks that:

- nothing outside the repository changed: every victim keeps its type, bytes, mode and
  mtime, and no new file appears in the world folder;
- no command from the repository ran (the marker files its commands would create are absent);
- every process ended in time, with exit 0, 1 or 2, no traceback and a reason for an exit 2;
  the server answered every request and is still alive;
- nothing of the repository was lost: device nodes and FIFOs are still what they were, links
  are still links, read-only and hard-linked files are unchanged, and a fix of a file with
  mixed line endings changes no line it does not fix;
- no `command:` link reaches the output.

The figures are printed as JSON; the exit status is 1 if any check failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import marshal
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fuzz.lsp_stdio import LspProcess, ServerGone  # noqa: E402

LSP_CHECK = [sys.executable, "-m", "ascend_lsp.cli.main"]
CUDA = b"import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"
MIXED = [b"import torch\r\n", b"x = torch.ones(1).cuda()\n", b"y = 1\r\n", b"z = 2\n", b"w = 3\r\n"]
UNTOUCHED = [MIXED[i] for i in (0, 2, 3, 4)]  # the lines no fix touches, in order, each with its own ending
GIT_KEYS = {  # configuration that names a command; `{marker}` is the file the command would create
    "core.fsmonitor": "touch {marker}; false",
    "core.sshCommand": "touch {marker}",
    "core.pager": "touch {marker}; cat",
    "core.askPass": "touch {marker}",
    "core.editor": "touch {marker}",
    "diff.external": "touch {marker}",
    "filter.evil.clean": "touch {marker}; cat",
    "filter.evil.smudge": "touch {marker}; cat",
    "filter.evil.process": "touch {marker}",
    "credential.helper": "!touch {marker}",
    "uploadpack.packObjectsHook": "touch {marker}",
    "core.hooksPath": "{hooks}",
}
DEEP = {  # each imports torch, so that the editor offers to port it
    "deep_minus.py": b"import torch\nx = " + b"-" * 100_000 + b"1\n",
    "deep_parens.py": b"import torch\nx = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n",
    "deep_plus.py": b"import torch\nx = " + b"(1+" * 990 + b"1" + b")" * 990 + b"\n",
}
ROOT = os.geteuid() == 0


# --- the world: victims outside, a repository inside -------------------------------------
def snapshot(folder: Path) -> dict[str, tuple]:
    """What each entry below `folder` is: type, mode, size, mtime and the bytes' hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            digest = ""
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(path)
            out[str(path.relative_to(folder))] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size,
                                                  st.st_mtime_ns, digest)
    return out


def make_outside(world: Path) -> Path:
    outside = world / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "victim.txt").write_bytes(b"keep me\n")
    (outside / "victim.py").write_bytes(CUDA)
    (outside / "dir" / "victim.txt").write_bytes(b"keep me too\n")
    return outside


class Repo:
    """One hostile repository; `kinds` says what went into it."""

    def __init__(self, world: Path, rng: random.Random, cache_names: list[str], every: int | None = None) -> None:
        self.world, self.rng = world, rng
        self.path = world / "repo"
        self.outside = world / "outside"
        self.kinds: list[str] = []
        self.markers: list[Path] = []
        self.expect: dict[str, bytes] = {}  # files that must keep these bytes
        self.keep_type: dict[str, int] = {}  # entries that must stay of this type
        self.failed: set[str] = set()  # what already failed here
        self.path.mkdir()
        (self.path / "train.py").write_bytes(CUDA)
        if every is not None:  # every ingredient, over three repositories
            ingredients = [name for name in INGREDIENTS if name in EVERY[every % len(EVERY)]]
        else:
            ingredients = [name for name in INGREDIENTS if rng.random() < INGREDIENTS[name][1]]
            if set(ingredients) & ALONE:
                ingredients = [rng.choice(sorted(set(ingredients) & ALONE))]
            if FOLDER_LINK in ingredients and set(ingredients) & IN_CACHE_FOLDER:  # a link, or a folder holding them
                drop = {FOLDER_LINK} if rng.random() < 0.5 else IN_CACHE_FOLDER
                ingredients = [name for name in ingredients if name not in drop]
        for name in ingredients or [rng.choice(list(INGREDIENTS))]:
            if INGREDIENTS[name][2] and not ROOT:
                continue
            self.kinds.append(name)
            INGREDIENTS[name][0](self, cache_names)

    def marker(self, name: str) -> Path:
        path = self.world / f"ran-{name}"
        self.markers.append(path)
        return path


def cache_folder_link(repo: Repo, _names) -> None:
    (repo.path / ".lsp-check-cache").symlink_to(repo.outside / "dir")


def cache_gitignore_link(repo: Repo, _names) -> None:
    (repo.path / ".lsp-check-cache").mkdir(exist_ok=True)
    (repo.path / ".lsp-check-cache" / ".gitignore").symlink_to(repo.outside / "victim.txt")


def cache_file_hostile(repo: Repo, names) -> None:
    folder = repo.path / ".lsp-check-cache"
    folder.mkdir(exist_ok=True)
    kind = repo.rng.choice(["link out", "dev zero", "fifo", "list", "code", "garbage", "truncated"])
    repo.kinds[-1] += f" ({kind})"
    for name in names:
        path = folder / name
        if path.exists() or path.is_symlink():
            continue
        if kind == "link out":
            path.symlink_to(repo.outside / "victim.txt")
        elif kind == "dev zero":
            path.symlink_to("/dev/zero")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "list":
            path.write_bytes(marshal.dumps([1]))
        elif kind == "code":
            path.write_bytes(marshal.dumps(compile("1", "<x>", "eval")))
        elif kind == "garbage":
            path.write_bytes(bytes(repo.rng.randrange(256) for _ in range(4096)))
        else:
            path.write_bytes(marshal.dumps({str(repo.path / "train.py"): (1, 2)})[:-3])


def temp_name_links(repo: Repo, names) -> None:
    """Links at the names temporary files had (`.NAME.lsp-check-PID.tmp` beside a fixed file,
    `CACHE.PID.tmp` in the cache folder) for the next few hundred process ids."""
    try:
        last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    except OSError:
        last = os.getpid()
    (repo.path / ".lsp-check-cache").mkdir(exist_ok=True)
    for pid in range(last + 1, last + 400):
        for link in [repo.path / f".train.py.lsp-check-{pid}.tmp",
                     *(repo.path / ".lsp-check-cache" / f"{Path(n).stem}.{pid}.tmp" for n in names)]:
            if not link.exists() and not link.is_symlink():
                link.symlink_to(repo.outside / "victim.txt")


def source_link_inside(repo: Repo, _names) -> None:
    (repo.path / "real").mkdir()
    (repo.path / "real" / "model.py").write_bytes(CUDA)
    (repo.path / "model_link.py").symlink_to(Path("real") / "model.py")
    repo.keep_type["model_link.py"] = stat.S_IFLNK


def source_link_outside(repo: Repo, _names) -> None:
    (repo.path / "outside_link.py").symlink_to(repo.outside / "victim.py")
    repo.keep_type["outside_link.py"] = stat.S_IFLNK


def fifo_source(repo: Repo, _names) -> None:
    os.mkfifo(repo.path / "pipe.py")
    repo.keep_type["pipe.py"] = stat.S_IFIFO


def device_source(repo: Repo, _names) -> None:
    os.mknod(repo.path / "null.py", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    repo.keep_type["null.py"] = stat.S_IFCHR


def read_only(repo: Repo, _names) -> None:
    path = repo.path / "frozen.py"
    path.write_bytes(CUDA)
    path.chmod(0o444)
    repo.expect["frozen.py"] = CUDA


def hard_link(repo: Repo, _names) -> None:
    (repo.path / "linked_a.py").write_bytes(CUDA)
    os.link(repo.path / "linked_a.py", repo.path / "linked_b.py")
    repo.keep_type["linked_b.py"] = stat.S_IFREG


def mixed_endings(repo: Repo, _names) -> None:
    (repo.path / "mixed.py").write_bytes(b"".join(MIXED))


def undecodable(repo: Repo, _names) -> None:
    (repo.path / "latin.py").write_bytes(b"x = '\xff\xfe caf\xe9'\ntorch.cuda.synchronize()\n")


def oversized(repo: Repo, _names) -> None:
    line = b"x = 1  # padding padding padding padding padding padding padding padding\n"
    (repo.path / "huge.py").write_bytes(CUDA + line * (33 * 2**20 // len(line) + 1))


def deep(repo: Repo, _names) -> None:
    for name in repo.rng.sample(sorted(DEEP), k=repo.rng.randint(1, len(DEEP))):
        (repo.path / name).write_bytes(DEEP[name])


def git_config(repo: Repo, _names) -> None:
    subprocess.run(["git", "init", "-q", str(repo.path)], check=True, env=_git_env())
    hooks = repo.path / ".hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-index-change", "pre-commit", "fsmonitor-watchman", "reference-transaction"):
        script = hooks / hook
        script.write_text(f"#!/bin/sh\ntouch {repo.marker('hook-' + hook)}\n")
        script.chmod(0o755)
    keys = repo.rng.sample(sorted(GIT_KEYS), k=repo.rng.randint(1, len(GIT_KEYS)))
    lines = []
    for key in keys:
        value = GIT_KEYS[key].format(marker=repo.marker(key.replace(".", "-")), hooks=hooks)
        section, _, name = key.rpartition(".")
        head, _, sub = section.partition(".")
        lines.append(f'[{head} "{sub}"]' if sub else f"[{head}]")
        lines.append(f"\t{name} = {json.dumps(value)}")
    with open(repo.path / ".git" / "config", "a", encoding="utf-8") as config:
        config.write("\n".join(lines) + "\n")
    (repo.path / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (repo.path / ".gitignore").write_text("ignored_*.py\n")
    (repo.path / "ignored_cuda.py").write_bytes(CUDA)
    repo.kinds[-1] += f" ({', '.join(keys)})"


def command_docs_url(repo: Repo, _names) -> None:
    (repo.path / "pyproject.toml").write_text('[tool.ascend-lsp]\ndocs-url = "command:workbench.action.terminal.new"\n')


INGREDIENTS = {  # name → (maker, probability, needs root)
    "cache folder is a link out": (cache_folder_link, 0.15, False),
    "cache .gitignore is a link out": (cache_gitignore_link, 0.15, False),
    "hostile cache file": (cache_file_hostile, 0.25, False),
    "links at temporary names": (temp_name_links, 0.15, False),
    "source linked inside": (source_link_inside, 0.25, False),
    "source linked outside": (source_link_outside, 0.25, False),
    "FIFO source": (fifo_source, 0.2, False),
    "device node source": (device_source, 0.15, True),
    "read-only source": (read_only, 0.2, False),
    "hard-linked source": (hard_link, 0.2, False),
    "mixed line endings": (mixed_endings, 0.25, False),
    "undecodable source": (undecodable, 0.2, False),
    "oversized source": (oversized, 0.08, False),
    "deep nesting": (deep, 0.2, False),
    "git config with commands": (git_config, 0.35, False),
    "command: docs-url": (command_docs_url, 0.1, False),
}
ALONE = {"command: docs-url"}  # a settings error: every run stops at it, so nothing else would be tried
FOLDER_LINK = "cache folder is a link out"
IN_CACHE_FOLDER = {"cache .gitignore is a link out", "hostile cache file", "links at temporary names"}
_REST = set(INGREDIENTS) - ALONE - IN_CACHE_FOLDER - {FOLDER_LINK}
EVERY = (_REST | IN_CACHE_FOLDER, _REST | {FOLDER_LINK}, ALONE)  # --every: what goes together


def _git_env() -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": tempfile.gettempdir()}


# --- the checks ----------------------------------------------------------------------------
class Campaign:
    def __init__(self, timeout: float, keep: Path) -> None:
        self.timeout = timeout
        self.keep = keep
        self.figures: Counter = Counter()
        self.failures: list[dict] = []

    def fail(self, repo: Repo, step: str, what: str) -> None:
        """Record a failure, once per repository: a file broken at one step stays broken."""
        if what in repo.failed:
            return
        repo.failed.add(what)
        self.figures["failures"] += 1
        self.failures.append({"step": step, "ingredients": repo.kinds, "what": what[:1500]})

    def lsp_check(self, repo: Repo, step: str, args: list[str]) -> subprocess.CompletedProcess | None:
        self.figures["lsp-check runs"] += 1
        started = time.monotonic()
        try:
            done = subprocess.run([*LSP_CHECK, *args], cwd=repo.path, capture_output=True, timeout=self.timeout,
                                  start_new_session=True, stdin=subprocess.DEVNULL,
                                  env={**os.environ, "NO_COLOR": "1"})
        except subprocess.TimeoutExpired:
            self.fail(repo, step, f"no exit within {self.timeout} s")
            return None
        self.figures["lsp-check seconds"] += time.monotonic() - started
        err = done.stderr.decode("utf-8", "replace")
        if "Traceback" in err or "internal error" in err:
            self.fail(repo, step, f"traceback: {err[-1500:]}")
        elif done.returncode not in (0, 1, 2):
            self.fail(repo, step, f"exit {done.returncode}: {err[-1500:]}")
        elif done.returncode == 2 and "error" not in err.lower():
            self.fail(repo, step, f"exit 2 without a reason: {err[-1500:]}")
        if b"command:" in done.stdout:
            self.fail(repo, step, "a command: link in the output")
        return done

    def invariants(self, repo: Repo, step: str, outside: dict, world: set[str]) -> None:
        self.figures["invariant checks"] += 1
        now = snapshot(repo.outside)
        if now != outside:
            changed = sorted(k for k in set(now) | set(outside) if now.get(k) != outside.get(k))
            self.fail(repo, step, f"changed outside the repository: {changed}")
        new = {p.name for p in repo.world.iterdir()} - world
        ran = [m.name for m in repo.markers if m.exists()]
        if ran:
            self.fail(repo, step, f"a command from the repository ran: {ran}")
        elif new:
            self.fail(repo, step, f"new files beside the repository: {sorted(new)}")
        for name, kind in repo.keep_type.items():
            try:
                mode = (repo.path / name).lstat().st_mode
            except OSError:
                self.fail(repo, step, f"{name} is gone")
                continue
            if stat.S_IFMT(mode) != kind:
                self.fail(repo, step, f"{name} is no longer a {stat.filemode(kind)[0]!r} entry but "
                                      f"{stat.filemode(mode)[0]!r}")
        for name, data in repo.expect.items():
            if (repo.path / name).read_bytes() != data:
                self.fail(repo, step, f"{name} was rewritten")
        if "hard-linked source" in repo.kinds:
            a, b = (repo.path / "linked_a.py").stat(), (repo.path / "linked_b.py").stat()
            if (a.st_ino, a.st_dev) != (b.st_ino, b.st_dev):
                self.fail(repo, step, "the hard link was broken")
        mixed = repo.path / "mixed.py"
        if "mixed line endings" in repo.kinds:
            lines = iter(mixed.read_bytes().splitlines(keepends=True))
            if not all(any(line == untouched for line in lines) for untouched in UNTOUCHED):
                self.fail(repo, step, f"lines without a fix changed: {mixed.read_bytes()[:200]!r}")

    def repository(self, world: Path, rng: random.Random, cache_names: list[str], server: bool,
                   every: int | None = None) -> None:
        outside_folder = make_outside(world)
        repo = Repo(world, rng, cache_names, every)
        self.figures["repositories"] += 1
        for kind in repo.kinds:
            self.figures[f"ingredient: {kind.split(' (')[0]}"] += 1
        outside = snapshot(outside_folder)
        names = {p.name for p in world.iterdir()}
        steps = [("check", [str(repo.path), "--output-format", "json"]),
                 ("check from the cache", [str(repo.path), "--output-format", "sarif"]),
                 ("fix", [str(repo.path), "--fix"]),
                 ("unsafe fix", [str(repo.path), "--fix", "--unsafe-fixes"]),
                 ("add noqa", [str(repo.path), "--add-noqa", "--no-cache"])]
        for name in DEEP:
            if (repo.path / name).exists():
                steps.append((f"port {name}", ["port", str(repo.path / name), "-o", str(repo.path / f"out_{name}")]))
        if "device node source" in repo.kinds:
            steps.append(("port onto a device node", ["port", str(repo.path / "train.py"), "-o",
                                                     str(repo.path / "null.py")]))
        if "FIFO source" in repo.kinds:
            steps.append(("port a FIFO", ["port", str(repo.path / "pipe.py"), "-o", str(repo.path / "out.py")]))
        if server:  # first: the fixes below leave no finding, so no link, to look at
            self.server(repo, outside, names)
        for step, args in steps:
            self.lsp_check(repo, step, args)
            self.invariants(repo, step, outside, names)

    def server(self, repo: Repo, outside: dict, names: set[str]) -> None:
        self.figures["server sessions"] += 1
        lsp = LspProcess(str(repo.path))
        try:
            lsp.initialize(repo.path.as_uri(), create_files=True)
            answer = lsp.request("workspace/diagnostic", {"previousResultIds": []}, timeout=self.timeout)
            self.figures["server requests"] += 1
            if "error" in answer:
                self.fail(repo, "server workspace/diagnostic", json.dumps(answer["error"]))
            if "command:" in json.dumps(answer):
                self.fail(repo, "server workspace/diagnostic", "a command: link in a diagnostic")
            for path in sorted(repo.path.glob("*.py")):
                if not path.is_file() or path.stat().st_size > 64 * 2**20:
                    continue
                self.document(lsp, repo, path)
            self.figures["server requests"] += 1
            lsp.request("textDocument/hover", {"textDocument": {"uri": (repo.path / "train.py").as_uri()},
                                               "position": {"line": 1, "character": 20}}, timeout=self.timeout)
        except (ServerGone, TimeoutError) as exc:
            self.fail(repo, "server", f"{type(exc).__name__}: {exc}; stderr: "
                                      f"{b''.join(lsp.stderr)[-1500:].decode('utf-8', 'replace')}")
        finally:
            if lsp.close() is None:
                self.fail(repo, "server", "did not exit when asked")
        self.invariants(repo, "server", outside, names)

    def document(self, lsp: LspProcess, repo: Repo, path: Path) -> None:
        uri = path.as_uri()
        text = path.read_bytes().decode("utf-8", "replace")
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                             "text": text}})
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        for method, params in (("textDocument/diagnostic", {"textDocument": {"uri": uri}}),
                               ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
                               ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": whole, "context": {
                                   "diagnostics": [], "only": ["quickfix", "source", "refactor"]}})):
            self.figures["server requests"] += 1
            answer = lsp.request(method, params, timeout=self.timeout)
            if "error" in answer:
                self.fail(repo, f"server {method} on {path.name}", json.dumps(answer["error"]))
            elif "command:" in json.dumps(answer):
                self.fail(repo, f"server {method} on {path.name}", "a command: link in the answer")
        lsp.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def learn_cache_names(base: Path) -> list[str]:
    """The names a clean run gives the cache's files, so hostile ones can be planted there."""
    repo = base / "learn"
    repo.mkdir()
    (repo / "train.py").write_bytes(CUDA)
    subprocess.run([*LSP_CHECK, str(repo), "-q"], capture_output=True, timeout=120, cwd=base,
                   stdin=subprocess.DEVNULL)
    folder = repo / ".lsp-check-cache"
    names = sorted(p.name for p in folder.iterdir() if p.name != ".gitignore") if folder.is_dir() else []
    shutil.rmtree(repo)
    return names or ["cache.marshal"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=int, default=40, help="hostile repositories to build (default 40)")
    parser.add_argument("--minutes", type=float, default=10, help="stop after this long (default 10)")
    parser.add_argument("--timeout", type=float, default=90, help="seconds a step may take")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-server", action="store_true", help="lsp-check only")
    parser.add_argument("--every", action="store_true",
                        help="every ingredient: all that go together in each repository, in turn")
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failures"), help="where the failures' JSON goes")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    campaign = Campaign(args.timeout, args.keep)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        cache_names = learn_cache_names(Path(tmp))
        for index in range(args.repos):
            if time.monotonic() - started > args.minutes * 60:
                break
            world = Path(tmp) / f"world{index:04d}"
            world.mkdir()
            campaign.repository(world, rng, cache_names, not args.no_server, index if args.every else None)
            _remove(world)
            print(f"{index + 1} repositories, {round(time.monotonic() - started)} s, "
                  f"{len(campaign.failures)} failures", file=sys.stderr, flush=True)
    figures = {**campaign.figures, "seconds": round(time.monotonic() - started), "root": ROOT}
    figures["lsp-check seconds"] = round(figures.get("lsp-check seconds", 0), 1)
    figures.setdefault("failures", 0)
    report = {"figures": dict(sorted(figures.items())), "failures": campaign.failures}
    if campaign.failures:
        args.keep.mkdir(parents=True, exist_ok=True)
        (args.keep / f"hostile-repo-{args.seed}.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 1 if campaign.failures else 0


def _remove(world: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(world):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                try:
                    path.chmod(0o755 if path.is_dir() else 0o644)
                except OSError:
                    pass
    shutil.rmtree(world)


if __name__ == "__main__":
    raise SystemExit(main())
