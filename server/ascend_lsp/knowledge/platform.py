"""mappings/platform/: packaging facts and argument-level limits, loaded once (the chips: chips.py)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .files import mappings_root, read_table


@dataclass(frozen=True, slots=True)
class Platform:
    pairing: tuple[dict, ...]  # torch-npu release → the torch it requires
    packages: tuple[dict, ...]
    indexes: tuple[dict, ...]
    images: tuple[dict, ...]
    arguments: dict[str, list[dict]] = field(default_factory=dict)  # API → its unsupported arguments
    fallbacks: dict[str, list[dict]] = field(default_factory=dict)  # API → known CPU fallbacks / slow paths
    autoload: tuple[dict, ...] = ()  # torch-npu wheels checked for the `torch.backends` entry point
    cann_images: tuple[dict, ...] = ()  # the CANN base image for each chip
    cuda_paths: tuple[dict, ...] = ()  # variables that point at the CUDA toolkit's folder
    origin: str = "mappings/platform/"

    def autoloaded(self, torch_npu: str) -> dict | None:
        """The checked wheel at or below `torch_npu` that shows whether `import torch` loads
        torch_npu, if it does; None when it does not or nothing is known."""
        def key(version: str) -> tuple[int, ...]:
            return tuple(int(p) for p in version.split(".")[:3] if p.isdigit())

        known = [row for row in self.autoload if key(row["torch-npu"]) <= key(torch_npu)]
        newest = max(known, key=lambda row: key(row["torch-npu"]), default=None)
        return newest if newest is not None and newest["autoload"] else None

    def cann_image(self, chip: str) -> dict | None:
        """The CANN base image row for `chip` (A2, A3), or None when the table names none."""
        return next((row for row in self.cann_images if row["chip"] == chip), None)

    def torch_for(self, torch_npu: str) -> dict | None:
        """The pairing row of a torch-npu release, or None when the registry has none."""
        return next((row for row in self.pairing if row["torch-npu"] == torch_npu), None)

    def torch_versions(self) -> frozenset[str]:
        return frozenset(row["torch"] for row in self.pairing)

    def package(self, name: str) -> dict | None:
        for row in self.packages:
            if row.get("prefix"):
                if name.startswith(row["name"]) and (not row.get("suffix") or name.endswith(tuple(row["suffix"]))):
                    return row
            elif name == row["name"]:
                return row
        return None


@functools.lru_cache(maxsize=8)
def load_platform(torch_npu_version: str) -> Platform:
    root = mappings_root() / "platform"
    packaging = read_table(root / "packaging.toml")
    arguments: dict[str, list[dict]] = {}
    limits = root / f"arguments-{torch_npu_version}.toml"
    if limits.is_file():
        for row in read_table(limits).get("argument", ()):
            arguments.setdefault(row["api"], []).append(row)
    fallbacks: dict[str, list[dict]] = {}
    for row in read_table(root / "fallback.toml").get("fallback", ()):
        fallbacks.setdefault(row["api"], []).append(row)
    return Platform(tuple(packaging.get("pairing", ())), tuple(packaging.get("package", ())),
                    tuple(packaging.get("index", ())), tuple(packaging.get("image", ())), arguments,
                    fallbacks, tuple(packaging.get("autoload", ())), tuple(packaging.get("cann-image", ())),
                    tuple(packaging.get("cuda-path", ())))


@dataclass(frozen=True, slots=True)
class Configs:
    """mappings/platform/configs.toml: how a YAML or JSON file is recognised as a framework's
    config, the settings that differ on the NPU, and docker run's NVIDIA options."""

    frameworks: tuple[dict, ...]
    settings: tuple[dict, ...]
    docker_options: tuple[dict, ...]
    markers: frozenset[str]  # every key a framework row needs: a file naming none is no config

    def recognise(self, keys: frozenset[str]) -> frozenset[str]:
        """The frameworks whose rows the top-level `keys` match."""
        return frozenset(row["name"] for row in self.frameworks
                         if keys.issuperset(row["all"]) and (not row.get("any") or keys.intersection(row["any"])))

    def pinned_failure(self, key: str, value: str) -> dict | None:
        """The first setting row naming the releases of a pinned package (`pin`, `broken`) where
        `key` set to `value` fails: what the same setting in a Python call is judged by (NPU307)."""
        return next((row for row in self.settings if row.get("pin") and row["key"] == key and value in row["values"]),
                    None)


@functools.cache
def load_configs() -> Configs:
    data = read_table(mappings_root() / "platform" / "configs.toml")
    frameworks = tuple(data.get("framework", ()))
    return Configs(frameworks, tuple(data.get("setting", ())), tuple(data.get("docker-option", ())),
                   frozenset(key for row in frameworks for key in row["all"]))
