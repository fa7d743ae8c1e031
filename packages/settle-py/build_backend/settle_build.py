"""The build backend of settle-client (PEP 517, with PEP 660 editable installs), standard library only.

`pip install ./packages/settle-py` and `pip wheel ./packages/settle-py` must work offline, in a fresh
virtual environment that has pip but neither `wheel` nor a recent setuptools (and no index to fetch
them from). A pure-Python package with no compiled parts needs none of that: its wheel is a zip of its
modules and three metadata files, which this backend writes from `pyproject.toml`'s [project] table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "settle_client"
SOURCE = ROOT / "src" / PACKAGE


def _project() -> Dict[str, Any]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11+

        return dict(tomllib.loads(text)["project"])
    except ImportError:  # Python 3.9 and 3.10: the few simple keys this backend reads
        table = text.split("[project]", 1)[1].split("\n[", 1)[0]
        found: Dict[str, Any] = {}
        for key in ("name", "version", "description", "readme", "requires-python"):
            match = re.search(rf'^{re.escape(key)}\s*=\s*"([^"]*)"', table, re.M)
            if match:
                found[key] = match.group(1)
        licence = re.search(r'^license\s*=\s*\{\s*text\s*=\s*"([^"]*)"', table, re.M)
        if licence:
            found["license"] = {"text": licence.group(1)}
        classifiers = re.search(r"^classifiers\s*=\s*\[(.*?)\]", table, re.M | re.S)
        found["classifiers"] = re.findall(r'"([^"]+)"', classifiers.group(1)) if classifiers else []
        return found


def _names() -> tuple:
    project = _project()
    return project["name"].replace("-", "_"), project["version"]


def _metadata() -> str:
    project = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
    ]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    licence = project.get("license")
    if isinstance(licence, dict) and "text" in licence:
        lines.append(f"License: {licence['text']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    readme = project.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n"


def _wheel_file(tag: str = "py3-none-any") -> str:
    return f"Wheel-Version: 1.0\nGenerator: settle_build\nRoot-Is-Purelib: true\nTag: {tag}\n"


def _modules() -> List[Path]:
    return sorted(
        p for p in SOURCE.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def _write_wheel(directory: str, files: Dict[str, bytes]) -> str:
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{dist_info}/METADATA": _metadata().encode(),
        f"{dist_info}/WHEEL": _wheel_file().encode(),
        f"{dist_info}/top_level.txt": f"{PACKAGE}\n".encode(),
        f"{dist_info}/LICENSE": _licence_text().encode(),
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return filename


def _licence_text() -> str:
    for candidate in (ROOT / "LICENSE", ROOT.parent.parent / "LICENSE"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return "Apache License, Version 2.0: https://www.apache.org/licenses/LICENSE-2.0\n"


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    name, version = _names()
    dist_info = Path(metadata_directory) / f"{name}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata(), encoding="utf-8")
    (dist_info / "WHEEL").write_text(_wheel_file(), encoding="utf-8")
    return dist_info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(
    wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None
) -> str:
    files = {f"{PACKAGE}/{p.relative_to(SOURCE).as_posix()}": p.read_bytes() for p in _modules()}
    return _write_wheel(wheel_directory, files)


def build_editable(
    wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None
) -> str:
    # A path file: the installed package is this checkout's src/, so edits apply without reinstalling.
    return _write_wheel(wheel_directory, {"settle_client.pth": f"{ROOT / 'src'}\n".encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    name, version = _names()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as sdist:
        paths = [ROOT / "pyproject.toml", ROOT / "README.md", *(ROOT / "build_backend").glob("*.py"), *_modules()]
        for path in paths:
            sdist.add(path, arcname=f"{base}/{path.relative_to(ROOT).as_posix()}")
        info = _metadata().encode()
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size = len(info)
        sdist.addfile(entry, io.BytesIO(info))
    return filename
