"""Where the lab finds the repository, the flowtrack binary and NPF."""
import os
from pathlib import Path

from labkit import LabError

LAB_DIR = Path(__file__).resolve().parent.parent
ROOT = LAB_DIR.parent


def _from_env(var, default):
    path = Path(os.environ.get(var) or default)
    return path if path.is_absolute() else ROOT / path


def flowtrack_bin():
    """$FLOWTRACK_BIN, default build/flowtrack; a relative path is taken from the repository root."""
    path = _from_env("FLOWTRACK_BIN", "build/flowtrack")
    if not os.access(path, os.X_OK):
        raise LabError(f"no flowtrack binary at {path}: run 'make build', or set FLOWTRACK_BIN")
    return path


def npf_exe():
    """The virtualenv's npf, as a person runs it (the lab starts NPF in-process: labkit.npf_run)."""
    return ROOT / ".venv" / "bin" / "npf"
