"""Machine-level facts for stack fingerprints, and checksums of model files and texts.

A capture is a valid fixed reference only for the exact hardware/software coordinate that produced
it, so every manifest carries a :class:`kldcard.schema.StackFingerprint`. The engine adapters add
what only they know (engine build, attention backend, dtypes, batch sizes, threads); this module
supplies what is common: OS, Python, CPU model, CUDA details, Apple chip family, library versions.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from kldcard import __version__, files
from kldcard.files import sha256_file

# Packages whose versions change the arithmetic of at least one engine.
TRACKED_PACKAGES = (
    "torch",
    "transformers",
    "accelerate",
    "flash-attn",
    "llama-cpp-python",
    "gguf",
    "mlx",
    "mlx-metal",
    "mlx-cpu",
    "mlx-lm",
    "numpy",
    "safetensors",
    "tokenizers",
)


def package_versions(names: tuple[str, ...] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of ``names`` (absent packages are left out)."""
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def os_string() -> str:
    """e.g. ``Linux-6.8.0-x86_64-with-glibc2.39`` or ``macOS-15.1-arm64-arm-64bit``."""
    return platform.platform()


def python_string() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


def cpu_model() -> str:
    """CPU model name: /proc/cpuinfo on Linux, sysctl on macOS, platform otherwise."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for key in ("model name", "Hardware", "Processor", "cpu model"):
        m = re.search(rf"^{key}\s*:\s*(.+)$", text, flags=re.MULTILINE)
        if m and m.group(1).strip():
            return m.group(1).strip()
    if sys.platform == "darwin":
        brand = _run(["sysctl", "-n", "machdep.cpu.brand_string"])
        if brand:
            return brand
    return platform.processor() or platform.machine() or "unknown"


def cpu_count() -> int:
    """CPUs this process may run on (affinity-aware where the OS tells)."""
    try:
        return len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def apple_chip_family() -> str | None:
    """e.g. ``Apple M2 Pro`` on Apple Silicon, else None."""
    if sys.platform != "darwin" or platform.machine() != "arm64":
        return None
    brand = _run(["sysctl", "-n", "machdep.cpu.brand_string"])
    return brand or "Apple Silicon"


def nvidia_driver_version() -> str | None:
    """The NVIDIA driver version from nvidia-smi (torch does not expose it)."""
    if shutil.which("nvidia-smi") is None:
        return None
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.splitlines()[0].strip() if out else None


def torch_cuda_details(device_index: int = 0) -> dict[str, Any]:
    """Device fields of a CUDA (or ROCm) torch device for :class:`StackFingerprint`."""
    import torch

    props = torch.cuda.get_device_properties(device_index)
    rocm = getattr(torch.version, "hip", None)
    return {
        "backend": "rocm" if rocm else "cuda",
        "device": props.name,
        "device_count": torch.cuda.device_count(),
        "sm_count": int(props.multi_processor_count),
        "compute_capability": f"{props.major}.{props.minor}",
        "driver_version": nvidia_driver_version() or "unknown",
        "cuda_version": str(rocm or torch.version.cuda or "unknown"),
    }


def machine_fields() -> dict[str, Any]:
    """Fields common to every engine's fingerprint (host, OS, Python, kldcard)."""
    return {
        "os": os_string(),
        "python": python_string(),
        "kldcard_version": __version__,
        "libraries": package_versions(),
    }


def cpu_device_fields() -> dict[str, Any]:
    return {"backend": "cpu", "device": cpu_model(), "device_count": 1, "chip_family": apple_chip_family()}


# ----------------------------------------------------------------------------------------------
# Checksums
# ----------------------------------------------------------------------------------------------


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_text_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of the text file ``path``; InputError (one line, exit 2) when missing or unreadable."""
    return files.read_bytes(path, "text file")


def read_text(path: str | os.PathLike) -> tuple[str, bytes]:
    """The evaluation text of ``path`` (UTF-8) and its bytes; InputError (one line, exit 2) when it is
    missing, unreadable or not UTF-8."""
    data = files.read_bytes(path, "text file")
    return files.decode_utf8(data, path, "text file"), data


def text_record(data: bytes, name: str) -> dict[str, Any]:
    """The manifest's ``text`` provenance: name, sha256 and size of the exact bytes read."""
    return {"name": name, "sha256": sha256_bytes(data), "n_bytes": len(data)}


# Files of a transformers/mlx directory that determine the logits or the token ids.
_MODEL_FILE_PATTERNS = ("*.safetensors", "*.bin", "*.json", "*.model", "*.txt", "*.tiktoken", "*.py")


def model_size(path: str | os.PathLike) -> dict | None:
    """Bytes and bits per weight of a GGUF file or a safetensors directory
    (:func:`kldcard.stack.model_size.model_size`); None when the files do not say."""
    from kldcard.stack.model_size import model_size as size

    try:
        return size(path)
    except (OSError, ValueError):
        return None  # the engine loaded it, so the size is a nice-to-have, never a reason to stop


def model_file_hashes(path: str | os.PathLike) -> dict[str, str]:
    """sha256 of a GGUF file, or of every weight/config/tokenizer file of a model directory
    (keys are paths relative to the directory, or the file name)."""
    p = Path(path)
    if p.is_file():
        return {p.name: sha256_file(p)}
    files: set[Path] = set()
    for pattern in _MODEL_FILE_PATTERNS:
        files.update(f for f in p.glob(pattern) if f.is_file())
    return {str(f.relative_to(p)): sha256_file(f) for f in sorted(files)}


def _run(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""
